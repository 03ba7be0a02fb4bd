package overlay_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/cloudtest"
)

// A test VM in a dry run: recorded, checked as the target would, its run
// commands answered without running, its group's deletion hiding it; the
// base never changes.
func TestVMsInADryRun(t *testing.T) {
	f := newFixture(t)
	before := f.snapshot(t)
	p := f.overlay(t)

	_, err := p.CreateResourceGroup(ctx, cloud.ResourceGroup{Name: "imgflow-testvm-1", Location: "westeurope"})
	require.NoError(t, err)
	vm, err := p.CreateVM(ctx, cloud.VM{Name: "vm1", ResourceGroup: "imgflow-testvm-1", Size: "Standard_D2ds_v5", ImageID: f.v1.ID})
	require.NoError(t, err)
	assert.Equal(t, cloud.ProvisioningSucceeded, vm.ProvisioningState)
	assert.Equal(t, "westeurope", vm.Location)
	disk, err := p.GetDisk(ctx, "imgflow-testvm-1", vm.OSDiskName)
	require.NoError(t, err)
	assert.Equal(t, int64(vhdBytes+512), disk.SizeBytes)

	_, err = p.CreateVM(ctx, cloud.VM{Name: "vm2", ResourceGroup: "imgflow-testvm-1", Location: "eastus", Size: "Standard_D2ds_v5", ImageID: f.v1.ID})
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeGalleryImageNotFound)
	_, err = p.CreateVM(ctx, cloud.VM{Name: "vm2", ResourceGroup: "imgflow-testvm-1", ImageID: f.v1.ID})
	cloudtest.RequireError(t, err, http.StatusBadRequest, cloud.CodeInvalidParameter)

	res, err := p.RunCommand(ctx, "imgflow-testvm-1", "vm1", cloud.RunCommand{Name: "cse", Script: "true",
		Simulated: []cloud.GuestCheck{{Kind: cloud.GuestFileExists, Path: "/x"}}})
	require.NoError(t, err)
	assert.True(t, res.Passed(), "a dry run runs nothing")
	_, err = p.RunCommand(ctx, "imgflow-testvm-1", "vm1", cloud.RunCommand{Name: "bad", Simulated: []cloud.GuestCheck{{Kind: "nope"}}})
	cloudtest.RequireError(t, err, http.StatusBadRequest, cloud.CodeInvalidParameter)
	_, err = p.RunCommand(ctx, "imgflow-testvm-1", "vm1", cloud.RunCommand{Name: "bad-scan", SimulatedScan: &cloud.GuestScan{Kind: cloud.ScanTrivyRootfs, Severity: "SEVERE"}})
	cloudtest.RequireError(t, err, http.StatusBadRequest, cloud.CodeInvalidParameter)

	require.NoError(t, p.DeleteResourceGroup(ctx, "imgflow-testvm-1"))
	_, err = p.GetVM(ctx, "imgflow-testvm-1", "vm1")
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeResourceGroupNotFound)
	assert.Equal(t, []cloud.Change{{Op: cloud.OpCreate, Kind: cloud.KindVM, ID: vm.ID}}, changesOf(p, cloud.KindVM))
	assert.Equal(t, []cloud.Change{{Op: cloud.OpCreate, Kind: cloud.KindRunCommand, ID: vm.ID + "/runCommands/cse"}}, changesOf(p, cloud.KindRunCommand))
	assert.Equal(t, before, f.snapshot(t), "the base never changes")
}
