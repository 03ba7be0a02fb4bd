package packer

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTemporaryResourceGroupIsFollowed: the Runner reports the resource
// group an azure-arm build creates as soon as packer says so (not one it
// reuses), and whether packer's cleanup deleted it (or started to,
// without waiting); a build killed before its cleanup leaves it undeleted.
func TestTemporaryResourceGroupIsFollowed(t *testing.T) {
	const rg = "packer-Resource-Group-k3v9x2m1qa"
	for _, tc := range []struct {
		name, mode, rgMode string
		created, deleted   bool
	}{
		{"created and deleted", "vhd", "", true, true},
		{"deleted after a failure", "fail", "", true, true},
		{"deleted without waiting", "managed", "async", true, true},
		{"an existing group", "vhd", "existing", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, tc.mode, "FAKE_PACKER_RG="+tc.rgMode)
			var mu sync.Mutex
			var seen []string
			res, _ := f.runner.Build(context.Background(), BuildRequest{
				TemplatePath: azureVHDTemplate, Vars: azureVars(), Only: []string{"azure-arm"},
				OnTemporaryResourceGroup: func(build, group string) {
					mu.Lock()
					defer mu.Unlock()
					seen = append(seen, build+" "+group)
				},
			})
			require.NotNil(t, res)
			require.Len(t, res.Builds, 1)
			b := res.Builds[0]
			assert.Equal(t, rg, b.BuildResourceGroup)
			if tc.created {
				assert.Equal(t, []string{"azure-arm " + rg}, seen, "reported once, while the build ran")
				assert.Equal(t, rg, b.TemporaryResourceGroup)
			} else {
				assert.Empty(t, seen, "packer never deletes a group it did not create")
				assert.Empty(t, b.TemporaryResourceGroup)
			}
			assert.Equal(t, tc.deleted, b.TemporaryResourceGroupDeleted)
		})
	}

	// Killed in the middle: reported, not deleted.
	f := newFake(t, "hang-ignore-int")
	f.runner.KillGrace = 200 * time.Millisecond
	var seen []string
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *Result, 1)
	go func() {
		res, _ := f.runner.Build(ctx, BuildRequest{TemplatePath: azureVHDTemplate, Vars: azureVars(),
			OnTemporaryResourceGroup: func(build, group string) { seen = append(seen, group); cancel() }})
		done <- res
	}()
	res := <-done
	require.NotNil(t, res)
	assert.Equal(t, []string{rg}, seen)
	require.Len(t, res.Builds, 1)
	assert.Equal(t, rg, res.Builds[0].TemporaryResourceGroup)
	assert.False(t, res.Builds[0].TemporaryResourceGroupDeleted, "packer was killed before its cleanup")
}
