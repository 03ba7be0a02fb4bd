package azsim_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azsim"
	"github.com/imgflow/imgflow/cloud/cloudtest"
)

// A virtual network is a resource of its group: provisioned at once with
// the properties it was given, its location resolved as ARM's, and
// deleted with the group.
func TestVirtualNetworkGoesWithItsGroup(t *testing.T) {
	ctx := context.Background()
	p, err := azsim.New(nil, azsim.Options{})
	require.NoError(t, err)
	_, err = p.PutVirtualNetwork(ctx, "rg", azsim.VirtualNetwork{Name: "vnet", Location: "westus"})
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeResourceGroupNotFound)
	_, err = p.CreateResourceGroup(ctx, cloud.ResourceGroup{Name: "rg", Location: "westus"})
	require.NoError(t, err)
	props := map[string]any{"addressSpace": map[string]any{"addressPrefixes": []any{"10.0.0.0/16"}}}
	vn, err := p.PutVirtualNetwork(ctx, "rg", azsim.VirtualNetwork{Name: "vnet", Location: "West US", Properties: props})
	require.NoError(t, err)
	assert.Equal(t, "westus", vn.Location)
	assert.Equal(t, cloud.ProvisioningSucceeded, vn.Properties["provisioningState"])
	assert.NotContains(t, props, "provisioningState", "the caller's properties are not changed")
	got, err := p.GetVirtualNetwork(ctx, "RG", "VNET")
	require.NoError(t, err)
	assert.Equal(t, vn, got)

	require.NoError(t, p.DeleteResourceGroup(ctx, "rg"))
	_, err = p.CreateResourceGroup(ctx, cloud.ResourceGroup{Name: "rg", Location: "westus"})
	require.NoError(t, err)
	_, err = p.GetVirtualNetwork(ctx, "rg", "vnet")
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeResourceNotFound)
}

// A VM's network interface needs its subnet's virtual network. A run
// command is kept with its instance view until deleted, and goes with its
// VM: a VM made again under the name has none.
func TestRunCommandsGoWithTheirVM(t *testing.T) {
	ctx := context.Background()
	p, _, in := replicatingSim(t)
	in.TargetRegions = []cloud.TargetRegion{{Name: "westeurope"}}
	v, err := p.CreateImageVersion(ctx, in)
	require.NoError(t, err)
	subnet := "/subscriptions/" + p.SubscriptionID() + "/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/vnet/subnets/default"
	vm := cloud.VM{Name: "vm", ResourceGroup: "rg", Size: "Standard_D2ds_v5", ImageID: v.ID, NIC: "nic", Subnet: subnet}
	_, err = p.CreateVM(ctx, vm)
	cloudtest.RequireError(t, err, http.StatusBadRequest, cloud.CodeInvalidResourceReference, subnet)
	_, err = p.PutVirtualNetwork(ctx, "rg", azsim.VirtualNetwork{Name: "vnet", Location: "westeurope"})
	require.NoError(t, err)
	_, err = p.CreateVM(ctx, vm)
	require.NoError(t, err)
	_, err = p.RunCommand(ctx, "rg", "vm", cloud.RunCommand{Name: "hello", Script: "echo hello"})
	require.NoError(t, err)
	rc, err := p.GetRunCommand(ctx, "rg", "vm", "HELLO")
	require.NoError(t, err)
	assert.Equal(t, cloud.RunFailed, rc.Result.ExecutionState)
	assert.Contains(t, rc.Message, "runs no scripts")

	require.NoError(t, p.DeleteVM(ctx, "rg", "vm"))
	_, err = p.CreateVM(ctx, vm)
	require.NoError(t, err)
	_, err = p.GetRunCommand(ctx, "rg", "vm", "hello")
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeResourceNotFound)
	err = p.DeleteRunCommand(ctx, "rg", "vm", "hello")
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeResourceNotFound)
}
