package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/builtins"
)

func TestDocStubs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "stubs")
	res := imgflow(t, "doc", "--stubs", dir)
	require.Equal(t, 0, res.code, res.String())
	data, err := os.ReadFile(filepath.Join(dir, "imgflow.pyi"))
	require.NoError(t, err)
	stubs := string(data)
	reg := builtins.NewRegistry()
	assert.Equal(t, reg.Stubs(), stubs)
	for _, s := range reg.Specs("") {
		assert.Contains(t, stubs, "\ndef "+s.Name+"(", s.Name)
		for _, p := range s.Params {
			assert.Contains(t, stubs, "        "+p.Name+": ", "%s(%s) is documented", s.Name, p.Name)
		}
	}
	// Keyword-only parameters after *, defaults, optional types, struct
	// results as classes.
	assert.Contains(t, stubs, "def gallery(name: str, *, resource_group: ResourceGroup | str, location: str | None = None, ")
	assert.Contains(t, stubs, ") -> Gallery:\n")
	assert.Contains(t, stubs, "class ResourceGroup:\n")
	assert.Contains(t, stubs, "def output(name: str, value: Any) -> None:\n")
	assert.Contains(t, stubs, "def regions(*, exclude: list[str] = []) -> Any:\n")

	if python, err := exec.LookPath("python3"); err == nil {
		out, err := exec.Command(python, "-c", "import ast, sys; ast.parse(open(sys.argv[1]).read())", filepath.Join(dir, "imgflow.pyi")).CombinedOutput()
		assert.NoError(t, err, "the stubs are valid Python: %s", out)
	}

	md := imgflow(t, "doc", "--markdown")
	require.Equal(t, 0, md.code, md.String())
	assert.Equal(t, reg.Reference(), md.stdout)
	assert.True(t, strings.HasPrefix(md.stdout, "### "))
}
