//go:build unix

package packer

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests pin imgflow's variable semantics to the real packer binary
// (1.9.5, `make deps`): what packer renders, imgflow renders.

const (
	semanticsTemplate = "../testdata/packer/semantics.json"
	semanticsVarFile  = "../testdata/packer/semantics-vars.json"
	imageBuilderDir   = "../testdata/packer/imagebuilder"
)

// runPacker runs packer with args in dir, with env added to a minimal
// environment, and returns its combined output and exit code.
func runPacker(t *testing.T, dir string, env map[string]string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("packer", args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "CHECKPOINT_DISABLE=1"}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return string(out), code
}

func TestRealPackerRendersVariablesAsRenderDoes(t *testing.T) {
	requirePacker(t)
	manifest := filepath.Join(t.TempDir(), "manifest.json")
	env := map[string]string{"IMGFLOW_PROBE_SET": "westeurope"}
	tplAbs, err := filepath.Abs(semanticsTemplate)
	require.NoError(t, err)
	varsAbs, err := filepath.Abs(semanticsVarFile)
	require.NoError(t, err)

	out, code := runPacker(t, t.TempDir(), env, "build", "-var-file="+varsAbs, "-var", "manifest_output="+manifest, "-only=sig-flatcar-gen2", tplAbs)
	require.Equal(t, 0, code, "packer accepts the probe, -only on the rendered name:\n%s", out)
	data, err := os.ReadFile(manifest)
	require.NoError(t, err)
	var m struct {
		Builds []struct {
			Name       string         `json:"name"`
			CustomData map[string]any `json:"custom_data"`
		} `json:"builds"`
	}
	require.NoError(t, json.Unmarshal(data, &m))
	require.Len(t, m.Builds, 1)
	assert.Equal(t, "sig-flatcar-gen2", m.Builds[0].Name)

	tpl, err := LoadTemplate(semanticsTemplate)
	require.NoError(t, err)
	values, err := ReadVarFile(semanticsVarFile)
	require.NoError(t, err)
	values["manifest_output"] = manifest
	r, err := tpl.newRenderer(values, env)
	require.NoError(t, err)
	pp := tpl.PostProcessors[0].(map[string]any)
	mine, err := r.renderValue(pp["custom_data"], "post-processors[0].custom_data", false)
	require.NoError(t, err)
	assert.Equal(t, m.Builds[0].CustomData, mine, "imgflow renders what packer 1.9.5 rendered")
	// The values themselves, so that a change in both is noticed.
	assert.Equal(t, map[string]any{
		"null_in_var_file":     "[]",
		"required_set_by_null": "[]",
		"unset_inside_a_value": "[containerd_sha256= declared=d]",
		"undeclared_unset":     "[]",
		"env_in_default":       "[westeurope-]",
		"chained_default":      "[xd]",
		"var_file_env":         "[westeurope]",
	}, mine)

	names, err := tpl.BuildNames(values, env)
	require.NoError(t, err)
	assert.Equal(t, []string{"sig-flatcar-gen2"}, names)
	out, code = runPacker(t, t.TempDir(), env, "build", "-var-file="+varsAbs, "-var", "manifest_output="+manifest, "-only=sig-{{user `build_name`}}", tplAbs)
	assert.NotEqual(t, 0, code, "packer matches -only against rendered names")
	assert.Contains(t, out, "No builds to run")
	assert.Error(t, CheckOnly("-only", []string{"sig-{{user `build_name`}}"}, names))
}

// imageBuilderArgs are image-builder's Makefile's var-files for a Flatcar
// gen2 SIG build, relative to testdata/packer/imagebuilder.
func imageBuilderArgs() []string {
	var args []string
	for _, f := range []string{"kubernetes", "cni", "containerd", "ansible-args", "common"} {
		args = append(args, "config/"+f+".json")
	}
	return append(args, "azure/azure-config.json", "azure/azure-sig-gen2.json", "azure/flatcar-gen2.json")
}

func TestRealPackerValidatesTheImageBuilderFixture(t *testing.T) {
	requirePacker(t)
	env := map[string]string{
		"AZURE_LOCATION": "westeurope", "AZURE_SUBSCRIPTION_ID": "00000000-0000-0000-0000-000000000000", "USE_AZURE_CLI_AUTH": "true",
		"RESOURCE_GROUP_NAME": "capi-images", "GALLERY_NAME": "capi_gallery", "FLATCAR_CHANNEL": "stable", "FLATCAR_VERSION": "4152.2.3",
	}
	override := filepath.Join(t.TempDir(), "override.json")
	require.NoError(t, os.WriteFile(override, []byte(`{"replication_regions": "westeurope,eastus,eastus2"}`), 0o600))
	args := []string{"validate"}
	values := map[string]string{}
	for _, f := range append(imageBuilderArgs(), override) {
		args = append(args, "-var-file="+f)
		vf, err := ReadVarFile(ResolvePath(imageBuilderDir, f))
		require.NoError(t, err, "nulls are read as packer reads them")
		for k, v := range vf {
			values[k] = v
		}
	}
	args = append(args, "-only=sig-flatcar-gen2", "azure/packer.json")
	out, code := runPacker(t, imageBuilderDir, env, args...)
	require.Equal(t, 0, code, "packer 1.9.5 validates the stock layering:\n%s", out)
	assert.Contains(t, out, "The configuration is valid.")

	tpl, err := LoadTemplate(filepath.Join(imageBuilderDir, "azure", "packer.json"))
	require.NoError(t, err)
	r, err := tpl.RenderBuilds(values, env)
	require.NoError(t, err, "imgflow accepts what packer accepts")
	cfg := r.Configs["sig-flatcar-gen2"]
	require.NotNil(t, cfg)
	assert.Equal(t, "westeurope,eastus,eastus2", cfg["shared_image_gallery_destination"].(map[string]any)["replication_regions"])
	assert.Equal(t, "", cfg["shared_image_gallery"].(map[string]any)["gallery_name"], "the marketplace build's gallery source block is empty")

	// Without AZURE_LOCATION both refuse the build.
	delete(env, "AZURE_LOCATION")
	out, code = runPacker(t, imageBuilderDir, env, args...)
	assert.NotEqual(t, 0, code)
	assert.Contains(t, strings.Join(strings.Fields(out), " "), "Specify either a location to create the resource group in or an existing build_resource_group_name")
	r, err = tpl.RenderBuilds(values, env)
	require.NoError(t, err)
	assert.Equal(t, "", r.Configs["sig-flatcar-gen2"]["location"])
	assert.Equal(t, []string{"AZURE_LOCATION"}, r.UnsetEnv["sig-flatcar-gen2"]["location"])
}
