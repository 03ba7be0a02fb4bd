package builtins_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/interp/libdoc"
)

// TestWorkflowsMarkdownHoldsTheGeneratedReference fails when a builtin's
// spec or a lib/*.star docstring changed without `make docs`.
func TestWorkflowsMarkdownHoldsTheGeneratedReference(t *testing.T) {
	doc, err := os.ReadFile("../WORKFLOWS.md")
	require.NoError(t, err)
	want, err := builtins.NewRegistry().SpliceReference(string(doc))
	require.NoError(t, err)
	assert.Equal(t, want, string(doc), "WORKFLOWS.md is out of date with the builtin registry: run `make docs`")

	mods, err := libdoc.ReadDir("../lib", "lib")
	require.NoError(t, err)
	require.NotEmpty(t, mods)
	want, err = libdoc.Splice(string(doc), libdoc.Reference(mods))
	require.NoError(t, err)
	assert.Equal(t, want, string(doc), "WORKFLOWS.md is out of date with the docstrings of lib/*.star: run `make docs`")
}

func TestReferenceDocumentsEveryBuiltin(t *testing.T) {
	reg := builtins.NewRegistry()
	ref := reg.Reference()
	for _, s := range reg.Specs("") {
		assert.Contains(t, ref, "#### `"+s.Name+"`")
		assert.Contains(t, ref, s.Signature())
	}
}
