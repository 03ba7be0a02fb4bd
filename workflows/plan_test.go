package workflows

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/cloud/local"
	"github.com/imgflow/imgflow/cloud/overlay"
	"github.com/imgflow/imgflow/interp"
)

// plan runs the plan of a workflow against p (a local cloud).
func plan(t *testing.T, file string, p *local.Provider) *interp.Result {
	t.Helper()
	name := strings.TrimSuffix(file, ".star")
	return interp.Plan(context.Background(), "//workflows/"+file, interp.Config{
		Workspace: openWorkspace(t), Registry: builtins.NewRegistry(), Vars: planVars(t, name),
		Info: builtins.RunInfo{ID: "plan", Time: runTime},
	}, overlay.New(p))
}

// planJSON is the stable JSON of a plan: each step's builtin, outcome, what
// and where, and the outputs (the fields of `imgflow plan --output json`,
// named as there).
func planJSON(t *testing.T, res *interp.Result) []byte {
	t.Helper()
	type step struct {
		Builtin string `json:"builtin"`
		Outcome string `json:"outcome"`
		Summary string `json:"summary"`
		Pos     string `json:"pos"`
	}
	var steps []step
	for _, s := range res.Steps {
		if s.Effect == builtins.Changes {
			steps = append(steps, step{s.Builtin, string(s.Outcome), s.Summary, s.Pos})
		}
	}
	outputs := map[string]any{}
	for _, o := range res.Outputs {
		outputs[o.Name] = o.Value
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(map[string]any{"steps": steps, "outputs": outputs}))
	// The subscription id is random per cloud.
	sub := regexp.MustCompile(`/subscriptions/[0-9a-f-]{36}/`)
	return sub.ReplaceAll(b.Bytes(), []byte("/subscriptions/<subscription>/"))
}

func newPlanCloud(t *testing.T) *local.Provider {
	t.Helper()
	p, err := local.NewMemory(local.Options{Now: func() time.Time { return runTime }, Rand: rand.New(rand.NewSource(1))})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return p
}

// TestPlansMatchTheirGoldenFiles plans every workflow on an empty local
// cloud and compares with testdata/plans/<name>.plan.json (go test
// ./workflows/ -run TestPlans -update rewrites them). The plan changes
// nothing.
//
// A plan does not run command(), so the build tools its packer builds
// upload are whatever an earlier run left in bin/build-tools: the golden
// plans are those of a workspace where the workflows' build_tools() ran
// (as after any run), so the test builds them first rather than
// depending on another test having done it.
func TestPlansMatchTheirGoldenFiles(t *testing.T) {
	buildTheBuildTools(t)
	for _, file := range workflowFiles(t) {
		t.Run(file, func(t *testing.T) {
			p := newPlanCloud(t)
			before, err := json.Marshal(p.Snapshot())
			require.NoError(t, err)
			res := plan(t, file, p)
			require.NoError(t, res.Err)
			after, err := json.Marshal(p.Snapshot())
			require.NoError(t, err)
			assert.JSONEq(t, string(before), string(after), "a plan must change nothing")

			got := planJSON(t, res)
			golden := goldenPlan(strings.TrimSuffix(file, ".star"))
			if *updateGolden {
				require.NoError(t, os.WriteFile(golden, got, 0o644))
			}
			want, err := os.ReadFile(golden)
			if os.IsNotExist(err) {
				t.Fatalf("%s has no golden plan %s: review the plan, then write it with\n\t%s", file, filepath.ToSlash(filepath.Join("testdata", "plans", filepath.Base(golden))), updatePlanCommand(file))
			}
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got), "the plan of %s changed: review it, then %s", file, updatePlanCommand(file))
		})
	}
}

// buildTheBuildTools runs what lib/aks/packer.star's build_tools() runs,
// for each architecture the workflows build.
func buildTheBuildTools(t *testing.T) {
	t.Helper()
	for _, arch := range []string{"amd64", "arm64"} {
		cmd := exec.Command("make", "build-tools", "GOARCH="+arch)
		cmd.Dir = filepath.Join(workspaceRoot(), "artifacts", "build-tools")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "make build-tools GOARCH=%s: %s", arch, out)
	}
}
