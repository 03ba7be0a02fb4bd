package fakearm

import (
	"context"
	"net/http"
	"strings"

	azfake "github.com/Azure/azure-sdk-for-go/sdk/azcore/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
)

// definition returns an image definition; nested works as in gallery.
func (f *Fake) definition(rg, gallery, name string, nested bool) (*armcompute.Gallery, *armcompute.GalleryImage, *Error) {
	g, err := f.gallery(rg, gallery, true)
	if err != nil {
		return nil, nil, err
	}
	d, ok := f.defs[key(deref(g.ID)+"/images/"+name)]
	if !ok {
		if nested {
			return nil, nil, armError(azrules.ParentNotFound("", name))
		}
		return nil, nil, armError(azrules.ResourceNotFound("", "Microsoft.Compute/galleries/images", deref(g.Name)+"/"+name, rgOf(deref(g.ID))))
	}
	return g, d, nil
}

func (f *Fake) galleryImagesNewListByGalleryPager(rg, gallery string, _ *armcompute.GalleryImagesClientListByGalleryOptions) (resp azfake.PagerResponder[armcompute.GalleryImagesClientListByGalleryResponse]) {
	return list(f, cloud.GalleryID(f.sub, rg, gallery)+"/images", func() (armcompute.GalleryImagesClientListByGalleryResponse, *Error) {
		var page armcompute.GalleryImagesClientListByGalleryResponse
		g, err := f.gallery(rg, gallery, true)
		if err != nil {
			return page, err
		}
		for _, k := range sortedIDs(f.defs, deref(g.ID)+"/images/") {
			d := clone(*f.defs[k])
			page.Value = append(page.Value, &d)
		}
		return page, nil
	})
}

func (f *Fake) galleryImagesGet(ctx context.Context, rg, gallery, name string, _ *armcompute.GalleryImagesClientGetOptions) (resp azfake.Responder[armcompute.GalleryImagesClientGetResponse], errResp azfake.ErrorResponder) {
	return answer(f, func() (armcompute.GalleryImagesClientGetResponse, *Error) {
		_, d, err := f.definition(rg, gallery, name, false)
		if err != nil {
			return armcompute.GalleryImagesClientGetResponse{}, err
		}
		return armcompute.GalleryImagesClientGetResponse{GalleryImage: clone(*d)}, nil
	})
}

func (f *Fake) galleryImagesBeginCreateOrUpdate(ctx context.Context, rg, gallery, name string, in armcompute.GalleryImage, _ *armcompute.GalleryImagesClientBeginCreateOrUpdateOptions) (resp azfake.PollerResponder[armcompute.GalleryImagesClientCreateOrUpdateResponse], errResp azfake.ErrorResponder) {
	return start(f, http.StatusCreated, func() (armcompute.GalleryImagesClientCreateOrUpdateResponse, *Error) {
		out, err := f.putDefinition(ctx, rg, gallery, name, in)
		return armcompute.GalleryImagesClientCreateOrUpdateResponse{GalleryImage: out}, err
	})
}

func (f *Fake) galleryImagesBeginDelete(ctx context.Context, rg, gallery, name string, _ *armcompute.GalleryImagesClientBeginDeleteOptions) (resp azfake.PollerResponder[armcompute.GalleryImagesClientDeleteResponse], errResp azfake.ErrorResponder) {
	return startDelete(f, func() (armcompute.GalleryImagesClientDeleteResponse, *Error) {
		_, d, err := f.definition(rg, gallery, name, false)
		if err != nil {
			return armcompute.GalleryImagesClientDeleteResponse{}, err
		}
		if n := len(sortedIDs(f.versions, deref(d.ID)+"/versions/")); n > 0 {
			return armcompute.GalleryImagesClientDeleteResponse{}, newErr(http.StatusConflict, cloud.CodeConflict,
				"Image definition '%s' cannot be deleted: it still has %d image version(s) (nested resources); delete them first.", deref(d.Name), n)
		}
		if fe := f.lroFault(ctx, http.MethodDelete, deref(d.ID)); fe == nil {
			delete(f.defs, key(deref(d.ID)))
		}
		return armcompute.GalleryImagesClientDeleteResponse{}, nil
	})
}

func (f *Fake) putDefinition(ctx context.Context, rg, gallery, name string, in armcompute.GalleryImage) (armcompute.GalleryImage, *Error) {
	g, err := f.gallery(rg, gallery, true)
	if err != nil {
		return armcompute.GalleryImage{}, err
	}
	id := deref(g.ID) + "/images/" + name
	if err := f.inGalleryRegion(g, deref(in.Location), id, "image definitions"); err != nil {
		return armcompute.GalleryImage{}, err
	}
	p := in.Properties
	if p == nil || p.Identifier == nil || p.OSType == nil || p.OSState == nil {
		return armcompute.GalleryImage{}, armError(azrules.InvalidParameter("", "Image definition '%s' requires identifier (publisher, offer, sku), osType and osState.", name))
	}
	want := definitionOf(&in)
	want.Name = name
	if err := azrules.CheckCommunityFeatures("", deref(g.Name), communityEnabled(g), want.Features); err != nil {
		return armcompute.GalleryImage{}, armError(err)
	}
	azrules.DefinitionDefaults(&want)
	p.HyperVGeneration = to(armcompute.HyperVGeneration(want.HyperVGeneration))
	p.Architecture = to(armcompute.Architecture(want.Architecture))
	d, exists := f.defs[key(id)]
	if exists {
		old := definitionOf(d)
		if err := azrules.ImmutableDefinitionFields(&old, &want); err != nil {
			return armcompute.GalleryImage{}, armError(err)
		}
		if !deref(p.AllowUpdateImage) && !sameFeatures(d.Properties.Features, p.Features) {
			// Azure documents that allowUpdateImage "must be set to true
			// if the gallery image features are being updated" (armcompute
			// GalleryImageProperties.AllowUpdateImage) but not the error it
			// answers without it; this is the closest documented one.
			return armcompute.GalleryImage{}, newErr(http.StatusConflict, cloud.CodePropertyChangeNotAllowed,
				"Changing property 'features' of gallery image '%s' is not allowed unless 'allowUpdateImage' is set to true.", name)
		}
	}
	if err := azrules.UniqueIdentifier("", deref(g.Name), &want, f.definitionsIn(g)); err != nil {
		return armcompute.GalleryImage{}, armError(err)
	}
	if fe := f.lroFault(ctx, http.MethodPut, id); fe != nil {
		return armcompute.GalleryImage{}, nil
	}
	if !exists {
		d = &armcompute.GalleryImage{ID: to(id), Name: to(name), Location: g.Location, Type: to("Microsoft.Compute/galleries/images")}
		f.defs[key(id)] = d
	}
	props := clone(*p)
	props.AllowUpdateImage = nil // a request flag, not a property Azure returns
	props.ProvisioningState = to(armcompute.GalleryProvisioningStateSucceeded)
	if exists {
		// Identity fields keep their first spelling.
		props.Identifier = d.Properties.Identifier
	}
	d.Properties = &props
	d.Tags = copyTags(in.Tags)
	return clone(*d), nil
}

// sameFeatures compares feature lists as sets (names without case).
func sameFeatures(a, b []*armcompute.GalleryImageFeature) bool {
	index := func(fs []*armcompute.GalleryImageFeature) map[string]string {
		m := map[string]string{}
		for _, f := range fs {
			if f != nil {
				m[strings.ToLower(deref(f.Name))] = deref(f.Value)
			}
		}
		return m
	}
	ia, ib := index(a), index(b)
	if len(ia) != len(ib) {
		return false
	}
	for k, v := range ia {
		if w, ok := ib[k]; !ok || !strings.EqualFold(v, w) {
			return false
		}
	}
	return true
}

// inGalleryRegion is azrules.CheckGalleryRegion for a resource of
// gallery g.
func (f *Fake) inGalleryRegion(g *armcompute.Gallery, location, id, what string) *Error {
	return armError(azrules.CheckGalleryRegion(f.regions, deref(g.Location), location, id, what))
}

// definitionsIn lists the definitions of gallery g as the rules take
// them.
func (f *Fake) definitionsIn(g *armcompute.Gallery) []cloud.ImageDefinition {
	var out []cloud.ImageDefinition
	for _, k := range sortedIDs(f.defs, deref(g.ID)+"/images/") {
		out = append(out, definitionOf(f.defs[k]))
	}
	return out
}

// definitionOf reads an image definition as the rules take it.
func definitionOf(d *armcompute.GalleryImage) cloud.ImageDefinition {
	out := cloud.ImageDefinition{ID: deref(d.ID), Name: deref(d.Name)}
	p := d.Properties
	if p == nil {
		return out
	}
	out.OSType, out.OSState = strOf(p.OSType), strOf(p.OSState)
	out.HyperVGeneration, out.Architecture = strOf(p.HyperVGeneration), strOf(p.Architecture)
	if p.Identifier != nil {
		out.Publisher, out.Offer, out.SKU = deref(p.Identifier.Publisher), deref(p.Identifier.Offer), deref(p.Identifier.SKU)
	}
	for _, ft := range p.Features {
		if ft != nil {
			if out.Features == nil {
				out.Features = map[string]string{}
			}
			out.Features[deref(ft.Name)] = deref(ft.Value)
		}
	}
	return out
}
