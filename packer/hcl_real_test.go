//go:build unix

package packer

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/internal/testutil"
)

// These tests hold the HCL2 rules (build names, required and undeclared
// variables, type conversion) against the real packer ≥ 1.7 with null
// sources; they never need a plugin or the network.

const nullHCL2Template = "../testdata/packer/hcl/null-validate.pkr.hcl"

// packerValidate runs `packer validate args… template` and returns its
// output and whether it succeeded.
func packerValidate(t *testing.T, template string, args ...string) (string, bool) {
	t.Helper()
	cmd := exec.Command("packer", append(append([]string{"validate"}, args...), template)...)
	cmd.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit, string(out))
	}
	return string(out), err == nil
}

func TestRealPackerHCL2BuildNames(t *testing.T) {
	requirePacker(t) // packertest.Require wants 1.9.x, which reads HCL2
	tpl, err := LoadTemplate(nullHCL2Template)
	require.NoError(t, err)
	out := &testutil.SyncBuffer{}
	res, err := realRunner(out).Build(context.Background(), BuildRequest{TemplatePath: nullHCL2Template, Vars: map[string]string{"required_name": "imgflow"}})
	require.NoError(t, err, out.String())

	var built []string
	for _, b := range res.Builds {
		built = append(built, b.Name)
	}
	sort.Strings(built)
	want := append([]string(nil), tpl.BuilderNames()...)
	sort.Strings(want)
	assert.Equal(t, []string{"named.null.first", "named.null.second", "null.first"}, want)
	assert.Equal(t, want, built, "packer names the builds as LoadTemplate does")
	assert.Contains(t, out.String(), "hello-imgflow first 2", "locals and variables as packer evaluates them")

	// -only takes those names as they are.
	res, err = realRunner(out).Build(context.Background(), BuildRequest{TemplatePath: nullHCL2Template, Vars: map[string]string{"required_name": "x"}, Only: []string{"named.null.second"}})
	require.NoError(t, err, out.String())
	require.Len(t, res.Builds, 1)
	assert.Equal(t, "named.null.second", res.Builds[0].Name)
}

func TestRealPackerHCL2VariableRules(t *testing.T) {
	requirePacker(t) // packertest.Require wants 1.9.x, which reads HCL2
	tpl, err := LoadTemplate(nullHCL2Template)
	require.NoError(t, err)

	// No value for a variable without a default: both refuse.
	out, ok := packerValidate(t, nullHCL2Template)
	assert.False(t, ok)
	assert.Contains(t, out, `Unset variable "required_name"`)
	var mv *MissingVariablesError
	require.ErrorAs(t, tpl.CheckVariables(nil), &mv)
	assert.Equal(t, []string{"required_name"}, mv.Names())
	assert.Contains(t, mv.Error(), `Unset variable "required_name"`)

	// An undeclared -var is an error…
	out, ok = packerValidate(t, nullHCL2Template, "-var", "required_name=x", "-var", "undeclared=1")
	assert.False(t, ok)
	assert.Contains(t, out, "Undefined -var variable")
	require.ErrorAs(t, tpl.CheckUndeclared(map[string]string{"required_name": "x", "undeclared": "1"}), &mv)
	assert.Equal(t, []string{"undeclared"}, mv.Names())
	assert.Contains(t, mv.Error(), "Undefined -var variable")

	// …but only a warning in a var-file.
	vf := filepath.Join(t.TempDir(), "vars.json")
	require.NoError(t, os.WriteFile(vf, []byte(`{"required_name": "x", "undeclared": "1"}`), 0o600))
	out, ok = packerValidate(t, nullHCL2Template, "-var-file="+vf)
	assert.True(t, ok, out)
	assert.Contains(t, out, "Undefined variable")
	assert.NoError(t, tpl.CheckVariables(map[string]string{"required_name": "x", "undeclared": "1"}))

	// A string for a number variable is converted, a non-number refused.
	_, ok = packerValidate(t, nullHCL2Template, "-var", "required_name=x", "-var", "count_of=3")
	assert.True(t, ok)
	assert.NoError(t, tpl.CheckVariables(map[string]string{"required_name": "x", "count_of": "3"}))
	out, ok = packerValidate(t, nullHCL2Template, "-var", "required_name=x", "-var", "count_of=three")
	assert.False(t, ok)
	assert.Contains(t, out, "a number is required")
	assert.ErrorContains(t, tpl.CheckVariables(map[string]string{"required_name": "x", "count_of": "three"}), "not a valid number")

	// Validation rules.
	out, ok = packerValidate(t, nullHCL2Template, "-var", "required_name=")
	assert.False(t, ok)
	assert.Contains(t, out, "The required_name must not be empty.")
	assert.ErrorContains(t, tpl.CheckVariables(map[string]string{"required_name": ""}), "variable required_name: The required_name must not be empty.")

	// env() outside a variable's default.
	envTpl := filepath.Join(t.TempDir(), "env.pkr.hcl")
	require.NoError(t, os.WriteFile(envTpl, []byte(`
locals { home = env("HOME") }
source "null" "a" { communicator = "none" }
build { sources = ["source.null.a"] }
`), 0o644))
	out, ok = packerValidate(t, envTpl)
	assert.False(t, ok)
	assert.Contains(t, out, `There is no function named "env"`)
	withEnv, err := LoadTemplate(envTpl)
	require.NoError(t, err)
	err = withEnv.CheckVariables(nil)
	require.ErrorAs(t, err, &mv)
	assert.Equal(t, []string{"HOME"}, mv.Names())
	assert.Contains(t, err.Error(), `There is no function named "env"`)
}

// resultsRE finds the base64 JSON that functions.pkr.hcl's provisioner
// prints.
var resultsRE = regexp.MustCompile(`RESULTS=([A-Za-z0-9+/=]+)`)

func TestRealPackerHCL2FunctionsEvaluateAlike(t *testing.T) {
	requirePacker(t) // packertest.Require wants 1.9.x, which reads HCL2
	const path = "../testdata/packer/hcl/functions.pkr.hcl"
	out := &testutil.SyncBuffer{}
	_, err := realRunner(out).Build(context.Background(), BuildRequest{TemplatePath: path})
	require.NoError(t, err, out.String())
	m := resultsRE.FindStringSubmatch(out.String())
	require.NotNil(t, m, "no RESULTS line in packer's output:\n%s", out.String())

	tpl, err := LoadTemplate(path)
	require.NoError(t, err)
	e, err := tpl.newHCLEval(nil, nil)
	require.NoError(t, err)
	ours, err := ctyToGo(e.locals["results"])
	require.NoError(t, err)
	data, err := json.Marshal(ours)
	require.NoError(t, err)
	theirs, err := base64.StdEncoding.DecodeString(m[1])
	require.NoError(t, err)
	assert.JSONEq(t, string(theirs), string(data))
}

// A template directory: packer reads every *.pkr.hcl file and the
// *.auto.pkrvars.* files, and so does LoadTemplate.
func TestRealPackerHCL2Directory(t *testing.T) {
	requirePacker(t) // packertest.Require wants 1.9.x, which reads HCL2
	dir := writeTemplateDir(t, dirTemplate)
	tpl, err := LoadTemplate(dir)
	require.NoError(t, err)
	require.NoError(t, tpl.CheckVariables(nil))
	builds, err := tpl.Render(nil, nil)
	require.NoError(t, err)
	assert.Equal(t, "fromauto-5", builds["null.a"].(map[string]any)["label"])

	// The null builder refuses unknown keys: packer builds the same
	// directory without the label.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.pkr.hcl"), []byte(`
source "null" "a" { communicator = "none" }
build {
  sources = ["source.null.a"]
  provisioner "shell-local" { inline = ["echo VAL ${var.req}-${var.n}"] }
}
`), 0o644))
	out := &testutil.SyncBuffer{}
	res, err := realRunner(out).Build(context.Background(), BuildRequest{TemplatePath: dir})
	require.NoError(t, err, out.String())
	require.Len(t, res.Builds, 1)
	assert.Equal(t, tpl.BuilderNames()[0], res.Builds[0].Name)
	assert.Contains(t, out.String(), "VAL fromauto-5")
}
