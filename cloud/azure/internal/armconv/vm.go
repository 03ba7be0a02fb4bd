package armconv

import (
	"strconv"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azsim"
)

// VMOf reads a VM model (an answer, or the fake's request) into a
// cloud.VM; rg and name stand in for what the model lacks. A VM without
// an OS profile is one of a specialized image.
func VMOf(v *armcompute.VirtualMachine, rg, name string) cloud.VM {
	out := cloud.VM{ID: Deref(v.ID), Name: Deref(v.Name), ResourceGroup: rg, Location: FoldLocation(Deref(v.Location)), Tags: TagsOf(v.Tags)}
	if out.Name == "" {
		out.Name = name
	}
	if rid, err := cloud.ParseResourceID(out.ID); err == nil {
		out.ResourceGroup = rid.ResourceGroup
	}
	p := v.Properties
	if p == nil {
		return out
	}
	out.ProvisioningState, out.VMID, out.Created = Deref(p.ProvisioningState), Deref(p.VMID), Deref(p.TimeCreated)
	if hp := p.HardwareProfile; hp != nil {
		out.Size = StrOf(hp.VMSize)
	}
	if sp := p.StorageProfile; sp != nil {
		if sp.ImageReference != nil {
			out.ImageID = Deref(sp.ImageReference.ID)
		}
		if sp.OSDisk != nil {
			out.OSDiskName = Deref(sp.OSDisk.Name)
			if StrOf(sp.OSDisk.OSType) == cloud.OSTypeWindows {
				out.OSType = cloud.OSTypeWindows
			}
		}
	}
	if sec := p.SecurityProfile; sec != nil {
		out.SecurityType = StrOf(sec.SecurityType)
	}
	out.Specialized = p.OSProfile == nil
	if op := p.OSProfile; op != nil {
		out.ComputerName, out.AdminUsername, out.AdminPassword = Deref(op.ComputerName), Deref(op.AdminUsername), Deref(op.AdminPassword)
		if op.WindowsConfiguration != nil {
			out.OSType = cloud.OSTypeWindows
		}
	}
	if np := p.NetworkProfile; np != nil {
		for _, nic := range np.NetworkInterfaces {
			if nic != nil && out.NIC == "" {
				out.NIC = Deref(nic.ID)[strings.LastIndexByte(Deref(nic.ID), '/')+1:]
			}
		}
		for _, c := range np.NetworkInterfaceConfigurations {
			if c == nil || c.Properties == nil || out.NIC != "" {
				continue
			}
			out.NIC = Deref(c.Name)
			for _, ipc := range c.Properties.IPConfigurations {
				if ipc != nil && ipc.Properties != nil && ipc.Properties.Subnet != nil {
					out.Subnet = Deref(ipc.Properties.Subnet.ID)
				}
			}
		}
	}
	return out
}

// VM is a VM as ARM answers it (VirtualMachine_Get.json): the OS disk made
// from the image, the network interface of its configuration (deleted
// with it), and the OS profile the Azure target sends, without its
// password.
func VM(v cloud.VM) armcompute.VirtualMachine {
	group := v.ID[:max(0, strings.Index(strings.ToLower(v.ID), "/providers/"))]
	osType := armcompute.OperatingSystemTypesLinux
	if v.OSType == cloud.OSTypeWindows {
		osType = armcompute.OperatingSystemTypesWindows
	}
	p := &armcompute.VirtualMachineProperties{
		ProvisioningState: To(orSucceeded(v.ProvisioningState)), VMID: Opt[string](v.VMID),
		HardwareProfile: &armcompute.HardwareProfile{VMSize: To(armcompute.VirtualMachineSizeTypes(v.Size))},
		StorageProfile: &armcompute.StorageProfile{ImageReference: &armcompute.ImageReference{ID: To(v.ImageID)}, DataDisks: []*armcompute.DataDisk{},
			OSDisk: &armcompute.OSDisk{Name: To(v.OSDiskName), OSType: To(osType), CreateOption: To(armcompute.DiskCreateOptionTypesFromImage),
				Caching: To(armcompute.CachingTypesReadWrite), DeleteOption: To(armcompute.DiskDeleteOptionTypesDelete),
				ManagedDisk: &armcompute.ManagedDiskParameters{ID: To(group + "/providers/Microsoft.Compute/disks/" + v.OSDiskName),
					StorageAccountType: To(armcompute.StorageAccountTypes(DiskSKU(v.SecurityType)))}}},
		NetworkProfile: &armcompute.NetworkProfile{},
	}
	if !v.Created.IsZero() {
		p.TimeCreated = To(v.Created.UTC())
	}
	if v.NIC != "" {
		p.NetworkProfile.NetworkInterfaces = []*armcompute.NetworkInterfaceReference{{ID: To(group + "/providers/Microsoft.Network/networkInterfaces/" + v.NIC),
			Properties: &armcompute.NetworkInterfaceReferenceProperties{Primary: To(true), DeleteOption: To(armcompute.DeleteOptionsDelete)}}}
	}
	if v.SecurityType != "" {
		p.SecurityProfile = &armcompute.SecurityProfile{SecurityType: To(armcompute.SecurityTypes(v.SecurityType)),
			UefiSettings: &armcompute.UefiSettings{SecureBootEnabled: To(true), VTpmEnabled: To(true)}}
	}
	if !v.Specialized {
		op := &armcompute.OSProfile{ComputerName: To(v.ComputerName), AdminUsername: To(v.AdminUsername), Secrets: []*armcompute.VaultSecretGroup{},
			LinuxConfiguration: &armcompute.LinuxConfiguration{DisablePasswordAuthentication: To(true)}}
		if osType == armcompute.OperatingSystemTypesWindows {
			op.LinuxConfiguration = nil
			op.WindowsConfiguration = &armcompute.WindowsConfiguration{ProvisionVMAgent: To(true), EnableAutomaticUpdates: To(false)}
		}
		p.OSProfile = op
	}
	return armcompute.VirtualMachine{ID: To(v.ID), Name: To(v.Name), Type: To("Microsoft.Compute/virtualMachines"), Location: To(v.Location),
		Tags: Tags(v.Tags), Properties: p}
}

// RunCommand is a VM's managed run command as ARM answers it; with
// expand, its instance view: a script that ran and exited non-zero is
// executionState Failed with its exit code (azure-cli#26677), one that
// could not run Failed without one, the reason in executionMessage.
func RunCommand(rc azsim.RunCommandState, expand bool) armcompute.VirtualMachineRunCommand {
	res := rc.Result
	p := &armcompute.VirtualMachineRunCommandProperties{ProvisioningState: To(cloud.ProvisioningSucceeded),
		Source:         &armcompute.VirtualMachineRunCommandScriptSource{Script: To(rc.Script)},
		AsyncExecution: To(false), TreatFailureAsDeploymentFailure: To(false)}
	if rc.Timeout > 0 {
		p.TimeoutInSeconds = To(int32(rc.Timeout.Seconds()))
	}
	if expand {
		iv := &armcompute.VirtualMachineRunCommandInstanceView{ExecutionState: To(armcompute.ExecutionState(res.ExecutionState)),
			Output: To(res.Output), Error: To(res.Error), StartTime: To(rc.Started.UTC()), EndTime: To(rc.Ended.UTC()), ExecutionMessage: Opt[string](rc.Message)}
		if res.ExecutionState == cloud.RunSucceeded {
			iv.ExitCode = To(int32(res.ExitCode))
			if res.ExitCode != 0 {
				iv.ExecutionState = To(armcompute.ExecutionStateFailed)
				iv.ExecutionMessage = To("The script exited with code " + strconv.Itoa(res.ExitCode) + ".")
			}
		}
		p.InstanceView = iv
	}
	return armcompute.VirtualMachineRunCommand{ID: To(rc.ID), Name: To(rc.Name), Type: To("Microsoft.Compute/virtualMachines/runCommands"),
		Location: To(rc.Location), Properties: p}
}
