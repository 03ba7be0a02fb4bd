package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
)

// TestStateListsTestVMs: a test VM left by a crashed run is in `imgflow
// state`, with its resource group, image and provisioning state, in the
// tree and in the JSON document.
func TestStateListsTestVMs(t *testing.T) {
	dir := t.TempDir()
	crashedTestVM(t, dir, "workflows/gen2.star")
	groups := testVMGroupsIn(t, dir)
	require.Len(t, groups, 1)
	var group string
	for g := range groups {
		group = g
	}

	text := imgflow(t, "state", "--state", dir)
	require.Equal(t, 0, text.code, text.String())
	var vmLine string
	for _, line := range strings.Split(text.stdout, "\n") {
		if strings.Contains(line, "└ vm ") {
			vmLine = line
		}
	}
	require.NotEmpty(t, vmLine, "the tree lists the VM:\n%s", text.stdout)
	assert.Contains(t, vmLine, "vm testvm-")
	assert.Contains(t, vmLine, "Standard_D2ds_v5")
	assert.Contains(t, vmLine, "from version PackerSigGalleryEastUS/2204gen2containerd/", "the image, as gallery/definition/version")
	assert.Contains(t, vmLine, cloud.ProvisioningSucceeded)
	groupAt := strings.Index(text.stdout, "resource group "+group)
	require.GreaterOrEqual(t, groupAt, 0, text.stdout)
	assert.Greater(t, strings.Index(text.stdout, vmLine), groupAt, "the VM is listed under its resource group")

	js := imgflow(t, "state", "--state", dir, "--output", "json")
	require.Equal(t, 0, js.code, js.String())
	var doc struct {
		ResourceGroups map[string]struct {
			VMs map[string]cloud.VM `json:"vms"`
		} `json:"resource_groups"`
	}
	require.NoError(t, json.Unmarshal([]byte(js.stdout), &doc))
	vms := doc.ResourceGroups[strings.ToLower(group)].VMs
	require.Len(t, vms, 1, js.stdout)
	for _, vm := range vms {
		assert.True(t, strings.HasPrefix(vm.Name, "testvm-"), vm.Name)
		assert.Equal(t, group, vm.ResourceGroup)
		assert.Contains(t, vm.ImageID, "/galleries/PackerSigGalleryEastUS/images/2204gen2containerd/versions/")
		assert.Equal(t, cloud.ProvisioningSucceeded, vm.ProvisioningState)
		assert.Equal(t, cloud.VMOSDiskName(vm.Name), vm.OSDiskName)
	}
}
