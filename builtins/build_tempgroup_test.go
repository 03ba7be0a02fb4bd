package builtins_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/internal/testutil"
	"github.com/imgflow/imgflow/packer"
)

// killedAfterGroup runs a build that is cancelled, and killed after a
// short grace, as soon as packer says it created its resource group: the
// fate of a build whose imgflow is stopped for good.
type killedAfterGroup struct{ runner *packer.Runner }

func (k killedAfterGroup) Build(ctx context.Context, req packer.BuildRequest) (*packer.Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	note := req.OnTemporaryResourceGroup
	req.OnTemporaryResourceGroup = func(build, group string) {
		note(build, group)
		cancel()
	}
	return k.runner.Build(ctx, req)
}

const packerGroup = "packer-Resource-Group-k3v9x2m1qa"

// groupCleanups are the run's pending cleanups of packer's group.
func groupCleanups(run *builtins.Run) []builtins.Cleanup {
	var out []builtins.Cleanup
	for _, c := range run.PopCleanups() {
		if strings.Contains(c.Name, packerGroup) {
			out = append(out, c)
		}
	}
	return out
}

// TestPackerTemporaryGroupCleanup: the resource group packer creates for
// its build gets a cleanup the moment packer names it; when packer's own
// cleanup deletes it (or starts to) the cleanup is discharged, and when
// packer is killed first the cleanup deletes the group; a group packer
// only reuses is never deleted.
func TestPackerTemporaryGroupCleanup(t *testing.T) {
	fake, err := filepath.Abs("../testdata/packer/fake-packer.sh")
	require.NoError(t, err)
	runner := func(mode string, env ...string) *packer.Runner {
		return &packer.Runner{Binary: fake, Stdout: &testutil.SyncBuffer{}, KillGrace: 200 * time.Millisecond,
			Env: append([]string{"FAKE_PACKER_MODE=" + mode}, env...)}
	}
	t.Setenv("IMGFLOW_SECRET_UA_TOKEN", secretValue)

	for _, tc := range []struct {
		name  string
		build builtins.PackerBuilder
	}{
		{"packer deleted it", runner("vhd")},
		{"packer started deleting it", runner("vhd", "FAKE_PACKER_RG=async")},
		{"packer reused a group", runner("vhd", "FAKE_PACKER_RG=existing")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newBuildFixture(t)
			_, run, err := directRun(t, f, tc.build, fakeBuild)
			require.NoError(t, err)
			assert.Empty(t, groupCleanups(run), "nothing of packer's group is left to imgflow")
		})
	}

	t.Run("packer was killed", func(t *testing.T) {
		f := newBuildFixture(t)
		_, err := f.cloud.CreateResourceGroup(context.Background(), cloud.ResourceGroup{Name: packerGroup, Location: "westus2"})
		require.NoError(t, err)
		_, run, err := directRun(t, f, killedAfterGroup{runner("hang-ignore-int")}, fakeBuild)
		require.Error(t, err, "the build was cancelled")
		pending := groupCleanups(run)
		require.Len(t, pending, 1, "the group packer did not delete is left to imgflow's cleanups")
		assert.Contains(t, pending[0].Name, "which packer build azure-arm created and did not delete")
		require.NoError(t, pending[0].Fn(context.Background(), nil))
		_, err = f.cloud.GetResourceGroup(context.Background(), packerGroup)
		assert.True(t, cloud.IsNotFound(err), "the cleanup deleted packer's group: %v", err)
		require.NoError(t, pending[0].Fn(context.Background(), nil), "and is idempotent")
	})
}
