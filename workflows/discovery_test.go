package workflows

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// workflowMachinery are the tests that check every workflow they find,
// with one subtest per workflow (or per test file) named after its file.
var workflowMachinery = []string{
	"TestEveryWorkflowOnTheLocalTarget",
	"TestPlansMatchTheirGoldenFiles",
	"TestCrashAtEveryStepThenResume",
	"TestInjectedFailureAtEveryStepKeepsWhatExisted",
	"TestStarlarkTests",
}

// TestANewWorkflowNeedsNoGoEdit adds a variant the way a user does — a copy
// of sig.star under a new name, with its test file — to a copy of the
// workspace, and runs this package's workflow tests on that workspace (the
// test binary again, with -workspace): everything passes for the new
// workflow but its missing golden plan, and the failure gives the command
// that writes it. Running that command, then the tests again, passes.
func TestANewWorkflowNeedsNoGoEdit(t *testing.T) {
	root := copyWorkspace(t)
	addVariant(t, root, "sig", "sig_copy")
	only := "^(" + strings.Join(workflowMachinery, "|") + ")$/^sig_copy(_test)?\\.star$"

	out, err := runTests(t, root, "-test.run", only)
	require.Error(t, err, "the new workflow has no golden plan yet:\n%s", out)
	assert.Equal(t, []string{"TestPlansMatchTheirGoldenFiles", "TestPlansMatchTheirGoldenFiles/sig_copy.star"}, failedTests(out),
		"only the missing golden plan may fail:\n%s", out)
	for _, test := range workflowMachinery {
		if test != "TestPlansMatchTheirGoldenFiles" {
			assert.Regexp(t, "(?m)^\\s*--- PASS: "+test+"/sig_copy(_test)?\\.star ", out, "%s must run the new workflow", test)
		}
	}
	assert.Contains(t, out, "sig_copy.star has no golden plan testdata/plans/sig_copy.plan.json")
	cmd := regexp.MustCompile(`go test \./workflows/ (-run \S+ -update -workspace \S+)`).FindStringSubmatch(out)
	require.NotNil(t, cmd, "the failure must give the command that writes the golden plan:\n%s", out)
	abs, err := filepath.EvalSymlinks(root)
	require.NoError(t, err)
	assert.Contains(t, []string{root, abs}, strings.Fields(cmd[1])[4], "the command names the workspace tested")

	// The command, as the test binary takes it.
	args := strings.Fields(strings.Replace(cmd[1], "-run ", "-test.run ", 1))
	out, err = runTests(t, root, args...)
	require.NoError(t, err, "%s:\n%s", cmd[0], out)
	written, err := os.ReadFile(filepath.Join(root, "testdata", "plans", "sig_copy.plan.json"))
	require.NoError(t, err, "the command must write the golden plan")
	assert.Contains(t, string(written), `"pos": "workflows/sig_copy.star:`, "the plan of the new workflow")
	out, err = runTests(t, root, "-test.run", "^TestPlansMatchTheirGoldenFiles$/^sig_copy\\.star$")
	assert.NoError(t, err, "with its golden plan written, the new workflow passes:\n%s", out)
}

// copyWorkspace copies what the workflow tests read — workflows/*.star,
// lib/, artifacts/, testdata/, and go.mod and go.sum for the build tools
// the AKS workflows build with `go build` — into a temporary workspace.
// Copies, not symlinks: the workspace refuses paths that leave it through
// a symlink.
func copyWorkspace(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, dir := range []string{"lib", "artifacts", "testdata"} {
		require.NoError(t, os.CopyFS(filepath.Join(root, dir), os.DirFS(filepath.Join(workspaceRoot(), dir))))
	}
	stars, err := filepath.Glob(filepath.Join(workspaceRoot(), "workflows", "*.star"))
	require.NoError(t, err)
	require.NoError(t, os.Mkdir(filepath.Join(root, "workflows"), 0o755))
	for _, f := range append(stars, filepath.Join(workspaceRoot(), "go.mod"), filepath.Join(workspaceRoot(), "go.sum")) {
		rel, err := filepath.Rel(workspaceRoot(), f)
		require.NoError(t, err)
		copyFile(t, f, filepath.Join(root, rel))
	}
	return root
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(to, data, 0o644))
}

// addVariant copies workflows/<from>.star and its test file to <to>.star
// and <to>_test.star in root, the test running the new workflow.
func addVariant(t *testing.T, root, from, to string) {
	t.Helper()
	dir := filepath.Join(root, "workflows")
	workflow, err := os.ReadFile(filepath.Join(dir, from+".star"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, to+".star"), workflow, 0o644))
	test, err := os.ReadFile(filepath.Join(dir, from+"_test.star"))
	require.NoError(t, err)
	renamed := strings.ReplaceAll(string(test), `"`+from+`.star"`, `"`+to+`.star"`)
	require.NotEqual(t, string(test), renamed, "%s_test.star never runs %s.star", from, from)
	require.NoError(t, os.WriteFile(filepath.Join(dir, to+"_test.star"), []byte(renamed), 0o644))
	_, err = os.Stat(filepath.Join(root, "testdata", "plans", to+".plan.json"))
	require.True(t, os.IsNotExist(err), "the new workflow must start without a golden plan")
}

// runTests runs this package's test binary on the workspace root with
// args, verbosely, and returns its output.
func runTests(t *testing.T, root string, args ...string) (string, error) {
	t.Helper()
	bin, err := os.Executable()
	require.NoError(t, err)
	args = append([]string{"-test.v", "-test.count=1", "-workspace", root}, args...)
	out, err := exec.CommandContext(t.Context(), bin, args...).CombinedOutput()
	return string(out), err
}

// failedTests are the tests go test's verbose output reports as failed,
// in order.
func failedTests(out string) []string {
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^\s*--- FAIL: (\S+)`).FindAllStringSubmatch(out, -1) {
		names = append(names, m[1])
	}
	return names
}
