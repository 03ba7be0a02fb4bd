package packer

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const azureVHDTemplate = "../testdata/packer/azure-vhd.json"

func parse(t *testing.T, src string) *Template {
	t.Helper()
	tpl, err := ParseTemplate([]byte(src))
	require.NoError(t, err)
	return tpl
}

func TestLoadTemplate(t *testing.T) {
	tpl, err := LoadTemplate(azureVHDTemplate)
	require.NoError(t, err)

	assert.True(t, filepath.IsAbs(tpl.Path))
	require.Len(t, tpl.Builders, 1)
	b := tpl.Builders[0]
	assert.Equal(t, "azure-arm", b.Type)
	assert.Equal(t, "azure-arm", b.Name, "name defaults to the type")
	assert.Equal(t, "aks-vhds", b.Config["capture_container_name"])
	require.Len(t, tpl.Provisioners, 1)
	assert.Equal(t, []string{"client_secret"}, tpl.SensitiveVariables)

	declared := tpl.Declared()
	names := make([]string, len(declared))
	for i, d := range declared {
		names[i] = d.Name
	}
	assert.Equal(t, []string{"capture_prefix", "client_id", "client_secret", "location", "os_disk_size_gb",
		"resource_group_name", "storage_account_name", "subscription_id", "vm_size"}, names)
	assert.Equal(t, Variable{Name: "client_secret", Required: true, Sensitive: true}, tpl.Variables["client_secret"])
	assert.Equal(t, Variable{Name: "location", Default: "westus2"}, tpl.Variables["location"])
}

// ParseTemplate reads a valid template in place and a refused one as a
// json.Decoder does: the same messages as before, and the same leniency.
func TestParseTemplateMessages(t *testing.T) {
	for src, want := range map[string]string{
		`{"builders": [{"type": "null"}]} {}`: "invalid JSON: trailing data after the template object",
		`null`:                                "invalid template: top level must be a JSON object",
		`null {}`:                             "invalid template: top level must be a JSON object",
		``:                                    "invalid JSON: EOF",
		`{"builders": [`:                      "invalid JSON: unexpected EOF",
	} {
		_, err := ParseTemplate([]byte(src))
		assert.EqualError(t, err, want, src)
	}
	tpl, err := ParseTemplate([]byte(`{"builders": [{"type": "null"}]} ]`))
	require.NoError(t, err, "a stray closing bracket after the object passes, as with the Decoder alone")
	assert.Len(t, tpl.Builders, 1)
}

func TestParseTemplateErrors(t *testing.T) {
	for name, src := range map[string]string{
		"not json":             `{`,
		"no builders":          `{"variables": {}}`,
		"builder without type": `{"builders": [{"name": "x"}]}`,
		"duplicate names":      `{"builders": [{"type": "null"}, {"type": "null"}]}`,
		"number default":       `{"variables": {"n": 30}, "builders": [{"type": "null"}]}`,
		"bad sensitive":        `{"sensitive-variables": "x", "builders": [{"type": "null"}]}`,
		"trailing data":        `{"builders": [{"type": "null"}]} {}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseTemplate([]byte(src))
			assert.Error(t, err)
		})
	}
	_, err := LoadTemplate(filepath.Join(t.TempDir(), "missing.json"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestUsedVariables(t *testing.T) {
	tpl := parse(t, `{
	  "variables": {"a": "{{env `+"`HOME`"+`}}", "b": "{{user `+"`a`"+`}}-x"},
	  "builders": [{
	    "type": "azure-arm",
	    "plain": "{{user `+"`a`"+`}}",
	    "spaced": "{{ user `+"`b`"+` }}",
	    "dq": "{{user \"c\"}}",
	    "dq_spaced": "{{  user   \"d\"  }}",
	    "trim": "x {{- user `+"`e`"+` -}} y",
	    "piped": "{{ user `+"`f`"+` | lower }}",
	    "nested": {"deep": [{"x": "{{env \"TOKEN\"}}"}, "pre {{user `+"`a`"+`}} post"]},
	    "two": "{{user `+"`g`"+`}}/{{user `+"`h`"+`}}",
	    "other": "{{timestamp}} {{isotime \"2006\"}} {{.Path}} {{uuid}}",
	    "not a ref": "user `+"`z`"+` {{ username }}"
	  }],
	  "provisioners": [{"type": "shell", "inline": ["{{user `+"`a`"+`}}", "ok"]}],
	  "post-processors": [[{"type": "manifest", "output": "{{user `+"`i`"+`}}"}]]
	}`)
	refs := tpl.UsedVariables()
	byName := map[string]VarRef{}
	var order []string
	for _, r := range refs {
		byName[r.Kind+":"+r.Name] = r
		order = append(order, r.Kind+":"+r.Name)
	}
	assert.Equal(t, []string{"env:HOME", "env:TOKEN", "user:a", "user:b", "user:c", "user:d", "user:e", "user:f", "user:g", "user:h", "user:i"}, order)
	assert.Equal(t, []string{"builders[0].nested.deep[1]", "builders[0].plain", "provisioners[0].inline[0]", "variables.b"}, byName["user:a"].Paths)
	assert.Equal(t, []string{"builders[0].nested.deep[0].x"}, byName["env:TOKEN"].Paths)
	assert.Equal(t, []string{"variables.a"}, byName["env:HOME"].Paths)
	assert.Equal(t, `builders[0]["not a ref"]`, joinPath("builders[0]", "not a ref"), "odd keys are quoted in paths")
	assert.Equal(t, []string{"post-processors[0][0].output"}, byName["user:i"].Paths)

	for _, r := range refs {
		assert.True(t, tpl.Uses(r.Kind, r.Name), r.Kind+":"+r.Name)
	}
	assert.False(t, tpl.Uses(KindUser, "z"), "not a reference")
	assert.False(t, tpl.Uses(KindUser, "HOME"), "an env, not a user variable")
	assert.False(t, tpl.Uses(KindEnv, "a"))
}

func TestCheckVariablesListsEveryRequiredVariable(t *testing.T) {
	tpl, err := LoadTemplate(azureVHDTemplate)
	require.NoError(t, err)

	err = tpl.CheckVariables(map[string]string{"client_secret": "s"})
	var mv *MissingVariablesError
	require.ErrorAs(t, err, &mv)
	assert.Equal(t, []string{"storage_account_name", "subscription_id"}, mv.Names())

	msg := err.Error()
	assert.Contains(t, msg, "2 variables have no value")
	// Where each is used and how to pass it.
	assert.Contains(t, msg, `storage_account_name: declared required ("storage_account_name": null) and used at builders[0].storage_account`)
	assert.Contains(t, msg, `subscription_id: declared required`)
	assert.Contains(t, msg, `pass it with vars={"subscription_id": …} in the workflow`)
	assert.NotContains(t, msg, "client_secret")
	assert.NotContains(t, msg, "os_sku", "packer 1.9.5 renders an unset variable as \"\"")

	all := map[string]string{"client_secret": "s", "subscription_id": "x", "storage_account_name": "sa"}
	assert.NoError(t, tpl.CheckVariables(all))
}

func TestUnsetVariablesAreTheTemplatesOwnReferencesNobodySets(t *testing.T) {
	tpl, err := LoadTemplate(azureVHDTemplate)
	require.NoError(t, err)
	unset := tpl.UnsetVariables(map[string]string{"build_id": "1"})
	require.Len(t, unset, 1, "build_id is given; capture_prefix's reference to os_sku is a default's")
	assert.Equal(t, "os_sku", unset[0].Name)
	assert.Equal(t, []string{"provisioners[0].inline[0]"}, unset[0].Paths)
	assert.Equal(t, `os_sku: used at provisioners[0].inline[0] but neither declared in "variables" nor given a value: packer renders it as ""; pass it with vars={"os_sku": …} in the workflow`, unset[0].String())
	assert.Empty(t, tpl.UnsetVariables(map[string]string{"build_id": "1", "os_sku": "u"}))
}

func TestCheckVariablesRules(t *testing.T) {
	t.Run("required but unused", func(t *testing.T) {
		tpl := parse(t, `{"variables": {"req": null}, "builders": [{"type": "null"}]}`)
		err := tpl.CheckVariables(nil)
		require.Error(t, err)
		assert.Contains(t, err.Error(), `req: declared required ("req": null); packer refuses to build without it`)
		assert.NoError(t, tpl.CheckVariables(map[string]string{"req": ""}), "an empty value (a null in a var-file) is a value")
	})
	t.Run("undeclared but passed is fine", func(t *testing.T) {
		// packer accepts undeclared var-file keys and {{user}} sees them.
		tpl := parse(t, `{"builders": [{"type": "null", "x": "{{user `+"`extra`"+`}}"}]}`)
		assert.NoError(t, tpl.CheckVariables(map[string]string{"extra": "v"}))
		assert.Empty(t, tpl.UnsetVariables(map[string]string{"extra": "v"}))
	})
	t.Run("references nobody sets inside defaults and values render as empty", func(t *testing.T) {
		// Measured with packer 1.9.5: image-builder's ansible-args.json
		// refers to variables no azure var-file sets.
		tpl := parse(t, `{"variables": {"a": "x={{user `+"`missing`"+`}}"}, "builders": [{"type": "null", "name": "n", "x": "{{user `+"`a`"+`}}", "y": "{{user `+"`b`"+`}}"}]}`)
		values := map[string]string{"b": "y={{user `nobody`}}"}
		require.NoError(t, tpl.CheckVariables(values))
		assert.Empty(t, tpl.UnsetVariables(values))
		out, err := tpl.Render(values, nil)
		require.NoError(t, err)
		assert.Equal(t, "x=", out["n"].(map[string]any)["x"])
		assert.Equal(t, "y=", out["n"].(map[string]any)["y"])
	})
	t.Run("env outside variables is refused", func(t *testing.T) {
		tpl := parse(t, `{"builders": [{"type": "file", "content": "{{env `+"`HOME`"+`}}"}]}`)
		err := tpl.CheckVariables(nil)
		var mv *MissingVariablesError
		require.ErrorAs(t, err, &mv)
		assert.Contains(t, err.Error(), "env HOME: used at builders[0].content")
		assert.Contains(t, err.Error(), "env vars are not allowed here")
	})
}

func TestRender(t *testing.T) {
	tpl, err := LoadTemplate(azureVHDTemplate)
	require.NoError(t, err)
	values := map[string]string{
		"client_secret": "s3cr3t", "subscription_id": "sub", "storage_account_name": "imgflowvhds",
		"os_sku": "ubuntu", "build_id": "42", "os_disk_size_gb": "60",
	}
	out, err := tpl.Render(values, map[string]string{"AZURE_CLIENT_ID": "cid"})
	require.NoError(t, err)
	cfg, ok := out["azure-arm"].(map[string]any)
	require.True(t, ok)
	assert.Equal(t, "cid", cfg["client_id"], "env in a default")
	assert.Equal(t, "imgflowvhds", cfg["storage_account"], "double-quoted, spaced reference")
	assert.Equal(t, "aks-ubuntu", cfg["capture_name_prefix"], "default referring to another variable")
	assert.Equal(t, "60", cfg["os_disk_size_gb"], "value overrides default")
	assert.Equal(t, "westus2", cfg["location"])
	tags := cfg["azure_tags"].(map[string]any)
	assert.Equal(t, "42", tags["buildId"])
	assert.Equal(t, `{{isotime "2006-01-02"}}`, tags["now"], "build-time functions are left as is")
	// The template itself is not modified.
	assert.Equal(t, "{{user `location`}}", tpl.Builders[0].Config["location"])

	_, err = tpl.Render(map[string]string{"client_secret": "x"}, nil)
	var mv *MissingVariablesError
	assert.ErrorAs(t, err, &mv)
}

func TestRenderFunctionsAndCycles(t *testing.T) {
	tpl := parse(t, `{
	  "variables": {"name": "AKS-Ubuntu", "csv": "a,b,c", "loop1": "{{user `+"`loop2`"+`}}", "loop2": "{{user `+"`loop1`"+`}}"},
	  "builders": [{"type": "null", "name": "n",
	    "lower": "{{ user `+"`name`"+` | lower }}",
	    "split": "{{ split (user `+"`csv`"+`) \",\" 1 }}",
	    "repl": "{{ replace_all \"-\" \"_\" (user `+"`name`"+`) }}",
	    "dir": "{{template_dir}}",
	    "keep": "{{ .Vars }} {{build_name}}"
	  }]}`)
	// loop1/loop2 are never used by a builder but packer renders all variables.
	_, err := tpl.Render(nil, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "refers to itself")

	tpl = parse(t, `{
	  "variables": {"name": "AKS-Ubuntu", "csv": "a,b,c"},
	  "builders": [{"type": "null", "name": "n",
	    "lower": "{{ user `+"`name`"+` | lower }}",
	    "split": "{{ split (user `+"`csv`"+`) \",\" 1 }}",
	    "repl": "{{ replace_all \"-\" \"_\" (user `+"`name`"+`) }}",
	    "keep": "{{ .Vars }} {{build_name}}",
	    "bad": "{{ timestamp | printf \"%s\" (user `+"`name`"+`) }}"
	  }]}`)
	_, err = tpl.Render(nil, nil)
	require.Error(t, err, "an action mixing a reference with an unsupported function is an error, not silently kept")
	assert.Contains(t, err.Error(), "builders[0].bad")

	delete(tpl.Builders[0].Config, "bad")
	out, err := tpl.Render(nil, nil)
	require.NoError(t, err)
	cfg := out["n"].(map[string]any)
	assert.Equal(t, "aks-ubuntu", cfg["lower"])
	assert.Equal(t, "b", cfg["split"])
	assert.Equal(t, "AKS_Ubuntu", cfg["repl"])
	assert.Equal(t, "{{ .Vars }} {{build_name}}", cfg["keep"])
}

func TestRenderTemplateDirAndEnvOutsideVariables(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"builders": [{"type": "azure-arm", "custom_data_file": "{{template_dir}}/cd.json"}]}`), 0o644))
	tpl, err := LoadTemplate(path)
	require.NoError(t, err)
	out, err := tpl.Render(nil, nil)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, "cd.json"), out["azure-arm"].(map[string]any)["custom_data_file"])

	tpl = parse(t, `{"builders": [{"type": "null", "x": "{{env `+"`HOME`"+`}}"}]}`)
	_, err = tpl.Render(nil, map[string]string{"HOME": "/root"})
	var mv *MissingVariablesError
	assert.True(t, errors.As(err, &mv))
}

func TestRenderBuildsNamesAndUnsetEnv(t *testing.T) {
	tpl := parse(t, `{
	  "variables": {"build_name": null, "location": "{{env `+"`PACKER_BUILD_LOCATION`"+`}}", "where": "{{user `+"`location`"+`}}", "vm_size": "{{env `+"`AZURE_VM_SIZE`"+`}}"},
	  "builders": [
	    {"type": "azure-arm", "name": "sig-{{user `+"`build_name`"+`}}", "location": "{{user `+"`where`"+`}}", "vm_size": "{{user `+"`vm_size`"+`}}",
	     "shared_image_gallery_destination": {"replication_regions": ["{{user `+"`location`"+`}}"]}},
	    {"type": "null", "name": "sig-other"}
	  ]}`)
	r, err := tpl.RenderBuilds(map[string]string{"build_name": "flatcar-gen2"}, map[string]string{"AZURE_VM_SIZE": "Standard_D4s_v5"})
	require.NoError(t, err)
	assert.Equal(t, []string{"sig-flatcar-gen2", "sig-other"}, r.Names)
	assert.Equal(t, "azure-arm", r.Builders["sig-flatcar-gen2"].Type)
	cfg := r.Configs["sig-flatcar-gen2"]
	assert.Equal(t, "", cfg["location"], "an env name the environment lacks renders as empty")
	assert.Equal(t, "Standard_D4s_v5", cfg["vm_size"])
	assert.Equal(t, map[string][]string{
		"location": {"PACKER_BUILD_LOCATION"},
		"shared_image_gallery_destination.replication_regions[0]": {"PACKER_BUILD_LOCATION"},
	}, r.UnsetEnv["sig-flatcar-gen2"], "traced through two variables; vm_size's env is set")
	assert.Empty(t, r.UnsetEnv["sig-other"])

	r, err = tpl.RenderBuilds(map[string]string{"build_name": "x"}, map[string]string{"PACKER_BUILD_LOCATION": "westeurope", "AZURE_VM_SIZE": ""})
	require.NoError(t, err)
	assert.Equal(t, "westeurope", r.Configs["sig-x"]["location"])
	assert.Equal(t, map[string]map[string][]string{"sig-x": {"vm_size": {"AZURE_VM_SIZE"}}}, r.UnsetEnv,
		"an env name given as empty explains the empty value as an unset one does")

	// packer_build(env = {"PACKER_BUILD_LOCATION": ""}) keeps the hint
	// that names the variable.
	r, err = tpl.RenderBuilds(map[string]string{"build_name": "x"}, map[string]string{"PACKER_BUILD_LOCATION": "", "AZURE_VM_SIZE": "Standard_D4s_v5"})
	require.NoError(t, err)
	assert.Equal(t, map[string][]string{
		"location": {"PACKER_BUILD_LOCATION"},
		"shared_image_gallery_destination.replication_regions[0]": {"PACKER_BUILD_LOCATION"},
	}, r.UnsetEnv["sig-x"])

	names, err := tpl.BuildNames(map[string]string{"build_name": "other"}, nil)
	assert.Nil(t, names)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `builders "sig-{{user `+"`build_name`"+`}}" and "sig-other" are both named "sig-other" once rendered`)
}
