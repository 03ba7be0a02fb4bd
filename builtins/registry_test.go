package builtins_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/interp"
)

// Builtin names the workflows, lib/*.star and WORKFLOWS.md rely on: one
// going missing breaks them, whatever the registry says.
var promisedBuiltins = []string{
	"param", "run_info", "output", "cleanup", "read_json", "read_text",
	"resource_group", "gallery", "share_community", "image_definition", "image_version", "replicate", "regions",
	"storage_account", "blob", "vhd", "vhd_upload", "blob_copy", "managed_image",
}

func TestRegistrySpecsAreDocumented(t *testing.T) {
	reg := builtins.NewRegistry()
	specs := reg.Specs("")
	require.NotEmpty(t, specs)
	seen := map[string]bool{}
	for _, s := range specs {
		t.Run(s.Name, func(t *testing.T) {
			assert.False(t, seen[s.Name], "registered twice")
			seen[s.Name] = true
			assert.NotEmpty(t, strings.TrimSpace(s.Doc), "doc")
			assert.NotEmpty(t, strings.TrimSpace(s.Example), "example")
			assert.NotEmpty(t, strings.TrimSpace(s.Returns), "returns")
			assert.NotEmpty(t, s.Group, "group")
			assert.NotNil(t, s.Impl, "impl")
			assert.Contains(t, reg.Groups(), s.Group)
			got, ok := reg.Lookup(s.Name)
			assert.True(t, ok)
			assert.Same(t, s, got)

			maxPositional := 1
			if s.Name == "output" {
				maxPositional = 2
			}
			assert.LessOrEqual(t, s.Positional, maxPositional, "positional parameters")
			assert.LessOrEqual(t, s.Positional, len(s.Params), "more positional than parameters")

			params := map[string]bool{}
			for _, p := range s.Params {
				assert.False(t, params[p.Name], "parameter %s listed twice", p.Name)
				params[p.Name] = true
				assert.NotEmpty(t, p.Name)
				assert.NotNil(t, p.Kind, "kind of %s", p.Name)
				if p.Kind != nil {
					assert.NotEmpty(t, p.Kind.String(), "kind name of %s", p.Name)
				}
				assert.NotEmpty(t, strings.TrimSpace(p.Doc), "doc of parameter %s", p.Name)
			}
			for i := 0; i < s.Positional; i++ {
				assert.True(t, s.Params[i].Required() || s.Name == "output", "positional parameter %s should be required", s.Params[i].Name)
			}

			_, err := interp.FileOptions().Parse(s.Name+"-example.star", s.Example, 0)
			assert.NoError(t, err, "example does not parse:\n%s", s.Example)
			assert.Contains(t, s.Example, s.Name+"(", "example should call %s()", s.Name)
		})
	}
	for _, name := range promisedBuiltins {
		_, ok := reg.Lookup(name)
		assert.True(t, ok, "builtin %s() is one the workflows and WORKFLOWS.md rely on", name)
	}
}

func TestRegistryPredeclaredMatchesSpecs(t *testing.T) {
	reg := builtins.NewRegistry()
	env := reg.Predeclared()
	assert.Len(t, env, len(reg.Specs("")))
	for _, s := range reg.Specs("") {
		assert.Contains(t, env, s.Name)
	}
	// Every group has specs, and Specs(group) partitions Specs("").
	n := 0
	for _, g := range reg.Groups() {
		specs := reg.Specs(g)
		assert.NotEmpty(t, specs, "group %q", g)
		n += len(specs)
	}
	assert.Equal(t, len(reg.Specs("")), n)
}

func TestSignatureMarksKeywordOnlyParameters(t *testing.T) {
	reg := builtins.NewRegistry()
	g, _ := reg.Lookup("gallery")
	assert.True(t, strings.HasPrefix(g.Signature(), "gallery(name, *, resource_group, location="), g.Signature())
	r, _ := reg.Lookup("regions")
	assert.Equal(t, "regions(*, exclude=[])", r.Signature())
	o, _ := reg.Lookup("output")
	assert.Equal(t, "output(name, value)", o.Signature())
}
