package azure

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources/v3"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/cloud/azure/internal/armconv"
)

// test_vm's VMs. The network interface is made by the VM itself
// (networkProfile.networkInterfaceConfigurations, networkApiVersion
// 2020-11-01) with deleteOption Delete, as is the OS disk, so deleting the
// VM deletes both; the virtual network they need is a generic resource
// PUT, so imgflow needs no armnetwork client. The VM has no public
// address: run commands reach it through the VM agent.

// networkAPIVersion is the Microsoft.Network api-version of the VNet PUT.
const networkAPIVersion = "2024-05-01"

// adminUser is the VM's admin account (generalized images need one); its
// SSH key is generated per VM and its private half never kept: nobody
// logs in, run commands go through the agent.
const adminUser = "imgflow"

// VNetName is the virtual network test_vm's VM gets in its group.
func VNetName(vm string) string { return vm + "-vnet" }

// NICName is the network interface the VM makes for itself.
func NICName(vm string) string { return vm + "-nic" }

func (p *Provider) vnetID(rg, vm string) string {
	return cloud.ResourceGroupID(p.sub, rg) + "/providers/Microsoft.Network/virtualNetworks/" + VNetName(vm)
}

// GetVM implements cloud.Provider.
func (p *Provider) GetVM(ctx context.Context, rg, name string) (*cloud.VM, error) {
	res, err := p.vms.Get(ctx, rg, name, nil)
	if err != nil {
		return nil, opError("get VM", name, azErr(err, cloud.VMID(p.sub, rg, name)))
	}
	return vmOut(&res.VirtualMachine, rg, name), nil
}

// CreateVM implements cloud.Provider: the virtual network, then the VM
// with its OS disk and network interface; it returns once the VM is
// provisioned.
func (p *Provider) CreateVM(ctx context.Context, in cloud.VM) (*cloud.VM, error) {
	id := cloud.VMID(p.sub, in.ResourceGroup, in.Name)
	loc := in.Location
	if loc == "" {
		g, err := p.GetResourceGroup(ctx, in.ResourceGroup)
		if err != nil {
			return nil, opError("create VM", in.Name, err)
		}
		loc = g.Location
	}
	subnet, err := p.ensureVNet(ctx, in.ResourceGroup, in.Name, loc)
	if err != nil {
		return nil, opError("create VM", in.Name, err)
	}
	body, err := vmBody(in, loc, subnet)
	if err != nil {
		return nil, opError("create VM", in.Name, err)
	}
	poller, err := p.vms.BeginCreateOrUpdate(ctx, in.ResourceGroup, in.Name, body, nil)
	if err == nil {
		_, err = wait(ctx, p, "create VM "+in.Name, poller)
	}
	if err != nil {
		return nil, opError("create VM", in.Name, azErr(err, id))
	}
	return p.GetVM(ctx, in.ResourceGroup, in.Name)
}

// ensureVNet creates the VM's virtual network with one subnet and returns
// the subnet's id.
func (p *Provider) ensureVNet(ctx context.Context, rg, vm, loc string) (string, error) {
	id := p.vnetID(rg, vm)
	body := armresources.GenericResource{
		Location: to(loc),
		Properties: map[string]any{
			"addressSpace": map[string]any{"addressPrefixes": []string{"10.0.0.0/16"}},
			"subnets":      []any{map[string]any{"name": "default", "properties": map[string]any{"addressPrefix": "10.0.0.0/24"}}},
		},
	}
	poller, err := p.generic.BeginCreateOrUpdateByID(ctx, id, networkAPIVersion, body, nil)
	if err == nil {
		_, err = wait(ctx, p, "create virtual network "+VNetName(vm), poller)
	}
	if err != nil {
		return "", opError("create virtual network", VNetName(vm), azErr(err, id))
	}
	return id + "/subnets/default", nil
}

// vmBody is the VM's PUT body.
func vmBody(in cloud.VM, loc, subnet string) (armcompute.VirtualMachine, error) {
	osDisk := &armcompute.OSDisk{
		Name:         to(cloud.VMOSDiskName(in.Name)),
		CreateOption: to(armcompute.DiskCreateOptionTypesFromImage),
		DeleteOption: to(armcompute.DiskDeleteOptionTypesDelete),
		ManagedDisk:  &armcompute.ManagedDiskParameters{StorageAccountType: to(armcompute.StorageAccountTypes(diskSKUFor(in.SecurityType)))},
	}
	props := &armcompute.VirtualMachineProperties{
		HardwareProfile: &armcompute.HardwareProfile{VMSize: to(armcompute.VirtualMachineSizeTypes(in.Size))},
		StorageProfile:  &armcompute.StorageProfile{ImageReference: &armcompute.ImageReference{ID: to(in.ImageID)}, OSDisk: osDisk},
		NetworkProfile: &armcompute.NetworkProfile{
			NetworkAPIVersion: to(armcompute.NetworkAPIVersionTwoThousandTwenty1101),
			NetworkInterfaceConfigurations: []*armcompute.VirtualMachineNetworkInterfaceConfiguration{{
				Name: to(NICName(in.Name)),
				Properties: &armcompute.VirtualMachineNetworkInterfaceConfigurationProperties{
					Primary:      to(true),
					DeleteOption: to(armcompute.DeleteOptionsDelete),
					IPConfigurations: []*armcompute.VirtualMachineNetworkInterfaceIPConfiguration{{
						Name:       to("ipconfig1"),
						Properties: &armcompute.VirtualMachineNetworkInterfaceIPConfigurationProperties{Subnet: &armcompute.SubResource{ID: to(subnet)}},
					}},
				},
			}},
		},
	}
	switch in.SecurityType {
	case "":
	case SecurityTrustedLaunch, SecurityConfidentialVM:
		props.SecurityProfile = &armcompute.SecurityProfile{
			SecurityType: to(armcompute.SecurityTypes(in.SecurityType)),
			UefiSettings: &armcompute.UefiSettings{SecureBootEnabled: to(true), VTpmEnabled: to(true)},
		}
		if in.SecurityType == SecurityConfidentialVM {
			osDisk.ManagedDisk.SecurityProfile = &armcompute.VMDiskSecurityProfile{SecurityEncryptionType: to(armcompute.SecurityEncryptionTypesVMGuestStateOnly)}
		}
	default:
		return armcompute.VirtualMachine{}, fmt.Errorf("security type %q: use %s or %s", in.SecurityType, SecurityTrustedLaunch, SecurityConfidentialVM)
	}
	if !in.Specialized && strings.EqualFold(in.OSType, cloud.OSTypeWindows) {
		pw, err := windowsPassword()
		if err != nil {
			return armcompute.VirtualMachine{}, err
		}
		props.OSProfile = &armcompute.OSProfile{
			ComputerName:  to(windowsComputerName(in.Name)),
			AdminUsername: to(adminUser),
			AdminPassword: to(pw),
			// Updates would restart the VM under its checks.
			WindowsConfiguration: &armcompute.WindowsConfiguration{ProvisionVMAgent: to(true), EnableAutomaticUpdates: to(false)},
		}
	} else if !in.Specialized {
		key, err := sshPublicKey()
		if err != nil {
			return armcompute.VirtualMachine{}, err
		}
		props.OSProfile = &armcompute.OSProfile{
			ComputerName:  to(computerName(in.Name)),
			AdminUsername: to(adminUser),
			LinuxConfiguration: &armcompute.LinuxConfiguration{
				DisablePasswordAuthentication: to(true),
				SSH: &armcompute.SSHConfiguration{PublicKeys: []*armcompute.SSHPublicKey{{
					Path: to("/home/" + adminUser + "/.ssh/authorized_keys"), KeyData: to(key),
				}}},
			},
		}
	}
	return armcompute.VirtualMachine{Location: to(loc), Tags: tagsIn(in.Tags), Properties: props}, nil
}

// computerName is the VM's host name: Linux allows 64 characters.
func computerName(vm string) string {
	if len(vm) > 64 {
		return vm[:64]
	}
	return vm
}

// windowsComputerName is a Windows VM's host name: at most 15 characters
// (azrules.MaxWindowsComputerName); test_vm's names end in their hash.
func windowsComputerName(vm string) string {
	if len(vm) > azrules.MaxWindowsComputerName {
		return vm[len(vm)-azrules.MaxWindowsComputerName:]
	}
	return vm
}

// windowsPassword is a fresh admin password for a Windows VM, as Azure
// wants it (azrules.CheckVMOSProfile): 32 random characters with at least
// one of each class. Nobody logs in (run commands go through the agent):
// it is sent in the PUT and dropped, never printed, journaled or kept.
func windowsPassword() (string, error) {
	classes := []string{"abcdefghijkmnopqrstuvwxyz", "ABCDEFGHJKLMNPQRSTUVWXYZ", "23456789", "-_.+!#%"}
	all := strings.Join(classes, "")
	buf := make([]byte, 32)
	if _, err := rand.Read(buf); err != nil {
		return "", fmt.Errorf("generate the VM's admin password: %w", err)
	}
	pw := make([]byte, len(buf))
	for i, b := range buf {
		set := all
		if i < len(classes) {
			set = classes[i] // the first of each class, at a random place below
		}
		pw[i] = set[int(b)%len(set)]
	}
	j := int(buf[0]) % len(pw)
	pw[0], pw[j] = pw[j], pw[0]
	return string(pw), nil
}

// sshPublicKey is a fresh ed25519 public key in OpenSSH's authorized_keys
// format; the private key is dropped.
func sshPublicKey() (string, error) {
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", fmt.Errorf("generate the VM's SSH key: %w", err)
	}
	const typ = "ssh-ed25519"
	var wire []byte
	for _, part := range [][]byte{[]byte(typ), pub} {
		wire = binary.BigEndian.AppendUint32(wire, uint32(len(part)))
		wire = append(wire, part...)
	}
	return typ + " " + base64.StdEncoding.EncodeToString(wire) + " imgflow-test-vm", nil
}

func vmOut(v *armcompute.VirtualMachine, rg, name string) *cloud.VM {
	out := armconv.VMOf(v, rg, name)
	return &out
}

// DeleteVM implements cloud.Provider: the VM, and with it (deleteOption
// Delete) its OS disk and network interface.
func (p *Provider) DeleteVM(ctx context.Context, rg, name string) error {
	id := cloud.VMID(p.sub, rg, name)
	err := waitDelete(ctx, p, "delete VM "+name, id, func(ctx context.Context) (*runtime.Poller[armcompute.VirtualMachinesClientDeleteResponse], error) {
		return p.vms.BeginDelete(ctx, rg, name, nil)
	})
	return opError("delete VM", name, azErr(err, id))
}

// DeleteResourceGroup implements cloud.Provider: the group and everything
// in it; it returns once Azure deleted them.
func (p *Provider) DeleteResourceGroup(ctx context.Context, name string) error {
	poller, err := p.groups.BeginDelete(ctx, name, nil)
	if err == nil {
		_, err = wait(ctx, p, "delete resource group "+name, poller)
	}
	return opError("delete resource group", name, azErr(err, cloud.ResourceGroupID(p.sub, name)))
}

// RunCommand implements cloud.Provider with a managed run command
// (virtualMachines/runCommands PUT, synchronous: asyncExecution false),
// whose instance view holds the script's exit code and the last 4 KB of
// its stdout and stderr (the older runCommand action returns only the two
// streams); with cmd.OutputBlob/ErrorBlob the whole streams come from the
// blobs the agent wrote (runoutput.go).
// treatFailureAsDeploymentFailure stays false, so that a failing script
// is a result to report, not a failed deployment.
func (p *Provider) RunCommand(ctx context.Context, rg, vm string, cmd cloud.RunCommand) (*cloud.RunCommandResult, error) {
	id := cloud.VMID(p.sub, rg, vm) + "/runCommands/" + cmd.Name
	v, err := p.GetVM(ctx, rg, vm)
	if err != nil {
		return nil, opError("run command", cmd.Name, err)
	}
	props := &armcompute.VirtualMachineRunCommandProperties{
		Source:                          &armcompute.VirtualMachineRunCommandScriptSource{Script: to(cmd.Script)},
		AsyncExecution:                  to(false),
		TreatFailureAsDeploymentFailure: to(false),
	}
	if cmd.Timeout > 0 {
		props.TimeoutInSeconds = to(int32(cmd.Timeout.Seconds()))
	}
	for _, name := range slices.Sorted(maps.Keys(cmd.SecretEnv)) {
		props.ProtectedParameters = append(props.ProtectedParameters, &armcompute.RunCommandInputParameter{Name: to(name), Value: to(cmd.SecretEnv[name])})
	}
	outputs, err := p.prepareRunOutputs(ctx, cmd)
	if err != nil {
		return nil, opError("run command", cmd.Name, err)
	}
	if outputs.outURI != "" {
		props.OutputBlobURI = to(outputs.outURI)
	}
	if outputs.errURI != "" {
		props.ErrorBlobURI = to(outputs.errURI)
	}
	poller, err := p.runs.BeginCreateOrUpdate(ctx, rg, vm, cmd.Name, armcompute.VirtualMachineRunCommand{Location: to(v.Location), Properties: props}, nil)
	if err == nil {
		_, err = wait(ctx, p, "run command "+cmd.Name+" in VM "+vm, poller)
	}
	if err != nil {
		return nil, opError("run command", cmd.Name, azErr(err, id))
	}
	res, err := p.runs.GetByVirtualMachine(ctx, rg, vm, cmd.Name, &armcompute.VirtualMachineRunCommandsClientGetByVirtualMachineOptions{Expand: to("instanceView")})
	if err != nil {
		return nil, opError("read run command", cmd.Name, azErr(err, id))
	}
	if res.Properties == nil || res.Properties.InstanceView == nil || res.Properties.InstanceView.ExecutionState == nil {
		return nil, opError("read run command", cmd.Name, fmt.Errorf("%s: the answer has no instanceView.executionState", id))
	}
	iv := res.Properties.InstanceView
	out := &cloud.RunCommandResult{
		ExecutionState: strOf(iv.ExecutionState),
		ExitCode:       int(deref(iv.ExitCode)),
		Output:         deref(iv.Output),
		Error:          deref(iv.Error),
	}
	if ranToFailure(iv) {
		// Azure reports a script that ran to its end and exited non-zero
		// as executionState Failed with that exit code (azure-cli#26677);
		// imgflow's result calls it a finished run with a failing exit
		// code, as the local target does, so the check's failure says so.
		out.ExecutionState = cloud.RunSucceeded
	}
	if err := p.collect(ctx, outputs, out); err != nil {
		return nil, opError("run command", cmd.Name, err)
	}
	if out.Error == "" && !strings.EqualFold(out.ExecutionState, cloud.RunSucceeded) {
		out.Error = deref(iv.ExecutionMessage)
	}
	return out, nil
}

// ranToFailure reports whether a run command's instance view is a script
// that ended with a non-zero exit code, rather than one that could not run
// (no exit code), timed out or was canceled.
func ranToFailure(iv *armcompute.VirtualMachineRunCommandInstanceView) bool {
	return strOf(iv.ExecutionState) == string(armcompute.ExecutionStateFailed) && iv.ExitCode != nil && *iv.ExitCode != 0 && iv.EndTime != nil
}
