package interp

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.starlark.net/starlark"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/internal/localpacker"
)

func checkVarsIn(t *testing.T, files map[string]string, vars ...string) error {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644))
	}
	ws, err := localpacker.NewWorkspace(dir)
	require.NoError(t, err)
	values := map[string]starlark.Value{}
	for _, v := range vars {
		values[v] = starlark.String("x")
	}
	return CheckVars(Config{Workspace: ws, Registry: builtins.NewRegistry(), Vars: values}, "//main.star")
}

func TestCheckVarsBeforeRunning(t *testing.T) {
	files := map[string]string{
		"main.star": `load("//lib/p.star", "arch")
channel = param("channel", default = "stable", doc = "release channel")
count = param("count", default = 1)
name = param("name")
a = arch()
`,
		"lib/p.star": `def arch():
    return param("arch", default = ARCHES[0])

ARCHES = ["amd64"]
`,
	}
	assert.NoError(t, checkVarsIn(t, files, "channel", "arch", "count"), "a param declared by a library function counts")

	err := checkVarsIn(t, files, "chanel", "replication")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "unknown --var chanel, replication: the workflow declares no such param")
	assert.Contains(t, err.Error(), "--var chanel: did you mean channel?")
	assert.NotContains(t, err.Error(), "--var replication: did you mean")
	assert.Contains(t, err.Error(), `channel (default "stable"): release channel`)
	assert.Contains(t, err.Error(), "count (default 1)")
	assert.Contains(t, err.Error(), "name (required)")
	assert.Contains(t, err.Error(), "arch (has a default)")

	// A computed name, or a module that does not load, leaves the check
	// to the run.
	files["main.star"] = "n = \"x\"\nv = param(n, default = 1)\n"
	assert.NoError(t, checkVarsIn(t, files, "anything"))
	files["main.star"] = "load(\"//lib/missing.star\", \"x\")\n"
	assert.NoError(t, checkVarsIn(t, files, "anything"))
}
