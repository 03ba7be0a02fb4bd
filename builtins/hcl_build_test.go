package builtins_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
)

// The HCL2 translation of artifacts/packer/sig-marketplace.json, run by the
// same workflow, builds what the JSON template builds: same managed image,
// gallery version and regions, in the validation (plan) pass and the local
// apply pass, and a rerun reuses it.
func TestPackerBuildHCL2TemplateBuildsLikeItsJSONTwin(t *testing.T) {
	jsonRun := newBuildFixture(t)
	want := outputsOf(jsonRun.mustRun("testdata/build/sig_marketplace.star", nil))

	f := newBuildFixture(t)
	res := f.mustRun("testdata/packer/hcl/sig_marketplace.star", nil)
	assert.Equal(t, cloud.Created, outcomeOf(t, res, "packer_build"))
	got := outputsOf(res)
	assert.Equal(t, want, got)
	sub := f.cloud.SubscriptionID()
	assert.Equal(t, cloud.ImageVersionID(sub, "aks-build", "aksgallery", "ubuntu2204", "2026.1.2"), got["sig_version"])
	img := f.cloud.Snapshot().ResourceGroups["aks-build"].Images["ubuntu2204-2026.1.2"]
	require.NotNil(t, img)
	assert.Equal(t, int64(1<<30), img.SizeBytes, "os_disk_size_gb, a number variable, given as \"1\"")
	assert.Equal(t, "22_04-lts-gen2", img.Tags["image_sku"], "a local in azure_tags")

	before := f.state()
	again := f.mustRun("testdata/packer/hcl/sig_marketplace.star", nil)
	assert.Equal(t, cloud.Exists, outcomeOf(t, again, "packer_build"), "a rerun reuses the build")
	assert.JSONEq(t, before, f.state(), "a rerun changes nothing")
}

func TestPackerBuildHCL2RefusesUndeclaredVars(t *testing.T) {
	f := newBuildFixture(t)
	res := f.run("testdata/packer/hcl/sig_marketplace.star", map[string]string{"extra": "sig_image_verison"})
	require.Error(t, res.Err)
	assert.Equal(t, "validate", res.Pass)
	msg := res.Err.Error()
	assert.Contains(t, msg, "testdata/packer/hcl/sig_marketplace.star:10:")
	assert.Contains(t, msg, "packer template testdata/packer/hcl/sig-marketplace.pkr.hcl: 1 variable is not declared:")
	assert.Contains(t, msg, `sig_image_verison: set in vars, but the template declares no variable "sig_image_verison"`)
	assert.Empty(t, f.cloud.Snapshot().ResourceGroups, "nothing was created")
}

func TestPackerBuildHCL2FilesNeedTheFilesVariable(t *testing.T) {
	f := newBuildFixture(t)
	res := f.run("testdata/packer/hcl/files_unused.star", nil)
	require.Error(t, res.Err)
	assert.Equal(t, "validate", res.Pass)
	msg := res.Err.Error()
	assert.Contains(t, msg, "testdata/packer/hcl/files_unused.star:3:")
	assert.Contains(t, msg, `files were given but the template never uses var.imgflow_files_dir: declare variable "imgflow_files_dir" { type = string }`)
	assert.Contains(t, msg, `provisioner "file" {`+"\n"+`      source      = "${var.imgflow_files_dir}/home/packer/"`)
}
