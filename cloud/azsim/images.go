package azsim

import (
	"context"
	"strings"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/internal/deepcopy"
)

// GetManagedImage implements cloud.Provider.
func (p *Provider) GetManagedImage(ctx context.Context, rgName, name string) (*cloud.ManagedImage, error) {
	if err := p.load(p.loadImage(ctx, rgName, name)); err != nil {
		return nil, err
	}
	return read(ctx, p, func(st *State) (*cloud.ManagedImage, error) { return p.lookupImage(st, rgName, name) })
}

func (p *Provider) lookupImage(st *State, rgName, name string) (*cloud.ManagedImage, error) {
	rg, err := p.lookupRG(st, rgName)
	if err != nil {
		return nil, err
	}
	img, ok := rg.Images[key(name)]
	if !ok {
		return nil, azrules.ResourceNotFound(cloud.ManagedImageID(st.SubscriptionID, rg.Name, name), "Microsoft.Compute/images", name, rg.Name)
	}
	return img, nil
}

// CreateManagedImage implements cloud.Provider: a PUT creating the image
// from a fixed VHD page blob or a gallery image version, or updating the
// tags of an existing one (whose source cannot change). A new image
// snapshots its source's content into its own data file.
func (p *Provider) CreateManagedImage(ctx context.Context, in cloud.ManagedImage) (*cloud.ManagedImage, error) {
	if err := p.load(p.loadImage(ctx, in.ResourceGroup, in.Name), p.loadSource(ctx, in.Source)); err != nil {
		return nil, err
	}
	var out cloud.ManagedImage
	err := p.updateWithData(ctx, func(t *tx) (*dataCopy, error) {
		st := t.st
		rg, err := p.lookupRG(st, in.ResourceGroup)
		if err != nil {
			return nil, err
		}
		id := cloud.ManagedImageID(st.SubscriptionID, rg.Name, in.Name)
		loc, err := p.locIndex.Resolve(orDefault(in.Location, rg.Location), "Microsoft.Compute/images", id)
		if err != nil {
			return nil, err
		}
		if img, ok := rg.Images[key(in.Name)]; ok {
			if img.Location != loc {
				return nil, azrules.LocationChanged(img.ID, img.Name, rg.Name, img.Location, loc)
			}
			if !cloud.SameSource(img.Source, in.Source) {
				return nil, azrules.PropertyChange(img.ID, "source")
			}
			img.Tags = deepcopy.Of(in.Tags)
			t.log(cloud.OpUpdate, cloud.KindManagedImage, img.ID)
			out = deepcopy.Of(*img)
			return nil, nil
		}
		img := &cloud.ManagedImage{
			ID: id, Name: in.Name, ResourceGroup: rg.Name, Location: loc,
			OSType: in.OSType, HyperVGeneration: in.HyperVGeneration,
			Source: in.Source, Tags: deepcopy.Of(in.Tags),
		}
		switch in.Source.Kind {
		case cloud.SourceVHD:
			size, _, err := p.vhdBlob(ctx, st, in.Source.URI, id)
			if err != nil {
				return nil, err
			}
			img.SizeBytes = size
		case cloud.SourceImageVersion:
			d, v, err := p.versionByID(st, in.Source.ID, id)
			if err != nil {
				return nil, err
			}
			if err := azrules.InheritImageField(id, "OS type", &img.OSType, d.OSType, v.ID); err != nil {
				return nil, err
			}
			if err := azrules.InheritImageField(id, "Hyper-V generation", &img.HyperVGeneration, d.HyperVGeneration, v.ID); err != nil {
				return nil, err
			}
			img.SizeBytes = v.SizeBytes
		case "":
			// A managed disk (ARM's storageProfile.osDisk.managedDisk), as
			// the Azure target captures an image from a version's disk.
			d, err := p.diskByID(st, in.Source.ID, id)
			if err != nil {
				return nil, err
			}
			if def, _, err := p.versionByID(st, d.SourceImageVersionID, id); err == nil && img.OSType == "" {
				img.OSType = def.OSType
			}
			if img.HyperVGeneration == "" {
				img.HyperVGeneration = d.HyperVGeneration
			}
			img.SizeBytes = d.SizeBytes
		default:
			return nil, azrules.InvalidParameter(id, "The managed image source kind '%s' is not supported; use a VHD blob or a gallery image version.", in.Source.Kind)
		}
		if img.HyperVGeneration == "" {
			img.HyperVGeneration = cloud.HyperVGenV1 // Azure's default for images
		}
		var src content
		if in.Source.Kind == "" {
			src = content{key: ResourceKey(in.Source.ID), size: img.SizeBytes}
		} else if src, err = p.sourceContent(st, in.Source, id, 0); err != nil {
			return nil, err
		}
		rg.Images[key(in.Name)] = img
		t.log(cloud.OpCreate, cloud.KindManagedImage, img.ID)
		out = deepcopy.Of(*img)
		return &dataCopy{id: id, src: src}, nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteManagedImage implements cloud.Provider; the image's data goes
// with it.
func (p *Provider) DeleteManagedImage(ctx context.Context, rgName, name string) error {
	if err := p.load(p.loadImage(ctx, rgName, name)); err != nil {
		return err
	}
	return p.update(ctx, func(t *tx) error {
		img, err := p.lookupImage(t.st, rgName, name)
		if err != nil {
			return err
		}
		delete(t.st.ResourceGroups[key(rgName)].Images, key(name))
		t.remove(ResourceKey(img.ID))
		t.log(cloud.OpDelete, cloud.KindManagedImage, img.ID)
		return nil
	})
}

// managedImageByID finds a managed image of this subscription by ARM id.
func (p *Provider) managedImageByID(st *State, srcID, resource string) (*cloud.ManagedImage, error) {
	rid, err := cloud.ParseResourceID(srcID)
	if err != nil || !rid.Is("Microsoft.Compute", "images") {
		return nil, azrules.InvalidParameter(resource, "'%s' is not a managed image id.", srcID)
	}
	notFound := azrules.ResourceNotFound(srcID, "Microsoft.Compute/images", rid.Names[0], rid.ResourceGroup)
	if !strings.EqualFold(rid.Subscription, st.SubscriptionID) {
		if q, qst := p.peerState(st, rid.Subscription); q != nil {
			return q.managedImageByID(qst, srcID, resource) // another subscription of the tenant
		}
		return nil, notFound
	}
	if img, err := p.lookupImage(st, rid.ResourceGroup, rid.Names[0]); err == nil {
		return img, nil
	}
	return nil, notFound
}

func (p *Provider) loadImage(ctx context.Context, rg, name string) error {
	if ok, err := p.groupFromBase(ctx, rg); !ok {
		return err
	}
	_, err := fetch(ctx, p, cloud.ManagedImageID(p.rt.sub, rg, name),
		func(st *State) (bool, bool) { return group(st, rg).Images[key(name)] != nil, true },
		func() (*cloud.ManagedImage, error) { return p.rt.base.GetManagedImage(ctx, rg, name) },
		func(st *State, v *cloud.ManagedImage) { group(st, rg).Images[key(name)] = v })
	return err
}
