package azsim

import (
	"context"
	"strings"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/internal/deepcopy"
	"github.com/imgflow/imgflow/vhd"
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
	if err := p.load(p.loadVM(ctx, rgName, name)); err != nil {
		return nil, err
	}
	var out cloud.VM
	err := p.view(ctx, func(st *State) error {
		_, vm, err := p.lookupVM(st, rgName, name)
		if err != nil {
			return err
		}
		out = *vm
		out.Tags = deepcopy.Of(vm.Tags)
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
	if err := p.load(p.loadVM(ctx, in.ResourceGroup, in.Name), p.loadID(ctx, in.ImageID)); err != nil {
		return nil, err
	}
	var out cloud.VM
	err := p.updateWithData(ctx, func(t *tx) (*dataCopy, error) {
		st := t.st
		rg, err := p.lookupRG(st, in.ResourceGroup)
		if err != nil {
			return nil, err
		}
		id := cloud.VMID(st.SubscriptionID, rg.Name, in.Name)
		if vm, ok := rg.VMs[key(in.Name)]; ok {
			if !strings.EqualFold(vm.ImageID, in.ImageID) {
				return nil, azrules.PropertyChange(vm.ID, "storageProfile.imageReference")
			}
			vm.Tags = deepcopy.Of(in.Tags)
			t.log(cloud.OpUpdate, cloud.KindVM, id)
			out = *vm
			out.Tags = deepcopy.Of(vm.Tags)
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
		img, src, err := p.vmImage(st, in.ImageID, id, loc)
		if err != nil {
			return nil, err
		}
		// The target gives a specialized image's VM no OS profile.
		if err := azrules.CheckVMOSProfilePresence(id, img.OSState, !in.Specialized); err != nil {
			return nil, err
		}
		win := strings.EqualFold(img.OSType, cloud.OSTypeWindows)
		if in.AdminUsername != "" {
			winConfig := strings.EqualFold(in.OSType, cloud.OSTypeWindows)
			if err := azrules.CheckVMOSProfile(id, img.OSType, in.ComputerName, in.AdminPassword, !winConfig, winConfig); err != nil {
				return nil, err
			}
		}
		if in.NIC != "" {
			nic := []azrules.NICConfig{{Name: in.NIC, Subnets: []string{in.Subnet}}}
			if err := azrules.CheckVMNetwork(id, 0, nic, "2020-11-01", vnetExists(st)); err != nil {
				return nil, err
			}
		}
		hyperV, size := img.HyperVGeneration, img.SizeBytes+vhd.FooterSize
		if err := azrules.CheckVMSecurity(id, security, in.ImageID, hyperV); err != nil {
			return nil, err
		}
		diskName := orDefault(in.OSDiskName, cloud.VMOSDiskName(in.Name))
		if _, ok := rg.Disks[key(diskName)]; ok {
			return nil, cloud.Conflict(cloud.CodeConflict, cloud.DiskID(st.SubscriptionID, rg.Name, diskName),
				"A disk named '%s' already exists in resource group '%s'.", diskName, rg.Name)
		}
		var vmID string // the platform's: none in a dry run
		if !p.dryRun {
			if vmID, err = p.rand.guid(); err != nil {
				return nil, err
			}
		}
		disk := &cloud.Disk{
			ID: cloud.DiskID(st.SubscriptionID, rg.Name, diskName), Name: diskName, ResourceGroup: rg.Name, Location: loc,
			SecurityType: security, HyperVGeneration: hyperV, SizeBytes: size, Tags: deepcopy.Of(in.Tags),
		}
		if cloud.ImageIsGalleryVersion(in.ImageID) {
			disk.SourceImageVersionID = img.ID
		}
		rg.Disks[key(diskName)] = disk
		vm := &cloud.VM{
			ID: id, Name: in.Name, ResourceGroup: rg.Name, Location: loc, Size: in.Size, ImageID: in.ImageID, SecurityType: security,
			Specialized: in.Specialized, OSDiskName: diskName, ComputerName: in.ComputerName, AdminUsername: in.AdminUsername,
			NIC: in.NIC, Subnet: in.Subnet, VMID: vmID, Created: p.stamp(), ProvisioningState: cloud.ProvisioningSucceeded, Tags: deepcopy.Of(in.Tags),
		}
		if win {
			vm.OSType = cloud.OSTypeWindows
		}
		if rg.VMs == nil {
			rg.VMs = map[string]*cloud.VM{}
		}
		rg.VMs[key(in.Name)] = vm
		t.log(cloud.OpCreate, cloud.KindVM, id)
		out = *vm
		out.Tags = deepcopy.Of(vm.Tags)
		return &dataCopy{id: disk.ID, src: src}, nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// VMImage is what a VM gets from its image.
type VMImage struct {
	// ID is the image: the managed image, or the gallery version (a
	// definition's latest when the VM names a definition).
	ID                                string
	OSType, OSState, HyperVGeneration string
	// SizeBytes is the image's virtual size.
	SizeBytes int64
}

// vmImage resolves a VM's image and its content: a managed image in the
// VM's location, or a gallery version replicated there; a definition's
// id means its latest version there
// (VirtualMachine_Create_FromAGeneralizedSharedImage.json).
func (p *Provider) vmImage(st *State, imageID, vmID, loc string) (VMImage, content, error) {
	if cloud.ImageIsGalleryVersion(imageID) {
		def, v, err := p.galleryImage(st, imageID, vmID, loc)
		if err != nil {
			return VMImage{}, content{}, err
		}
		c, err := p.resourceContent(st, v.ID, v.Source, 0)
		return VMImage{ID: v.ID, OSType: def.OSType, OSState: def.OSState, HyperVGeneration: def.HyperVGeneration, SizeBytes: v.SizeBytes}, c, err
	}
	img, err := p.managedImageByID(st, imageID, vmID)
	if err != nil {
		return VMImage{}, content{}, err
	}
	if err := azrules.CheckVMImageLocation(vmID, img.ID, img.Location, loc); err != nil {
		return VMImage{}, content{}, err
	}
	c, err := p.resourceContent(st, img.ID, img.Source, 0)
	return VMImage{ID: img.ID, OSType: img.OSType, OSState: cloud.OSStateGeneralized, HyperVGeneration: img.HyperVGeneration,
		SizeBytes: img.SizeBytes}, c, err
}

// galleryImage is the version a VM of imageID gets in loc: the version,
// or the definition's highest version replicated there and not excluded
// from latest; GalleryImageNotFound when there is none.
func (p *Provider) galleryImage(st *State, imageID, vmID, loc string) (*cloud.ImageDefinition, *cloud.ImageVersion, error) {
	rid, err := cloud.ParseResourceID(imageID)
	notFound := azrules.GalleryImageNotFound(vmID, imageID, loc)
	switch {
	case err == nil && rid.Is("Microsoft.Compute", "galleries", "images", "versions"):
		d, v, err := p.versionByID(st, imageID, vmID)
		if cloud.IsNotFound(err) || (err == nil && !replicatedTo(v, loc)) {
			return nil, nil, notFound
		}
		if err != nil {
			return nil, nil, err
		}
		return &d.ImageDefinition, v, nil
	case err == nil && rid.Is("Microsoft.Compute", "galleries", "images") && strings.EqualFold(rid.Subscription, st.SubscriptionID):
		d := definition(st, rid.ResourceGroup, rid.Names[0], rid.Names[1])
		var best *cloud.ImageVersion
		for _, v := range d.Versions {
			if !v.ExcludeFromLatest && replicatedTo(v, loc) && (best == nil || cloud.CompareVersions(v.Name, best.Name) > 0) {
				best = v
			}
		}
		if best == nil {
			return nil, nil, notFound
		}
		return &d.ImageDefinition, best, nil
	}
	return nil, nil, azrules.InvalidParameter(vmID, "'%s' is not a gallery image or gallery image version id.", imageID)
}

// replicatedTo reports whether v's replication to loc completed.
func replicatedTo(v *cloud.ImageVersion, loc string) bool {
	for _, r := range v.Replication {
		if strings.EqualFold(r.Region, loc) && r.State == cloud.ReplicationCompleted {
			return true
		}
	}
	return false
}

// DeleteVM implements cloud.Provider: the VM and its OS disk.
func (p *Provider) DeleteVM(ctx context.Context, rgName, name string) error {
	if err := p.load(p.loadVM(ctx, rgName, name)); err != nil {
		return err
	}
	return p.update(ctx, func(t *tx) error {
		rg, vm, err := p.lookupVM(t.st, rgName, name)
		if err != nil {
			return err
		}
		delete(rg.VMs, key(vm.Name))
		for k := range rg.RunCommands {
			if strings.HasPrefix(k, key(vm.Name)+"/") {
				delete(rg.RunCommands, k)
			}
		}
		t.log(cloud.OpDelete, cloud.KindVM, vm.ID)
		if d, ok := rg.Disks[key(vm.OSDiskName)]; ok {
			delete(rg.Disks, key(d.Name))
			delete(rg.DiskGrants, key(d.Name))
			t.remove(ResourceKey(d.ID))
		}
		return nil
	})
}

// DeleteResourceGroup implements cloud.Provider: the group and everything
// in it, with their data files.
func (p *Provider) DeleteResourceGroup(ctx context.Context, name string) error {
	if err := p.load(p.loadGroup(ctx, name)); err != nil {
		return err
	}
	find := func(st *State) error {
		_, err := p.lookupRG(st, name)
		return err
	}
	return p.updateFound(ctx, find, func(t *tx) error {
		rg, err := p.lookupRG(t.st, name)
		if err != nil {
			return err
		}
		for _, img := range rg.Images {
			t.remove(ResourceKey(img.ID))
		}
		for _, d := range rg.Disks {
			t.remove(ResourceKey(d.ID))
		}
		for _, g := range rg.Galleries {
			for _, def := range g.Definitions {
				for _, v := range def.Versions {
					t.remove(ResourceKey(v.ID))
				}
			}
		}
		for _, sa := range rg.StorageAccounts {
			for container, c := range sa.Containers {
				for blob := range c.Blobs {
					t.remove(BlobKey(sa.Name, container, blob))
				}
			}
		}
		delete(t.st.ResourceGroups, key(rg.Name))
		t.log(cloud.OpDelete, cloud.KindResourceGroup, rg.ID)
		return nil
	})
}

// loadVM reads a VM and its OS disk.
func (p *Provider) loadVM(ctx context.Context, rg, name string) error {
	if ok, err := p.groupFromBase(ctx, rg); !ok {
		return err
	}
	_, err := fetch(ctx, p, cloud.VMID(p.rt.sub, rg, name),
		func(st *State) (bool, bool) { return group(st, rg).VMs[key(name)] != nil, true },
		func() (*cloud.VM, error) { return p.rt.base.GetVM(ctx, rg, name) },
		func(st *State, v *cloud.VM) {
			if group(st, rg).VMs == nil {
				group(st, rg).VMs = map[string]*cloud.VM{}
			}
			group(st, rg).VMs[key(name)] = v
		})
	if err != nil {
		return err
	}
	return p.loadDisk(ctx, rg, cloud.VMOSDiskName(name))
}
