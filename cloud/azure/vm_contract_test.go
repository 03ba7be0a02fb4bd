package azure_test

import (
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azure"
)

// checkARMAnswers reads a VM and its run commands with the SDK's own
// clients, as ARM answered them to the provider: the models decode the
// fake's answers (times, enums, numbers), and the instance view is ARM's,
// not the provider's reading of it: a script that exited 1 is
// executionState Failed with exitCode 1, its stdout and stderr, and its
// start and end times (azure-cli#26677 shows Azure's answer).
func (w *world) checkARMAnswers(t *testing.T, rg, vm string, passed, failed string) {
	t.Helper()
	cf, err := armcompute.NewClientFactory(w.f.SubscriptionID(), w.f.Credential(), w.f.ClientOptions())
	require.NoError(t, err)

	got, err := cf.NewVirtualMachinesClient().Get(w.ctx, rg, vm, nil)
	require.NoError(t, err)
	p := got.Properties
	require.NotNil(t, p)
	assert.Equal(t, "Succeeded", *p.ProvisioningState)
	assert.Equal(t, loc, *got.Location, "a VM answers its location's name, not its display name")
	require.NotNil(t, p.TimeCreated)
	assert.False(t, p.TimeCreated.IsZero())
	assert.Equal(t, armcompute.OperatingSystemTypesLinux, *p.StorageProfile.OSDisk.OSType)
	assert.True(t, strings.HasSuffix(*p.StorageProfile.OSDisk.ManagedDisk.ID, "/disks/"+cloud.VMOSDiskName(vm)), *p.StorageProfile.OSDisk.ManagedDisk.ID)
	require.Len(t, p.NetworkProfile.NetworkInterfaces, 1, "the NIC the configuration made")
	assert.True(t, strings.HasSuffix(*p.NetworkProfile.NetworkInterfaces[0].ID, "/networkInterfaces/"+azure.NICName(vm)))
	assert.Nil(t, p.OSProfile.AdminPassword)

	runs := cf.NewVirtualMachineRunCommandsClient()
	expand := &armcompute.VirtualMachineRunCommandsClientGetByVirtualMachineOptions{Expand: to("instanceView")}
	ok, err := runs.GetByVirtualMachine(w.ctx, rg, vm, passed, expand)
	require.NoError(t, err)
	iv := ok.Properties.InstanceView
	require.NotNil(t, iv)
	assert.Equal(t, armcompute.ExecutionStateSucceeded, *iv.ExecutionState)
	assert.Equal(t, int32(0), *iv.ExitCode)
	assert.Equal(t, "Microsoft.Compute/virtualMachines/runCommands", *ok.Type)
	assert.Equal(t, "Succeeded", *ok.Properties.ProvisioningState, "treatFailureAsDeploymentFailure false: the platform ran it")

	bad, err := runs.GetByVirtualMachine(w.ctx, rg, vm, failed, expand)
	require.NoError(t, err)
	iv = bad.Properties.InstanceView
	require.NotNil(t, iv)
	assert.Equal(t, armcompute.ExecutionStateFailed, *iv.ExecutionState, "Azure reports a script that exits non-zero as Failed")
	assert.Equal(t, int32(1), *iv.ExitCode)
	assert.NotEmpty(t, *iv.Error, "stderr")
	assert.NotEmpty(t, *iv.ExecutionMessage)
	require.NotNil(t, iv.StartTime)
	require.NotNil(t, iv.EndTime)
	assert.False(t, iv.EndTime.Before(*iv.StartTime))
	assert.Equal(t, "Succeeded", *bad.Properties.ProvisioningState, "a failing script is not a failed deployment")

	plain, err := runs.GetByVirtualMachine(w.ctx, rg, vm, failed, nil)
	require.NoError(t, err)
	assert.Nil(t, plain.Properties.InstanceView, "the instance view needs $expand=instanceView")

	poller, err := runs.BeginDelete(w.ctx, rg, vm, failed, nil)
	require.NoError(t, err)
	// The fake answers 202 without Retry-After: the SDK's default poll
	// (nil options) would wait 30 s before looking again.
	_, err = poller.PollUntilDone(w.ctx, &runtime.PollUntilDoneOptions{Frequency: time.Millisecond})
	require.NoError(t, err)
	_, err = runs.GetByVirtualMachine(w.ctx, rg, vm, failed, nil)
	assert.Error(t, err, "deleted")
}
