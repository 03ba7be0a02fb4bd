package local

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/cloud/guest"
)

// Virtual machines. No guest boots: a VM is its state and its OS disk, a
// data file copied from the image like any disk's, and a run command
// evaluates the check's simulated form against the content record the
// simulated build wrote into that disk (guest.GuestContent).

const typeVM = "Microsoft.Compute/virtualMachines"

func (p *Provider) lookupVM(st *State, rgName, name string) (*ResourceGroupState, *cloud.VM, error) {
	rg, err := p.lookupRG(st, rgName)
	if err != nil {
		return nil, nil, err
	}
	vm, ok := rg.VMs[key(name)]
	if !ok {
		return nil, nil, azrules.ResourceNotFound(cloud.VMID(st.SubscriptionID, rg.Name, name), typeVM, name, rg.Name)
	}
	return rg, vm, nil
}

// GetVM implements cloud.Provider.
func (p *Provider) GetVM(ctx context.Context, rgName, name string) (*cloud.VM, error) {
	var out cloud.VM
	err := p.view(ctx, func(st *State) error {
		_, vm, err := p.lookupVM(st, rgName, name)
		if err != nil {
			return err
		}
		out = *vm
		out.Tags = copyTags(vm.Tags)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateVM implements cloud.Provider: the VM and its OS disk, a copy of
// the image's content, made at once (provisioningState Succeeded). The
// image must be a gallery version replicated to the VM's location (by
// default the group's) or a managed image there.
func (p *Provider) CreateVM(ctx context.Context, in cloud.VM) (*cloud.VM, error) {
	var out cloud.VM
	err := p.updateWithData(ctx, func(st *State) (*dataCopy, error) {
		rg, err := p.lookupRG(st, in.ResourceGroup)
		if err != nil {
			return nil, err
		}
		id := cloud.VMID(st.SubscriptionID, rg.Name, in.Name)
		if vm, ok := rg.VMs[key(in.Name)]; ok {
			if !strings.EqualFold(vm.ImageID, in.ImageID) {
				return nil, azrules.PropertyChange(vm.ID, "storageProfile.imageReference")
			}
			out = *vm
			out.Tags = copyTags(vm.Tags)
			return nil, nil
		}
		if err := azrules.CheckVMSize(id, in.Size); err != nil {
			return nil, err
		}
		security, err := azrules.DiskSecurityType(id, in.SecurityType)
		if err != nil {
			return nil, err
		}
		loc, err := p.locIndex.Resolve(orDefault(in.Location, rg.Location), typeVM, id)
		if err != nil {
			return nil, err
		}
		src, hyperV, err := p.vmImage(st, in.ImageID, id, loc)
		if err != nil {
			return nil, err
		}
		if err := azrules.CheckVMSecurity(id, security, in.ImageID, hyperV); err != nil {
			return nil, err
		}
		diskName := cloud.VMOSDiskName(in.Name)
		if _, ok := rg.Disks[key(diskName)]; ok {
			return nil, cloud.Conflict(cloud.CodeConflict, cloud.DiskID(st.SubscriptionID, rg.Name, diskName),
				"A disk named '%s' already exists in resource group '%s'.", diskName, rg.Name)
		}
		disk := &cloud.Disk{
			ID: cloud.DiskID(st.SubscriptionID, rg.Name, diskName), Name: diskName, ResourceGroup: rg.Name, Location: loc,
			SecurityType: security, HyperVGeneration: hyperV, SizeBytes: src.size, Tags: copyTags(in.Tags),
		}
		if cloud.ImageIsGalleryVersion(in.ImageID) {
			disk.SourceImageVersionID = in.ImageID
		}
		rg.Disks[key(diskName)] = disk
		vm := &cloud.VM{
			ID: id, Name: in.Name, ResourceGroup: rg.Name, Location: loc, Size: in.Size, ImageID: in.ImageID,
			SecurityType: security, OSDiskName: diskName, ProvisioningState: cloud.ProvisioningSucceeded, Tags: copyTags(in.Tags),
		}
		if rg.VMs == nil {
			rg.VMs = map[string]*cloud.VM{}
		}
		rg.VMs[key(in.Name)] = vm
		out = *vm
		out.Tags = copyTags(vm.Tags)
		return &dataCopy{id: disk.ID, src: src}, nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// vmImage resolves a VM's image: its content and Hyper-V generation.
func (p *Provider) vmImage(st *State, imageID, vmID, loc string) (content, string, error) {
	if cloud.ImageIsGalleryVersion(imageID) {
		def, v, err := p.versionByID(st, imageID, vmID)
		if err != nil {
			return content{}, "", err
		}
		if err := azrules.CheckDiskSource(vmID, v, def.HyperVGeneration, loc, ""); err != nil {
			return content{}, "", err // the VM's OS disk is made from the version in loc
		}
		c, err := p.resourceContent(st, v.ID, v.Source, 0)
		return c, def.HyperVGeneration, err
	}
	img, err := p.managedImageByID(st, imageID, vmID)
	if err != nil {
		return content{}, "", err
	}
	if err := azrules.CheckVMImageLocation(vmID, img.ID, img.Location, loc); err != nil {
		return content{}, "", err
	}
	c, err := p.resourceContent(st, img.ID, img.Source, 0)
	return c, img.HyperVGeneration, err
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// DeleteVM implements cloud.Provider: the VM and its OS disk.
func (p *Provider) DeleteVM(ctx context.Context, rgName, name string) error {
	return p.updateRemoving(ctx, func(st *State) (string, error) {
		rg, vm, err := p.lookupVM(st, rgName, name)
		if err != nil {
			return "", err
		}
		delete(rg.VMs, key(vm.Name))
		d, ok := rg.Disks[key(vm.OSDiskName)]
		if !ok {
			return "", nil
		}
		delete(rg.Disks, key(d.Name))
		delete(rg.DiskGrants, key(d.Name))
		return p.forgetData(d.ID), nil
	})
}

// DeleteResourceGroup implements cloud.Provider: the group and everything
// in it, with their data files.
func (p *Provider) DeleteResourceGroup(ctx context.Context, name string) error {
	return p.updateRemovingAll(ctx, func(st *State) ([]string, error) {
		rg, err := p.lookupRG(st, name)
		if err != nil {
			return nil, err
		}
		var files []string
		for _, img := range rg.Images {
			files = append(files, p.forgetData(img.ID))
		}
		for _, d := range rg.Disks {
			files = append(files, p.forgetData(d.ID))
		}
		for _, g := range rg.Galleries {
			for _, def := range g.Definitions {
				for _, v := range def.Versions {
					files = append(files, p.forgetData(v.ID))
				}
			}
		}
		for _, sa := range rg.StorageAccounts {
			for container, c := range sa.Containers {
				for blob := range c.Blobs {
					files = append(files, p.blobFile(sa.Name, container, blob))
				}
			}
		}
		delete(st.ResourceGroups, key(rg.Name))
		return files, nil
	})
}

// RunCommand implements cloud.Provider: cmd.Simulated (or
// cmd.SimulatedScan) evaluated against the content record of the VM's OS
// disk. A command without a simulated form cannot run here. As on Azure,
// the streams are cut to their last RunCommandOutputMax bytes unless the
// command has output blobs, whose container must exist; the local target
// keeps no append blobs, so the whole streams are returned directly.
func (p *Provider) RunCommand(ctx context.Context, rgName, vmName string, cmd cloud.RunCommand) (*cloud.RunCommandResult, error) {
	var disk content
	var vmID string
	err := p.view(ctx, func(st *State) error {
		rg, vm, err := p.lookupVM(st, rgName, vmName)
		if err != nil {
			return err
		}
		vmID = vm.ID
		d, ok := rg.Disks[key(vm.OSDiskName)]
		if !ok {
			return cloud.Conflict(cloud.CodeOperationNotAllowed, vm.ID, "The VM '%s' has no OS disk.", vm.Name)
		}
		disk = content{path: p.dataFile(d.ID), size: d.SizeBytes}
		for _, ref := range []*cloud.BlobRef{cmd.OutputBlob, cmd.ErrorBlob} {
			if ref == nil {
				continue
			}
			if _, _, err := p.lookupContainer(st, *ref); err != nil {
				return fmt.Errorf("run command %s: output blob %s: %w", cmd.Name, ref.URL(), err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(cmd.Simulated) == 0 && cmd.SimulatedScan == nil {
		return nil, azrules.InvalidParameter(vmID+"/runCommands/"+cmd.Name,
			"The local target runs no scripts: run command '%s' needs a simulated form (the check's local = [...]) to be evaluated against the image's recorded content.", cmd.Name)
	}
	g, err := readGuestContent(disk.path)
	if err != nil {
		return nil, fmt.Errorf("run command %s in VM %s: %w", cmd.Name, vmName, err)
	}
	res, err := guest.Simulate(cmd.Simulated, cmd.SimulatedScan, g, disk.size)
	if err != nil {
		return nil, fmt.Errorf("run command %s in VM %s: %w", cmd.Name, vmName, err)
	}
	if cmd.OutputBlob == nil {
		res.Output = cloud.TailOutput(res.Output)
	}
	if cmd.ErrorBlob == nil {
		res.Error = cloud.TailOutput(res.Error)
	}
	return res, nil
}

// readGuestContent reads the content record of a disk's data file.
func readGuestContent(path string) (*guest.GuestContent, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return guest.ReadGuestContent(f)
}
