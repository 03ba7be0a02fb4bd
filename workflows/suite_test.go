package workflows

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.starlark.net/starlark"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/internal/localpacker"
	"github.com/imgflow/imgflow/interp"
	"github.com/imgflow/imgflow/interp/startest"
)

// The tests of this package check every workflow they find in the
// workspace's workflows/ directory; nothing in Go names a workflow. What a
// workflow must produce is in its own test file (startest.ExpectedOutputs),
// the vars it runs with in testdata/plans/<name>.vars.json (or its
// defaults), its plan in testdata/plans/<name>.plan.json.
// defaultWorkspace is this repository, seen from the package directory.
const defaultWorkspace = ".."

var (
	workspaceFlag = flag.String("workspace", defaultWorkspace, "the workspace `dir` whose workflows the tests check")
	updateGolden  = flag.Bool("update", false, "rewrite the golden plans in testdata/plans")
)

// compiled holds the workflows and libraries compiled once for every run
// of the package's tests: the crash-and-resume tests run each workflow
// hundreds of times, and compiling was a tenth of their time.
var compiled interp.Programs

// TestMain collects garbage less often (GOGC=400, unless GOGC is set), as
// imgflow test does: every run makes a fresh cloud, and with Go's default
// the collector took a third of the tests' CPU time.
func TestMain(m *testing.M) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	os.Exit(m.Run())
}

// workspaceRoot is the root of the workspace under test (-workspace).
func workspaceRoot() string { return *workspaceFlag }

// openWorkspace opens the workspace under test.
func openWorkspace(t *testing.T) *builtins.Workspace {
	t.Helper()
	ws, err := localpacker.NewWorkspace(workspaceRoot())
	require.NoError(t, err)
	return ws
}

// workflowFiles lists the workflows of the workspace: workflows/*.star,
// tests excluded, by file name ("gen2.star").
func workflowFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(workspaceRoot(), "workflows", "*.star"))
	require.NoError(t, err)
	var out []string
	for _, f := range files {
		if name := filepath.Base(f); !strings.HasSuffix(name, startest.TestSuffix) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	require.NotEmpty(t, out, "no workflow in %s", filepath.Join(workspaceRoot(), "workflows"))
	return out
}

// planVars are the vars a workflow runs with in these tests (its plan, the
// crash matrix): its defaults, plus testdata/plans/<name>.vars.json when
// it has one. Give one value where a param takes several that run in
// parallel(): the crash matrix names steps by their order.
func planVars(t *testing.T, name string) map[string]starlark.Value {
	t.Helper()
	vars := map[string]starlark.Value{}
	file := filepath.Join(workspaceRoot(), "testdata", "plans", name+".vars.json")
	data, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return vars
	}
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m), "%s: a JSON object of var name to value", file)
	for k, v := range m {
		vars[k] = builtins.FromGo(v)
	}
	return vars
}

// stringVars are vars as --var gives them.
func stringVars(m map[string]string) map[string]starlark.Value {
	vars := make(map[string]starlark.Value, len(m))
	for k, v := range m {
		vars[k] = starlark.String(v)
	}
	return vars
}

// expectedOutputs reads the EXPECTED_OUTPUTS of the workflow's test file:
// the outputs it must set when run with its defaults.
func expectedOutputs(t *testing.T, ws *builtins.Workspace, file string) []string {
	t.Helper()
	want, err := startest.NewRunner(ws).ExpectedOutputs(context.Background(), "workflows/"+file)
	require.NoError(t, err)
	return want
}

// goldenPlan is the path of a workflow's golden plan.
func goldenPlan(name string) string {
	return filepath.Join(workspaceRoot(), "testdata", "plans", name+".plan.json")
}

// updatePlanCommand is the command that rewrites the golden plan of the
// workflow file, run from the module root.
func updatePlanCommand(file string) string {
	cmd := fmt.Sprintf("go test ./workflows/ -run TestPlans/%s -update", file)
	if root := workspaceRoot(); root != defaultWorkspace {
		abs, err := filepath.Abs(root)
		if err == nil {
			root = abs
		}
		cmd += " -workspace " + root
	}
	return cmd
}
