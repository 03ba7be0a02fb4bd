package packer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValidateFakeArgs(t *testing.T) {
	dir := t.TempDir()
	vf := filepath.Join(dir, "settings.json")
	require.NoError(t, os.WriteFile(vf, []byte(`{"storage_account_name": "fromfile"}`), 0o600))
	f := newFake(t, "vhd")
	vars := azureVars()
	delete(vars, "storage_account_name")
	err := f.runner.Validate(context.Background(), BuildRequest{
		TemplatePath: "azure-vhd.json", WorkDir: "../testdata/packer",
		Vars: vars, VarFiles: []string{vf}, Only: []string{"azure-arm"},
	})
	require.NoError(t, err)

	args := f.args(t)
	assertNoSecret(t, "argv", strings.Join(args, " "))
	assert.Equal(t, []string{"validate", "-machine-readable", "-only=azure-arm", "-var-file=" + vf}, args[:4])
	require.True(t, strings.HasPrefix(args[4], "-var-file="), "the Vars file follows the caller's var-files")
	varFile := strings.TrimPrefix(args[4], "-var-file=")
	tplAbs, err := filepath.Abs(azureVHDTemplate)
	require.NoError(t, err)
	assert.Equal(t, tplAbs, args[5], "template is the last packer argument")
	assert.Contains(t, args, "varfile-mode "+varFile+" 600")
	assert.NoFileExists(t, varFile, "var-file removed after validate")
	assert.Contains(t, f.out.String(), "[packer] The configuration is valid.\n")
}

func TestValidateFakeInvalid(t *testing.T) {
	f := newFake(t, "fail", "FAKE_PACKER_ECHO_VAR=client_secret")
	err := f.runner.Validate(context.Background(), BuildRequest{TemplatePath: azureVHDTemplate, Vars: azureVars()})
	var ve *ValidateError
	require.ErrorAs(t, err, &ve)
	assert.Equal(t, 1, ve.ExitCode)
	assert.Contains(t, err.Error(), "packer validate ")
	assert.Contains(t, err.Error(), "failed (exit status 1):\n  Error: Failed to prepare build: \"azure-arm\"\n    1 error(s) occurred:\n    * Bad script '/scripts/<sensitive>.sh': stat")
	assertNoSecret(t, "error", err.Error())
	assertNoSecret(t, "stdout", f.out.String())
}

func TestValidateChecksBeforeStartingPacker(t *testing.T) {
	r := &Runner{Binary: filepath.Join(t.TempDir(), "no-packer")}
	err := r.Validate(context.Background(), BuildRequest{TemplatePath: azureVHDTemplate, Vars: map[string]string{"client_secret": secret}})
	var mv *MissingVariablesError
	require.ErrorAs(t, err, &mv, "imgflow's own check comes first, as for a build")

	err = r.Validate(context.Background(), BuildRequest{TemplatePath: azureVHDTemplate, Vars: azureVars(), Only: []string{"azure"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `-only "azure" matches no builder (builders: azure-arm)`)

	// A template that needs azure plugin 2.x is not given to packer (the
	// binary does not even exist here).
	err = r.Validate(context.Background(), BuildRequest{TemplatePath: "../testdata/packer/azure-plugin2.pkr.hcl", Vars: map[string]string{"subscription_id": "00000000-0000-0000-0000-000000000000"}})
	var nv *NotValidatedError
	require.ErrorAs(t, err, &nv)
	assert.Contains(t, err.Error(), "checked by imgflow's model only (needs azure plugin 2.x: packer init)")
}

func TestNeedsAzurePlugin2(t *testing.T) {
	load := func(src string) *Template {
		path := filepath.Join(t.TempDir(), "t.pkr.hcl")
		require.NoError(t, os.WriteFile(path, []byte(src), 0o644))
		tpl, err := LoadTemplate(path)
		require.NoError(t, err)
		return tpl
	}
	hcl := func(version string) string {
		return `packer {
  required_plugins {
    amazon = {
      source  = "github.com/hashicorp/amazon"
      version = ">= 3.0.0"
    }
    azure = {
      version = "` + version + `"
      source  = "github.com/hashicorp/azure"
    }
  }
}
source "null" "x" {
  communicator = "none"
}
build {
  sources = ["source.null.x"]
}
`
	}
	for version, want := range map[string]bool{
		">= 2.0.0":        true,
		"~> 2":            true,
		"2.1.0":           true,
		"= 2.3.1":         true,
		"> 2.0.0":         true,
		">= 2.0.0, < 3.0": true,
		">= 1.4.0":        false,
		"~> 1.4":          false,
		"> 1.0.0":         false,
		"< 3.0.0":         false,
		">= 1.0, < 2":     false,
	} {
		assert.Equal(t, want, load(hcl(version)).NeedsAzurePlugin2(), version)
	}
	// No required_plugins block: the bundled plugin is used.
	assert.False(t, load("source \"null\" \"x\" {\n  communicator = \"none\"\n}\nbuild {\n  sources = [\"source.null.x\"]\n}\n").NeedsAzurePlugin2())
	// A legacy JSON template declares no plugins.
	tpl, err := LoadTemplate("../testdata/packer/azure-vhd.json")
	require.NoError(t, err)
	assert.False(t, tpl.NeedsAzurePlugin2())
}

func TestWithoutBundledPluginsWarning(t *testing.T) {
	warning := "Warning: Bundled plugins used\n\nThis template relies on the use of plugins bundled into the Packer binary.\n\n"
	assert.Equal(t, "Error: \n\n1 error occurred:\n\t* required variable not set: location",
		withoutBundledPluginsWarning(warning+"Error: \n\n1 error occurred:\n\t* required variable not set: location"))
	assert.Equal(t, "", withoutBundledPluginsWarning(warning))
	assert.Equal(t, "Error: x", withoutBundledPluginsWarning("Error: x"))
}

// packer wraps a long key onto the next line; the keys are found either
// way, and any other error makes the list not "unknown keys only".
func TestUnknownKeysOnly(t *testing.T) {
	wrapped := []string{"Error: Failed to prepare build: \"azure-arm\"\n\n2 errors occurred:\n\t* unknown configuration key: '\"security_type\"'\n\t* unknown configuration key:\n'\"shared_image_gallery_destination.specialized\"'"}
	assert.Equal(t, []string{"security_type", "shared_image_gallery_destination.specialized"}, unknownKeysOnly(wrapped))
	mixed := []string{"Error: Failed to prepare build: \"azure-arm\"\n\n2 errors occurred:\n\t* unknown configuration key: '\"security_type\"'\n\t* A location must be specified."}
	assert.Nil(t, unknownKeysOnly(mixed))
	assert.Nil(t, unknownKeysOnly([]string{"Error: Failed to prepare build: \"azure-arm\""}))
}
