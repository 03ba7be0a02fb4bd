package lint

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/internal/localpacker"
)

func newTestLinter(t *testing.T, files map[string]string) *Linter {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	}
	ws, err := localpacker.NewWorkspace(dir)
	require.NoError(t, err)
	return New(ws, builtins.NewRegistry())
}

func strs(findings []Finding) []string {
	out := make([]string, len(findings))
	for i, f := range findings {
		out[i] = f.String()
	}
	return out
}

func TestBuiltinCalls(t *testing.T) {
	l := newTestLinter(t, nil)
	src := `"""Calls."""

rg = resource_group("rg", location = "westeurope", colour = "red")
g = gallery(name = "g", resource_group = rg)
args = {"location": "westeurope"}
rg2 = resource_group("rg2", **args)
def gallery2(**kwargs):
    return gallery(**kwargs)
run_info("x")
output("done", True)
`
	assert.Equal(t, []string{
		`lib/calls.star:3:52: unknown-keyword: resource_group() has no parameter "colour"; its parameters are name, location, tags, subscription_id`,
		`lib/calls.star:9:9: positional-argument: run_info() takes no arguments`,
	}, strs(l.Source("lib/calls.star", []byte(src))))
}

func TestShadowedBuiltinsAreNotChecked(t *testing.T) {
	l := newTestLinter(t, nil)
	src := `"""Own gallery."""

def gallery(anything):
    return anything

x = gallery(anything = 1)
`
	assert.Empty(t, l.Source("lib/own.star", []byte(src)))
}

// lint reports what run refuses: a global hiding a builtin the file calls;
// one the file never calls is harmless.
func TestGlobalHidingACalledBuiltin(t *testing.T) {
	l := newTestLinter(t, nil)
	src := `"""Hidden gallery."""

gallery = struct(name = "flatcar")
regions = ["westeurope"]
g = gallery(name = "g", resource_group = "rg", location = regions[0])
`
	assert.Equal(t, []string{
		`lib/hidden.star:3:1: resolve: global gallery hides the builtin gallery(): the file's calls of gallery() would reach this value instead; rename it (e.g. gallery_)`,
	}, strs(l.Source("lib/hidden.star", []byte(src))))
}

func TestDisablingComment(t *testing.T) {
	l := newTestLinter(t, nil)
	src := `"""Disabled."""

rg = resource_group("rg", location = "westeurope", colour = "red")  # buildifier: disable=unknown-keyword
`
	assert.Empty(t, l.Source("lib/d.star", []byte(src)))
}

func TestTestFilesKnowAssertAndRun(t *testing.T) {
	l := newTestLinter(t, nil)
	src := "\"\"\"T.\"\"\"\n\ndef test_x():\n    assert.true(run(\"w.star\").ok)\n"
	assert.Empty(t, l.Source("workflows/w_test.star", []byte(src)))
	got := strs(l.Source("workflows/w.star", []byte(src)))
	assert.Contains(t, got, "workflows/w.star:4:5: undefined-name: assert is not defined")
	assert.Contains(t, got, "workflows/w.star:4:17: unknown-builtin: run() is not an imgflow builtin, a Starlark builtin, a load()ed symbol or defined in this file")
}

// A release file (job() calls, no param()) has job() and Starlark's own
// names, not the workflow builtins; a workflow has no job().
func TestReleaseFilesKnowJobAndNoBuiltin(t *testing.T) {
	l := newTestLinter(t, nil)
	release := "\"\"\"R.\"\"\"\n\nfor os in [\"Ubuntu\", \"AzureLinux\"]:\n    job(\"workflows/linux.star\", os = os)\n"
	assert.Empty(t, l.Source("releases/r.star", []byte(release)))

	got := strs(l.Source("releases/r.star", []byte(release+"gallery(\"g\")\n")))
	assert.Equal(t, []string{"releases/r.star:5:1: unknown-builtin: gallery() cannot be called in a release file: a release lists workflows with job(\"workflows/NAME.star\", var = value, …); put builds in a workflow"}, got)

	workflow := "\"\"\"W.\"\"\"\n\nv = param(\"v\")\njob(\"workflows/linux.star\")\noutput(\"v\", v)\n"
	assert.Contains(t, strs(l.Source("workflows/w.star", []byte(workflow))), "workflows/w.star:4:1: unknown-builtin: job() is not an imgflow builtin, a Starlark builtin, a load()ed symbol or defined in this file")
}

func TestSyntaxErrorsStopTheFile(t *testing.T) {
	l := newTestLinter(t, nil)
	got := strs(l.Source("lib/s.star", []byte("x = (\n")))
	require.Len(t, got, 1)
	assert.Regexp(t, `^lib/s\.star:\d+:\d+: syntax: `, got[0])
}

func TestParseWarnings(t *testing.T) {
	ws, err := ParseWarnings("default")
	require.NoError(t, err)
	assert.ElementsMatch(t, DefaultWarnings(), ws)

	ws, err = ParseWarnings("+module-docstring,-no-outputs")
	require.NoError(t, err)
	assert.Contains(t, ws, "module-docstring")
	assert.NotContains(t, ws, "no-outputs")
	assert.Contains(t, ws, "unknown-keyword")

	ws, err = ParseWarnings("unknown-keyword,load")
	require.NoError(t, err)
	assert.Equal(t, []string{"load", "unknown-keyword"}, ws)

	_, err = ParseWarnings("nope")
	assert.ErrorContains(t, err, `unknown warning "nope"`)
	_, err = ParseWarnings("load,-unknown-keyword")
	assert.Error(t, err)
}

func TestIsWorkflow(t *testing.T) {
	assert.True(t, IsWorkflow("workflows/gen2.star"))
	assert.True(t, IsWorkflow("teams/x/workflows/gen2.star"))
	assert.False(t, IsWorkflow("workflows/gen2_test.star"))
	assert.False(t, IsWorkflow("lib/naming.star"))
	assert.False(t, IsWorkflow("workflows/README.md"))
}

func TestStarFiles(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a/x.star", "a/b/y.star", "a/.hidden/z.star", "a/n.txt"} {
		p := filepath.Join(dir, f)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, nil, 0o644))
	}
	files, err := StarFiles([]string{filepath.Join(dir, "a") + "/...", filepath.Join(dir, "a", "x.star")})
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join(dir, "a", "b", "y.star"), filepath.Join(dir, "a", "x.star")}, files)
	_, err = StarFiles([]string{filepath.Join(dir, "missing")})
	assert.Error(t, err)
}
