package azure

import (
	"context"
	"sort"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/cloud/azure/internal/armconv"
)

// ListGalleries implements cloud.Provider: every gallery of the
// subscription, sorted by name.
func (p *Provider) ListGalleries(ctx context.Context) ([]cloud.Gallery, error) {
	pager := p.galleries.NewListPager(nil)
	var out []cloud.Gallery
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, opError("list galleries of subscription", p.sub, azErr(err, "/subscriptions/"+p.sub))
		}
		for _, g := range page.Value {
			if g != nil {
				out = append(out, *p.galleryOut(ctx, g, ""))
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return strings.ToLower(out[i].Name) < strings.ToLower(out[j].Name) })
	return out, nil
}

// GetGallery implements cloud.Provider; the sharing profile is expanded so
// the community public names come back.
func (p *Provider) GetGallery(ctx context.Context, rg, name string) (*cloud.Gallery, error) {
	res, err := p.galleries.Get(ctx, rg, name, &armcompute.GalleriesClientGetOptions{Expand: to(armcompute.GalleryExpandParamsSharingProfileGroups)})
	if err != nil {
		return nil, opError("get gallery", name, azErr(err, cloud.GalleryID(p.sub, rg, name)))
	}
	return p.galleryOut(ctx, &res.Gallery, rg), nil
}

// CreateGallery implements cloud.Provider: a PUT creating the gallery or
// updating its description and tags. With g.Community the PUT carries the
// community sharing profile (as CommunityGallery_Create does), so a
// community gallery is one from its first PUT and keeps its profile on
// updates; making it public is ShareCommunity's.
func (p *Provider) CreateGallery(ctx context.Context, g cloud.Gallery) (*cloud.Gallery, error) {
	id := cloud.GalleryID(p.sub, g.ResourceGroup, g.Name)
	loc := g.Location
	if loc == "" {
		rg, err := p.GetResourceGroup(ctx, g.ResourceGroup)
		if err != nil {
			return nil, opError("create gallery", g.Name, err)
		}
		loc = rg.Location
	}
	body := armcompute.Gallery{Location: to(loc), Tags: tagsIn(g.Tags), Properties: &armcompute.GalleryProperties{Description: to(g.Description)}}
	if g.Community != nil {
		body.Properties.SharingProfile = armconv.CommunityProfile(*g.Community)
	}
	if err := p.putGallery(ctx, g.ResourceGroup, g.Name, body); err != nil {
		return nil, opError("create gallery", g.Name, azErr(err, id))
	}
	return p.GetGallery(ctx, g.ResourceGroup, g.Name)
}

func (p *Provider) putGallery(ctx context.Context, rg, name string, body armcompute.Gallery) error {
	poller, err := p.galleries.BeginCreateOrUpdate(ctx, rg, name, body, nil)
	if err != nil {
		return err
	}
	_, err = wait(ctx, p, "create gallery "+name, poller)
	return err
}

// ShareCommunity implements cloud.Provider: POST /share with
// EnableCommunity (202 + Location, polled), then the gallery is read back
// with its expanded sharing profile for the public name the platform
// generated. Enabling needs the Owner or Compute Gallery Sharing Admin
// role on the gallery.
func (p *Provider) ShareCommunity(ctx context.Context, rg, name string) (*cloud.Gallery, error) {
	id := cloud.GalleryID(p.sub, rg, name)
	poller, err := p.sharing.BeginUpdate(ctx, rg, name, armcompute.SharingUpdate{OperationType: to(armcompute.SharingUpdateOperationTypesEnableCommunity)}, nil)
	if err == nil {
		_, err = wait(ctx, p, "enable community sharing of gallery "+name, poller)
	}
	if err != nil {
		return nil, opError("enable community sharing of gallery", name, azErr(err, id))
	}
	return p.GetGallery(ctx, rg, name)
}

// galleryOut reads a gallery; its location, which Azure answers as a
// display name ("West Europe"), becomes the region's name.
func (p *Provider) galleryOut(ctx context.Context, g *armcompute.Gallery, rg string) *cloud.Gallery {
	out := armconv.GalleryOf(g, rg)
	out.Location = p.regionName(ctx, deref(g.Location))
	return &out
}

// ListImageDefinitions implements cloud.Provider, sorted by name.
func (p *Provider) ListImageDefinitions(ctx context.Context, rg, gallery string) ([]cloud.ImageDefinition, error) {
	pager := p.images.NewListByGalleryPager(rg, gallery, nil)
	var out []cloud.ImageDefinition
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, opError("list image definitions of gallery", gallery, azErr(err, cloud.GalleryID(p.sub, rg, gallery)+"/images"))
		}
		for _, d := range page.Value {
			if d != nil {
				out = append(out, *p.definitionOut(ctx, d, rg, gallery))
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return strings.ToLower(out[i].Name) < strings.ToLower(out[j].Name) })
	return out, nil
}

// GetImageDefinition implements cloud.Provider.
func (p *Provider) GetImageDefinition(ctx context.Context, rg, gallery, name string) (*cloud.ImageDefinition, error) {
	res, err := p.images.Get(ctx, rg, gallery, name, nil)
	if err != nil {
		return nil, opError("get image definition", gallery+"/"+name, azErr(err, cloud.ImageDefinitionID(p.sub, rg, gallery, name)))
	}
	return p.definitionOut(ctx, &res.GalleryImage, rg, gallery), nil
}

// CreateImageDefinition implements cloud.Provider: a PUT creating the
// definition or updating its mutable fields. An empty location is the
// gallery's. A definition with an ID is an update: its features are sent
// with allowUpdateImage, which Azure requires to change them.
func (p *Provider) CreateImageDefinition(ctx context.Context, d cloud.ImageDefinition) (*cloud.ImageDefinition, error) {
	id := cloud.ImageDefinitionID(p.sub, d.ResourceGroup, d.Gallery, d.Name)
	what := d.Gallery + "/" + d.Name
	loc := d.Location
	if loc == "" {
		g, err := p.GetGallery(ctx, d.ResourceGroup, d.Gallery)
		if err != nil {
			if cloud.IsNotFound(err) && !cloud.HasCode(err, cloud.CodeResourceGroupNotFound) {
				// As Azure answers a PUT under a missing gallery.
				err = azrules.ParentNotFound(id, d.Gallery)
			}
			return nil, opError("create image definition", what, err)
		}
		loc = g.Location
	}
	props := armconv.ImageDefinitionProperties(d)
	if d.ID != "" && len(props.Features) > 0 {
		// An update of an existing definition (ensure.EnsureImageDefinition
		// passes the one it read): Azure refuses changed features unless
		// allowUpdateImage is set.
		props.AllowUpdateImage = to(true)
	}
	body := armcompute.GalleryImage{Location: to(loc), Tags: tagsIn(d.Tags), Properties: props}
	poller, err := p.images.BeginCreateOrUpdate(ctx, d.ResourceGroup, d.Gallery, d.Name, body, nil)
	if err == nil {
		_, err = wait(ctx, p, "create image definition "+what, poller)
	}
	if err != nil {
		return nil, opError("create image definition", what, azErr(err, id))
	}
	return p.GetImageDefinition(ctx, d.ResourceGroup, d.Gallery, d.Name)
}

// DeleteImageDefinition implements cloud.Provider.
func (p *Provider) DeleteImageDefinition(ctx context.Context, rg, gallery, name string) error {
	id := cloud.ImageDefinitionID(p.sub, rg, gallery, name)
	err := waitDelete(ctx, p, "delete image definition "+gallery+"/"+name, id, func(ctx context.Context) (*runtime.Poller[armcompute.GalleryImagesClientDeleteResponse], error) {
		return p.images.BeginDelete(ctx, rg, gallery, name, nil)
	})
	return opError("delete image definition", gallery+"/"+name, azErr(err, id))
}

func (p *Provider) definitionOut(ctx context.Context, g *armcompute.GalleryImage, rg, gallery string) *cloud.ImageDefinition {
	out := armconv.ImageDefinitionOf(g, rg, gallery)
	out.Location = p.regionName(ctx, deref(g.Location))
	return &out
}
