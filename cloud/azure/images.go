package azure

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/cloud/azure/internal/armconv"
)

// SourceTag is the tag recording a managed image's gallery version source:
// Azure cannot make a managed image from a gallery version directly, so the
// provider goes through a temporary disk and remembers the version here.
const SourceTag = "imgflowSource"

// GetManagedImage implements cloud.Provider.
func (p *Provider) GetManagedImage(ctx context.Context, rg, name string) (*cloud.ManagedImage, error) {
	res, err := p.managed.Get(ctx, rg, name, nil)
	if err != nil {
		return nil, opError("get managed image", name, azErr(err, cloud.ManagedImageID(p.sub, rg, name)))
	}
	return p.imageOut(ctx, &res.Image, rg), nil
}

// CreateManagedImage implements cloud.Provider. From a VHD the image's OS
// disk is the blob; from a gallery image version a temporary managed disk
// is made from the version, the image captured from it, and the disk
// deleted (the image keeps its own copy).
func (p *Provider) CreateManagedImage(ctx context.Context, img cloud.ManagedImage) (*cloud.ManagedImage, error) {
	id := cloud.ManagedImageID(p.sub, img.ResourceGroup, img.Name)
	loc := img.Location
	if loc == "" {
		g, err := p.GetResourceGroup(ctx, img.ResourceGroup)
		if err != nil {
			return nil, opError("create managed image", img.Name, err)
		}
		loc = g.Location
	}
	osDisk := &armcompute.ImageOSDisk{
		OSState: to(armcompute.OperatingSystemStateTypesGeneralized),
		OSType:  optStr[armcompute.OperatingSystemTypes](img.OSType),
	}
	tags := cloud.Tags{}
	for k, v := range img.Tags {
		tags[k] = v
	}
	switch img.Source.Kind {
	case cloud.SourceVHD:
		osDisk.BlobURI = to(img.Source.URI)
	case cloud.SourceImageVersion:
		// Reuse an image that already exists from this very version: only
		// its tags change, as the local target does.
		if cur, err := p.GetManagedImage(ctx, img.ResourceGroup, img.Name); err == nil && strings.EqualFold(cur.Source.ID, img.Source.ID) {
			osDisk = nil
		} else {
			diskID, cleanup, err := p.tempDiskFromVersion(ctx, img, loc)
			if err != nil {
				return nil, opError("create managed image", img.Name, err)
			}
			defer cleanup()
			osDisk.ManagedDisk = &armcompute.SubResource{ID: to(diskID)}
		}
		tags[SourceTag] = img.Source.ID
	default:
		return nil, opError("create managed image", img.Name, azrules.InvalidParameter(id,
			"The managed image source kind '%s' is not supported; use a VHD blob or a gallery image version.", img.Source.Kind))
	}
	if osDisk == nil {
		// Tags only: PATCH keeps the captured disk.
		poller, err := p.managed.BeginUpdate(ctx, img.ResourceGroup, img.Name, armcompute.ImageUpdate{Tags: tagsIn(tags)}, nil)
		if err == nil {
			_, err = wait(ctx, p, "update managed image "+img.Name, poller)
		}
		if err != nil {
			return nil, opError("update managed image", img.Name, azErr(err, id))
		}
		return p.GetManagedImage(ctx, img.ResourceGroup, img.Name)
	}
	body := armcompute.Image{
		Location: to(loc),
		Tags:     tagsIn(tags),
		Properties: &armcompute.ImageProperties{
			HyperVGeneration: optStr[armcompute.HyperVGenerationTypes](img.HyperVGeneration),
			StorageProfile:   &armcompute.ImageStorageProfile{OSDisk: osDisk},
		},
	}
	if len(tags) == 0 {
		body.Tags = nil
	}
	poller, err := p.managed.BeginCreateOrUpdate(ctx, img.ResourceGroup, img.Name, body, nil)
	if err == nil {
		_, err = wait(ctx, p, "create managed image "+img.Name, poller)
	}
	if err != nil {
		return nil, opError("create managed image", img.Name, azErr(err, id))
	}
	return p.GetManagedImage(ctx, img.ResourceGroup, img.Name)
}

// tempDiskFromVersion makes the disk a managed image is captured from;
// cleanup deletes it (a failure is logged: the disk is tagged and named
// after the image so it can be found).
func (p *Provider) tempDiskFromVersion(ctx context.Context, img cloud.ManagedImage, loc string) (string, func(), error) {
	sum := sha256.Sum256([]byte(strings.ToLower(img.Source.ID)))
	name := img.Name + "-src-" + hex.EncodeToString(sum[:4])
	if len(name) > 80 {
		name = name[len(name)-80:]
	}
	tags := cloud.Tags{SourceTag: img.Source.ID}
	for k, v := range img.Tags {
		tags[k] = v
	}
	d, err := p.CreateDiskFromImageVersion(ctx, cloud.Disk{
		Name: name, ResourceGroup: img.ResourceGroup, Location: loc,
		SourceImageVersionID: img.Source.ID, HyperVGeneration: img.HyperVGeneration, Tags: tags,
	})
	if err != nil {
		return "", nil, err
	}
	cleanup := func() {
		if err := p.DeleteDisk(context.WithoutCancel(ctx), img.ResourceGroup, name); err != nil {
			p.logf("managed image %s: delete temporary disk %s: %v", img.Name, d.ID, err)
		}
	}
	return d.ID, cleanup, nil
}

// DeleteManagedImage implements cloud.Provider.
func (p *Provider) DeleteManagedImage(ctx context.Context, rg, name string) error {
	id := cloud.ManagedImageID(p.sub, rg, name)
	err := waitDelete(ctx, p, "delete managed image "+name, id, func(ctx context.Context) (*runtime.Poller[armcompute.ImagesClientDeleteResponse], error) {
		return p.managed.BeginDelete(ctx, rg, name, nil)
	})
	return opError("delete managed image", name, azErr(err, id))
}

func (p *Provider) imageOut(ctx context.Context, img *armcompute.Image, rg string) *cloud.ManagedImage {
	out := armconv.ManagedImageOf(img, rg, func(name string) string { return p.regionName(ctx, name) })
	if src := out.Tags[SourceTag]; src != "" {
		out.Source = cloud.ImageSource{Kind: cloud.SourceImageVersion, ID: src}
		delete(out.Tags, SourceTag)
		if len(out.Tags) == 0 {
			out.Tags = nil
		}
	}
	return &out
}
