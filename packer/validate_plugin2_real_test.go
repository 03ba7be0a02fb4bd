//go:build unix

package packer

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/internal/testutil"
)

// plugin2CVMTemplate is an azure-arm build with confidential VM keys that only
// azure plugin 2.x knows, as AgentBaker's CVM templates have them.
const plugin2CVMTemplate = `{
  "builders": [{
    "type": "azure-arm",
    "use_azure_cli_auth": true,
    "subscription_id": "00000000-0000-0000-0000-000000000000",
    "location": "eastus",
    "vm_size": "Standard_DC8as_v5",
    "os_type": "Linux",
    "image_publisher": "Canonical",
    "image_offer": "0001-com-ubuntu-confidential-vm-jammy",
    "image_sku": "22_04-lts-cvm",
    "managed_image_name": "cvm",
    "managed_image_resource_group_name": "rg",
    "security_type": "ConfidentialVM",
    "security_encryption_type": "VMGuestStateOnly",
    "secure_boot_enabled": true,
    "vtpm_enabled": true
  }]
}`

const azure2Config = `packer {
  required_plugins {
    azure = {
      version = "= 2.5.0"
      source  = "github.com/hashicorp/azure"
    }
  }
}
`

// A JSON template whose plugin config (packer init's, as AgentBaker's
// packer.mk runs it) asks for azure 2.x is validated by the bundled 1.x
// plugin; the keys only 2.x knows make it "checked by imgflow's model
// only", naming them, not a failure. Without that config the same keys
// are packer's error.
func TestRealPackerValidateLeavesAzurePlugin2KeysToTheModel(t *testing.T) {
	requirePacker(t)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cvm.json"), []byte(plugin2CVMTemplate), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "packer-plugin.pkr.hcl"), []byte(azure2Config), 0o644))
	r := realRunner(&testutil.SyncBuffer{})

	err := r.Validate(context.Background(), BuildRequest{TemplatePath: "cvm.json", WorkDir: dir, PluginConfigs: []string{"packer-plugin.pkr.hcl"}})
	var nv *NotValidatedError
	require.ErrorAs(t, err, &nv)
	assert.Contains(t, nv.Reason, "needs azure plugin 2.x (packer-plugin.pkr.hcl)")
	for _, k := range []string{"security_type", "security_encryption_type", "secure_boot_enabled", "vtpm_enabled"} {
		assert.Contains(t, nv.Reason, k)
	}
	assert.Contains(t, err.Error(), "checked by imgflow's model only")

	err = r.Validate(context.Background(), BuildRequest{TemplatePath: "cvm.json", WorkDir: dir})
	var ve *ValidateError
	require.ErrorAs(t, err, &ve, "without azure 2.x asked for, the unknown keys are the template's error")
	assert.Contains(t, err.Error(), "security_type")
}

// Any other error packer finds in such a template stays packer's error.
func TestRealPackerValidateKeepsOtherErrorsOfAPlugin2Build(t *testing.T) {
	requirePacker(t)
	dir := t.TempDir()
	broken := `{"builders": [{"type": "azure-arm", "security_type": "ConfidentialVM", "os_type": "Linux", "vm_size": ["Standard_DC8as_v5"]}]}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cvm.json"), []byte(broken), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "packer-plugin.pkr.hcl"), []byte(azure2Config), 0o644))
	err := realRunner(&testutil.SyncBuffer{}).Validate(context.Background(), BuildRequest{TemplatePath: "cvm.json", WorkDir: dir, PluginConfigs: []string{"packer-plugin.pkr.hcl"}})
	var ve *ValidateError
	require.ErrorAs(t, err, &ve, "a list for vm_size is an error whatever the plugin")
}

// packer's refusal of only azure plugin 2.x's keys is a verdict like any
// other: the next plan takes it from the cache instead of running packer
// (a second of CPU per template, at every plan of AgentBaker's CVM jobs).
func TestRealPackerPlugin2VerdictIsCached(t *testing.T) {
	requirePacker(t)
	real, err := exec.LookPath("packer")
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cvm.json"), []byte(plugin2CVMTemplate), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "packer-plugin.pkr.hcl"), []byte(azure2Config), 0o644))
	bin := t.TempDir()
	calls := filepath.Join(bin, "calls")
	wrapper := filepath.Join(bin, "packer")
	require.NoError(t, os.WriteFile(wrapper, []byte("#!/bin/sh\necho \"$1\" >>'"+calls+"'\nexec '"+real+"' \"$@\"\n"), 0o755))
	r := realRunner(&testutil.SyncBuffer{})
	r.Binary = wrapper
	cache, err := OpenValidateCache(filepath.Join(t.TempDir(), "cache"), nil)
	require.NoError(t, err)
	req := BuildRequest{TemplatePath: "cvm.json", WorkDir: dir, PluginConfigs: []string{"packer-plugin.pkr.hcl"}}

	var errs [2]error
	var ran [2]bool
	for i := range errs {
		ran[i], errs[i] = cache.Validate(context.Background(), r, req, nil, nil)
		var nv *NotValidatedError
		require.ErrorAs(t, errs[i], &nv)
		assert.Contains(t, nv.Reason, "security_type")
	}
	assert.Equal(t, [2]bool{true, false}, ran, "the second verdict comes from the cache")
	assert.Equal(t, errs[0].Error(), errs[1].Error())
	data, err := os.ReadFile(calls)
	require.NoError(t, err)
	assert.Equal(t, "validate\n", string(data), "packer ran once")
}
