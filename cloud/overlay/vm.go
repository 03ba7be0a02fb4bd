package overlay

import (
	"context"
	"strings"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/vhd"
)

// Change kinds of test_vm's operations.
const (
	KindVM         = cloud.KindVM
	KindRunCommand = cloud.KindRunCommand
)

const tVM = "Microsoft.Compute/virtualMachines"

func pVM(rg, n string) []seg { return []seg{{tGroup, rg}, {tVM, n}} }

// GetVM implements cloud.Provider.
func (p *Provider) GetVM(ctx context.Context, rg, name string) (*cloud.VM, error) {
	return read(ctx, p, pVM(rg, name), func() (*cloud.VM, error) { return p.base.GetVM(ctx, rg, name) })
}

// CreateVM implements cloud.Provider: records the VM and its OS disk, made
// from a gallery version replicated to the VM's location or a managed
// image there; an existing VM of the same image is returned.
func (p *Provider) CreateVM(ctx context.Context, in cloud.VM) (*cloud.VM, error) {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	rg, err := p.GetResourceGroup(ctx, in.ResourceGroup)
	if err != nil {
		return nil, err
	}
	id := cloud.VMID(p.sub, rg.Name, in.Name)
	old, exists, err := existing(p.GetVM(ctx, rg.Name, in.Name))
	if err != nil {
		return nil, err
	}
	if exists {
		if !strings.EqualFold(old.ImageID, in.ImageID) {
			return nil, azrules.PropertyChange(old.ID, "storageProfile.imageReference")
		}
		return old, nil
	}
	if err := azrules.CheckVMSize(id, in.Size); err != nil {
		return nil, err
	}
	security, err := azrules.DiskSecurityType(id, in.SecurityType)
	if err != nil {
		return nil, err
	}
	loc, err := p.resolveLocation(ctx, orDefault(in.Location, rg.Location), tVM, id)
	if err != nil {
		return nil, err
	}
	hyperV, size, err := p.vmImage(ctx, in.ImageID, id, loc)
	if err != nil {
		return nil, err
	}
	if err := azrules.CheckVMSecurity(id, security, in.ImageID, hyperV); err != nil {
		return nil, err
	}
	diskName := cloud.VMOSDiskName(in.Name)
	disk := cloud.Disk{
		ID: cloud.DiskID(p.sub, rg.Name, diskName), Name: diskName, ResourceGroup: rg.Name, Location: loc,
		SecurityType: security, HyperVGeneration: hyperV, SizeBytes: size, Tags: in.Tags,
	}
	if cloud.ImageIsGalleryVersion(in.ImageID) {
		disk.SourceImageVersionID = in.ImageID
	}
	vm := cloud.VM{
		ID: id, Name: in.Name, ResourceGroup: rg.Name, Location: loc, Size: in.Size, ImageID: in.ImageID,
		SecurityType: security, OSDiskName: diskName, ProvisioningState: cloud.ProvisioningSucceeded, Tags: in.Tags,
	}
	p.mu.Lock()
	p.objs[pathKey(pDisk(rg.Name, diskName))] = &entry{path: pDisk(rg.Name, diskName), v: clone(disk), fresh: true}
	p.mu.Unlock()
	return record(p, pVM(rg.Name, in.Name), vm, true, change(false, KindVM, id)), nil
}

// vmImage checks a VM's image and returns its Hyper-V generation and the
// OS disk's size.
func (p *Provider) vmImage(ctx context.Context, imageID, vmID, loc string) (string, int64, error) {
	if cloud.ImageIsGalleryVersion(imageID) {
		def, v, err := p.versionByID(ctx, imageID, vmID)
		if err != nil {
			return "", 0, err
		}
		if err := azrules.CheckDiskSource(vmID, v, def.HyperVGeneration, loc, ""); err != nil {
			return "", 0, err // the VM's OS disk is made from the version in loc
		}
		return def.HyperVGeneration, v.SizeBytes + vhd.FooterSize, nil
	}
	rid, err := cloud.ParseResourceID(imageID)
	if err != nil || !rid.Is("Microsoft.Compute", "images") {
		return "", 0, azrules.InvalidParameter(vmID, "'%s' is neither a gallery image version nor a managed image id.", imageID)
	}
	img, err := p.GetManagedImage(ctx, rid.ResourceGroup, rid.Names[0])
	if err != nil {
		return "", 0, err
	}
	if err := azrules.CheckVMImageLocation(vmID, img.ID, img.Location, loc); err != nil {
		return "", 0, err
	}
	return img.HyperVGeneration, img.SizeBytes + vhd.FooterSize, nil
}

// DeleteVM implements cloud.Provider: records the deletion of the VM and
// its OS disk.
func (p *Provider) DeleteVM(ctx context.Context, rg, name string) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	vm, err := p.GetVM(ctx, rg, name)
	if err != nil {
		return err
	}
	p.remove(pVM(vm.ResourceGroup, vm.Name), Change{Op: OpDelete, Kind: KindVM, ID: vm.ID})
	p.mu.Lock()
	p.objs[pathKey(pDisk(vm.ResourceGroup, vm.OSDiskName))] = &entry{path: pDisk(vm.ResourceGroup, vm.OSDiskName), deleted: true}
	p.mu.Unlock()
	return nil
}

// DeleteResourceGroup implements cloud.Provider: records the deletion of
// the group, which hides everything in it.
func (p *Provider) DeleteResourceGroup(ctx context.Context, name string) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	rg, err := p.GetResourceGroup(ctx, name)
	if err != nil {
		return err
	}
	p.remove(pGroup(rg.Name), Change{Op: OpDelete, Kind: KindResourceGroup, ID: rg.ID})
	return nil
}

// RunCommand implements cloud.Provider: records the run command on an
// existing VM; a dry run runs nothing, so the command succeeds.
func (p *Provider) RunCommand(ctx context.Context, rg, vmName string, cmd cloud.RunCommand) (*cloud.RunCommandResult, error) {
	vm, err := p.GetVM(ctx, rg, vmName)
	if err != nil {
		return nil, err
	}
	for _, c := range cmd.Simulated {
		if err := c.Validate(); err != nil {
			return nil, azrules.InvalidParameter(vm.ID+"/runCommands/"+cmd.Name, "%v", err)
		}
	}
	if cmd.SimulatedScan != nil {
		if err := cmd.SimulatedScan.Validate(); err != nil {
			return nil, azrules.InvalidParameter(vm.ID+"/runCommands/"+cmd.Name, "%v", err)
		}
	}
	p.mu.Lock()
	p.changes = append(p.changes, Change{Op: OpCreate, Kind: KindRunCommand, ID: vm.ID + "/runCommands/" + cmd.Name})
	p.mu.Unlock()
	return &cloud.RunCommandResult{ExecutionState: cloud.RunSucceeded, Output: "(dry run: not run)\n"}, nil
}
