package builtins_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.starlark.net/starlark"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/overlay"
	"github.com/imgflow/imgflow/interp"
	"github.com/imgflow/imgflow/packer"
)

// simulatedRequests records the requests of the simulated builds.
type simulatedRequests struct {
	mu   sync.Mutex
	reqs []packer.BuildRequest
}

type recordingSimulation struct {
	inner interface {
		BuildOutcome(context.Context, packer.BuildRequest) (*packer.Result, cloud.Outcome, error)
	}
	rec *simulatedRequests
}

func (r recordingSimulation) Build(ctx context.Context, req packer.BuildRequest) (*packer.Result, error) {
	res, _, err := r.BuildOutcome(ctx, req)
	return res, err
}

func (r recordingSimulation) BuildOutcome(ctx context.Context, req packer.BuildRequest) (*packer.Result, cloud.Outcome, error) {
	r.rec.mu.Lock()
	r.rec.reqs = append(r.rec.reqs, req)
	r.rec.mu.Unlock()
	return r.inner.BuildOutcome(ctx, req)
}

// recordSimulation makes s's simulated builds record their requests.
func recordSimulation(t *testing.T, s *snippetSandbox) *simulatedRequests {
	rec := &simulatedRequests{}
	sim := s.ws.SimulatePacker
	s.ws.SimulatePacker = func(p cloud.Provider, tempDir string, subs func(context.Context, string) (cloud.Provider, error)) builtins.PackerBuilder {
		inner, ok := sim(p, tempDir, subs).(interface {
			BuildOutcome(context.Context, packer.BuildRequest) (*packer.Result, cloud.Outcome, error)
		})
		require.True(t, ok)
		return recordingSimulation{inner: inner, rec: rec}
	}
	return rec
}

// mirrorTemplate uploads the directory parts, of the checkout, that an
// input of the build also lands in, and fetches both back.
const mirrorTemplate = `{
  "builders": [{"type": "azure-arm", "use_azure_cli_auth": true, "location": "westeurope", "os_type": "Linux", "vm_size": "Standard_D2s_v3",
    "image_publisher": "Canonical", "image_offer": "o", "image_sku": "s",
    "managed_image_name": "img", "managed_image_resource_group_name": "rg", "skip_create_image": true}],
  "provisioners": [
    {"type": "file", "source": "%s", "destination": "%s"},
    {"type": "file", "direction": "download", "source": "/home/packer/parts/a.sh", "destination": "a.out"},
    {"type": "file", "direction": "download", "source": "/home/packer/parts/kata.img", "destination": "kata.out"}
  ]
}
`

// A plan's simulated build reads the checkout in place, without linking
// its entries into the build's directory; one that reads a directory the
// build also writes into (an input under an uploaded directory) falls back
// to the mirror, and sees both.
func TestPlannedBuildReadsTheCheckoutWithoutAMirror(t *testing.T) {
	for _, tc := range []struct {
		name, source, dest string
		mirrored           bool
	}{
		{"reads in place", "parts/a.sh", "/home/packer/parts/", false},
		{"falls back to the mirror", "parts/", "/home/packer/parts", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSnippetSandbox(t)
			s.write("ab/t.json", fmt.Sprintf(mirrorTemplate, tc.source, tc.dest))
			s.write("ab/parts/a.sh", "a script\n")
			s.write("downloads/kata.img", "kata uvm\n")
			rec := recordSimulation(t, s)
			src := `resource_group("rg", location = "westeurope")
b = packer_build("ab/t.json", cwd = "ab", inputs = {"parts/kata.img": "//downloads/kata.img"})
output("a", b.downloads["a.out"])
`
			if tc.mirrored {
				src += `output("kata", b.downloads["kata.out"])
`
			}
			s.write("main.star", src)
			res := interp.Plan(context.Background(), "//main.star", interp.Config{
				Workspace: s.ws, Registry: s.reg, Vars: map[string]starlark.Value{},
				Info: builtins.RunInfo{ID: "plan", Time: snippetTime},
			}, overlay.New(s.cloud))
			require.NoError(t, res.Err)
			assert.Equal(t, "a script\n", outputsOf(res)["a"])
			if !tc.mirrored {
				require.Len(t, rec.reqs, 1)
				assert.True(t, rec.reqs[0].Unmirrored, "no mirror made")
				assert.Equal(t, []string{"a.out", "kata.out", "parts/kata.img"}, rec.reqs[0].Own)
				return
			}
			assert.Equal(t, "kata uvm\n", outputsOf(res)["kata"], "the input, in the uploaded directory")
			require.Len(t, rec.reqs, 2)
			assert.True(t, rec.reqs[0].Unmirrored)
			assert.False(t, rec.reqs[1].Unmirrored, "built again in the mirror")
		})
	}
}

// cachedVerdict is a validator that answers without running packer, as
// the validate cache does on a hit: it looks at the build's directory as
// it is, without PrepareWorkDir.
type cachedVerdict struct{ entries [][]string }

func (v *cachedVerdict) Validate(_ context.Context, req packer.BuildRequest) error {
	des, err := os.ReadDir(req.WorkDir)
	if err != nil {
		return err
	}
	var names []string
	for _, d := range des {
		names = append(names, d.Name())
	}
	v.entries = append(v.entries, names)
	return nil
}

// With packer validate, the mirror is made only when packer runs: a
// verdict found in the cache leaves the build's directory with its own
// paths only.
func TestPlannedBuildMirrorsOnlyWhenPackerRuns(t *testing.T) {
	s := newSnippetSandbox(t)
	s.write("ab/t.json", fmt.Sprintf(mirrorTemplate, "parts/a.sh", "/home/packer/parts/"))
	s.write("ab/parts/a.sh", "a script\n")
	s.write("ab/other.txt", "x")
	s.write("downloads/kata.img", "kata uvm\n")
	s.write("main.star", `resource_group("rg", location = "westeurope")
b = packer_build("ab/t.json", cwd = "ab", inputs = {"parts/kata.img": "//downloads/kata.img"})
output("a", b.downloads["a.out"])
`)
	v := &cachedVerdict{}
	res := interp.Plan(context.Background(), "//main.star", interp.Config{
		Workspace: s.ws, Registry: s.reg, Vars: map[string]starlark.Value{}, PackerValidator: v,
		Info: builtins.RunInfo{ID: "plan", Time: snippetTime},
	}, overlay.New(s.cloud))
	require.NoError(t, res.Err)
	assert.Equal(t, "a script\n", outputsOf(res)["a"])
	assert.Equal(t, [][]string{{"parts"}}, v.entries, "the input's directory only: no link to t.json or other.txt")
}
