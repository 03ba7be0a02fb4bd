package fakearm

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strings"

	azfake "github.com/Azure/azure-sdk-for-go/sdk/azcore/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/cloud/azure/internal/armconv"
)

func (f *Fake) galleryImagesNewListByGalleryPager(rg, gallery string, _ *armcompute.GalleryImagesClientListByGalleryOptions) (resp azfake.PagerResponder[armcompute.GalleryImagesClientListByGalleryResponse]) {
	return list(f, cloud.GalleryID(f.sub, rg, gallery)+"/images", func() (armcompute.GalleryImagesClientListByGalleryResponse, *Error) {
		var page armcompute.GalleryImagesClientListByGalleryResponse
		defs, err := f.sim.ListImageDefinitions(context.Background(), rg, gallery)
		if err != nil {
			return page, armError(err)
		}
		for _, d := range defs {
			page.Value = append(page.Value, to(f.definitionOut(d)))
		}
		return page, nil
	})
}

func (f *Fake) galleryImagesGet(ctx context.Context, rg, gallery, name string, _ *armcompute.GalleryImagesClientGetOptions) (resp azfake.Responder[armcompute.GalleryImagesClientGetResponse], errResp azfake.ErrorResponder) {
	return answer(f, func() (armcompute.GalleryImagesClientGetResponse, *Error) {
		d, err := f.sim.GetImageDefinition(simCtx(ctx), rg, gallery, name)
		if err != nil {
			return armcompute.GalleryImagesClientGetResponse{}, armError(err)
		}
		return armcompute.GalleryImagesClientGetResponse{GalleryImage: f.definitionOut(*d)}, nil
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
		d, err := f.sim.GetImageDefinition(simCtx(ctx), rg, gallery, name)
		if err != nil {
			return armcompute.GalleryImagesClientDeleteResponse{}, armError(err)
		}
		if fe := f.lroFault(ctx, http.MethodDelete, d.ID); fe != nil {
			return armcompute.GalleryImagesClientDeleteResponse{}, nil
		}
		return armcompute.GalleryImagesClientDeleteResponse{}, armError(f.sim.DeleteImageDefinition(simCtx(ctx), rg, gallery, name))
	})
}

// putDefinition creates or updates a definition in the simulation. What
// the cloud type does not carry stays here: the request's required
// properties and its allowUpdateImage flag.
func (f *Fake) putDefinition(ctx context.Context, rg, gallery, name string, in armcompute.GalleryImage) (armcompute.GalleryImage, *Error) {
	if _, err := f.sim.GetGallery(context.Background(), rg, gallery); err != nil {
		if cloud.HasCode(err, cloud.CodeResourceNotFound) {
			err = azrules.ParentNotFound("", gallery)
		}
		return armcompute.GalleryImage{}, armError(err)
	}
	p := in.Properties
	if p == nil || p.Identifier == nil || p.OSType == nil || p.OSState == nil {
		return armcompute.GalleryImage{}, armError(azrules.InvalidParameter("", "Image definition '%s' requires identifier (publisher, offer, sku), osType and osState.", name))
	}
	want := armconv.ImageDefinitionOf(&in, rg, gallery)
	want.Name, want.ResourceGroup, want.Gallery, want.Location = name, rg, gallery, deref(in.Location)
	if old, err := f.sim.GetImageDefinition(context.Background(), rg, gallery, name); err == nil && !deref(p.AllowUpdateImage) && !sameFeatures(old.Features, want.Features) {
		return armcompute.GalleryImage{}, armError(azrules.FeaturesNeedAllowUpdate(cloud.ImageDefinitionID(f.sub, rg, gallery, name), name))
	}
	if fe := f.lroFault(ctx, http.MethodPut, cloud.ImageDefinitionID(f.sub, rg, gallery, name)); fe != nil {
		return armcompute.GalleryImage{}, nil
	}
	d, err := f.sim.CreateImageDefinition(simCtx(ctx), want)
	if err != nil {
		return armcompute.GalleryImage{}, armError(err)
	}
	var order []string
	for _, ft := range p.Features {
		if ft != nil {
			order = append(order, strings.ToLower(deref(ft.Name)))
		}
	}
	f.featureOrder[key(d.ID)] = order
	return f.definitionOut(*d), nil
}

// definitionOut is the answer for a definition, its features in the
// order of its last PUT, as ARM keeps them (cloud's map has no order).
func (f *Fake) definitionOut(d cloud.ImageDefinition) armcompute.GalleryImage {
	out := armconv.ImageDefinition(d)
	order := f.featureOrder[key(d.ID)]
	rank := func(ft *armcompute.GalleryImageFeature) int {
		if i := slices.Index(order, strings.ToLower(deref(ft.Name))); i >= 0 {
			return i
		}
		return len(order)
	}
	slices.SortStableFunc(out.Properties.Features, func(a, b *armcompute.GalleryImageFeature) int { return rank(a) - rank(b) })
	return out
}

// sameFeatures compares features as sets (names and values without case).
func sameFeatures(a, b map[string]string) bool {
	lower := func(m map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[strings.ToLower(k)] = strings.ToLower(v)
		}
		return out
	}
	return maps.Equal(lower(a), lower(b))
}
