package startest_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/internal/localpacker"
	"github.com/imgflow/imgflow/interp/startest"
)

// newWorkspace writes files (workspace-relative path → content) into a
// temporary workspace.
func newWorkspace(t *testing.T, files map[string]string) *builtins.Workspace {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	}
	ws, err := localpacker.NewWorkspace(dir)
	require.NoError(t, err)
	return ws
}

const workflow = `"""A workflow."""

output("name", "x")
`

func TestIsWorkflowAndTestFileOf(t *testing.T) {
	assert.True(t, startest.IsWorkflow("workflows/gen2.star"))
	for _, notWorkflow := range []string{"workflows/gen2_test.star", "lib/aks.star", "workflows/sub/x.star", "gen2.star", "workflows/README.md"} {
		assert.False(t, startest.IsWorkflow(notWorkflow), notWorkflow)
	}
	assert.Equal(t, "workflows/gen2_test.star", startest.TestFileOf("workflows/gen2.star"))
}

// Untested names the workflows without a <name>_test.star beside them,
// whatever other files are listed.
func TestUntestedListsWorkflowsWithoutATestFile(t *testing.T) {
	ws := newWorkspace(t, map[string]string{
		"workflows/tested.star":       workflow,
		"workflows/tested_test.star":  "EXPECTED_OUTPUTS = [\"name\"]\n",
		"workflows/untested.star":     workflow,
		"workflows/helpers_test.star": "X = 1\n",
		"lib/library.star":            "Y = 1\n",
		"workflows/other/nested.star": workflow,
	})
	got, err := startest.Untested(ws, []string{"lib/library.star", "workflows/helpers_test.star", "workflows/other/nested.star", "workflows/tested.star", "workflows/tested_test.star", "workflows/untested.star"})
	require.NoError(t, err)
	assert.Equal(t, []string{"workflows/untested.star"}, got)

	r := startest.NewRunner(ws)
	got, err = r.UntestedUnder([]string{"workflows/..."})
	require.NoError(t, err)
	assert.Equal(t, []string{"workflows/untested.star"}, got)
	got, err = r.UntestedUnder([]string{"workflows/tested_test.star"})
	require.NoError(t, err)
	assert.Empty(t, got, "a path that names only a test covers no workflow")

	assert.Equal(t, `workflows/untested.star has no test: add workflows/untested_test.star with EXPECTED_OUTPUTS and test_* functions (WORKFLOWS.md, "Testing a workflow")`,
		startest.UntestedWarning("workflows/untested.star"))
}

// ExpectedOutputs reads the list from the test file, which may build it
// from a loaded helper; a missing or malformed list is an error that says
// what to write.
func TestExpectedOutputsComeFromTheTestFile(t *testing.T) {
	ws := newWorkspace(t, map[string]string{
		"workflows/a.star":            workflow,
		"workflows/a_test.star":       "load(\"helpers_test.star\", \"COMMON\")\n\nEXPECTED_OUTPUTS = [\"name\"] + COMMON\n\ndef test_nothing():\n    pass\n",
		"workflows/helpers_test.star": "COMMON = [\"vhd_url\"]\n",
		"workflows/none.star":         workflow,
		"workflows/nolist.star":       workflow,
		"workflows/nolist_test.star":  "def test_nothing():\n    pass\n",
		"workflows/str.star":          workflow,
		"workflows/str_test.star":     "EXPECTED_OUTPUTS = \"name\"\n",
		"workflows/int.star":          workflow,
		"workflows/int_test.star":     "EXPECTED_OUTPUTS = [\"name\", 1]\n",
		"workflows/twice.star":        workflow,
		"workflows/twice_test.star":   "EXPECTED_OUTPUTS = (\"name\", \"name\")\n",
		"workflows/empty.star":        workflow,
		"workflows/empty_test.star":   "\"\"\"Empty.\"\"\"\n\nEXPECTED_OUTPUTS = []\n",
		"workflows/broken.star":       workflow,
		"workflows/broken_test.star":  "EXPECTED_OUTPUTS = [undefined]\n",
	})
	r := startest.NewRunner(ws)
	ctx := context.Background()
	got, err := r.ExpectedOutputs(ctx, "workflows/a.star")
	require.NoError(t, err)
	assert.Equal(t, []string{"name", "vhd_url"}, got)

	for workflow, want := range map[string]string{
		"workflows/none.star":   "workflows/none_test.star: ",
		"workflows/nolist.star": "workflows/nolist_test.star has no EXPECTED_OUTPUTS: add EXPECTED_OUTPUTS = [...] with the outputs workflows/nolist.star sets",
		"workflows/str.star":    "workflows/str_test.star:1: EXPECTED_OUTPUTS must be a list of output names, not a string",
		"workflows/int.star":    "workflows/int_test.star:1: EXPECTED_OUTPUTS[1] must be an output name (a non-empty string), not 1",
		"workflows/twice.star":  `workflows/twice_test.star:1: EXPECTED_OUTPUTS names "name" twice`,
		"workflows/empty.star":  "workflows/empty_test.star:3: EXPECTED_OUTPUTS is empty",
		"workflows/broken.star": "undefined",
	} {
		_, err := r.ExpectedOutputs(ctx, workflow)
		if assert.Error(t, err, workflow) {
			assert.Contains(t, err.Error(), want)
		}
	}
	_, err = r.ExpectedOutputs(ctx, "workflows/none.star")
	assert.ErrorContains(t, err, "write it, with EXPECTED_OUTPUTS = [...] the outputs workflows/none.star sets")
	_, err = r.ExpectedOutputs(ctx, "workflows/broken.star")
	assert.ErrorContains(t, err, "workflows/broken_test.star:1:")
}
