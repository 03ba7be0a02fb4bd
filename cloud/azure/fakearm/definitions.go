package fakearm

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	azfake "github.com/Azure/azure-sdk-for-go/sdk/azcore/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"
	computefake "github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7/fake"

	"github.com/imgflow/imgflow/cloud"
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
			return nil, nil, parentNotFound(name)
		}
		return nil, nil, resourceNotFound("Microsoft.Compute/galleries/images", deref(g.Name)+"/"+name, rgOf(deref(g.ID)))
	}
	return g, d, nil
}

// checkGalleryRegion: nested resources live in the gallery's region; an
// empty location means the gallery's.
func (f *Fake) checkGalleryRegion(g *armcompute.Gallery, location, what string) *Error {
	if location == "" {
		return nil
	}
	if loc, ok := f.physical(location); !ok || loc != deref(g.Location) {
		return invalidParameter("Location '%s' is invalid: %s must be in the gallery's region '%s'.", location, what, deref(g.Location))
	}
	return nil
}

func (f *Fake) definitionsServer() computefake.GalleryImagesServer {
	return computefake.GalleryImagesServer{
		NewListByGalleryPager: func(rg, gallery string, _ *armcompute.GalleryImagesClientListByGalleryOptions) (resp azfake.PagerResponder[armcompute.GalleryImagesClientListByGalleryResponse]) {
			f.mu.Lock()
			defer f.mu.Unlock()
			var page armcompute.GalleryImagesClientListByGalleryResponse
			g, err := f.gallery(rg, gallery, true)
			if err != nil {
				f.failPage(cloud.GalleryID(f.sub, rg, gallery)+"/images", err)
				resp.AddPage(http.StatusOK, page, nil)
				return
			}
			for _, k := range sortedIDs(f.defs, deref(g.ID)+"/images/") {
				d := clone(*f.defs[k])
				page.Value = append(page.Value, &d)
			}
			resp.AddPage(http.StatusOK, page, nil)
			return
		},
		Get: func(ctx context.Context, rg, gallery, name string, _ *armcompute.GalleryImagesClientGetOptions) (resp azfake.Responder[armcompute.GalleryImagesClientGetResponse], errResp azfake.ErrorResponder) {
			f.mu.Lock()
			defer f.mu.Unlock()
			_, d, err := f.definition(rg, gallery, name, false)
			if err != nil {
				errResp.SetError(err)
				return
			}
			resp.SetResponse(http.StatusOK, armcompute.GalleryImagesClientGetResponse{GalleryImage: clone(*d)}, nil)
			return
		},
		BeginCreateOrUpdate: func(ctx context.Context, rg, gallery, name string, in armcompute.GalleryImage, _ *armcompute.GalleryImagesClientBeginCreateOrUpdateOptions) (resp azfake.PollerResponder[armcompute.GalleryImagesClientCreateOrUpdateResponse], errResp azfake.ErrorResponder) {
			f.mu.Lock()
			defer f.mu.Unlock()
			out, err := f.putDefinition(ctx, rg, gallery, name, in)
			if err != nil {
				errResp.SetError(err)
				return
			}
			resp = accept(f, http.StatusCreated, armcompute.GalleryImagesClientCreateOrUpdateResponse{GalleryImage: out})
			return
		},
		BeginDelete: func(ctx context.Context, rg, gallery, name string, _ *armcompute.GalleryImagesClientBeginDeleteOptions) (resp azfake.PollerResponder[armcompute.GalleryImagesClientDeleteResponse], errResp azfake.ErrorResponder) {
			f.mu.Lock()
			defer f.mu.Unlock()
			_, d, err := f.definition(rg, gallery, name, false)
			if err != nil {
				errResp.SetError(err)
				return
			}
			if n := len(sortedIDs(f.versions, deref(d.ID)+"/versions/")); n > 0 {
				errResp.SetError(newErr(http.StatusConflict, cloud.CodeConflict,
					"Image definition '%s' cannot be deleted: it still has %d image version(s) (nested resources); delete them first.", deref(d.Name), n))
				return
			}
			if fe := f.lroFault(ctx, http.MethodDelete, deref(d.ID)); fe == nil {
				delete(f.defs, key(deref(d.ID)))
			}
			resp = accept(f, http.StatusAccepted, armcompute.GalleryImagesClientDeleteResponse{})
			return
		},
	}
}

func (f *Fake) putDefinition(ctx context.Context, rg, gallery, name string, in armcompute.GalleryImage) (armcompute.GalleryImage, *Error) {
	g, err := f.gallery(rg, gallery, true)
	if err != nil {
		return armcompute.GalleryImage{}, err
	}
	id := deref(g.ID) + "/images/" + name
	if err := f.checkGalleryRegion(g, deref(in.Location), "image definitions"); err != nil {
		return armcompute.GalleryImage{}, err
	}
	p := in.Properties
	if p == nil || p.Identifier == nil || p.OSType == nil || p.OSState == nil {
		return armcompute.GalleryImage{}, invalidParameter("Image definition '%s' requires identifier (publisher, offer, sku), osType and osState.", name)
	}
	if communityEnabled(g) {
		if sec, bad := privateOnlySecurityType(&in); bad {
			return armcompute.GalleryImage{}, invalidParameter(
				"SecurityType '%s' is not supported in community gallery '%s'; use TrustedLaunchSupported, ConfidentialVMSupported or TrustedLaunchAndConfidentialVmSupported.",
				sec, deref(g.Name))
		}
	}
	// Defaults of the API version imgflow uses (as the local target).
	if p.HyperVGeneration == nil {
		p.HyperVGeneration = to(armcompute.HyperVGenerationV1)
	}
	if p.Architecture == nil {
		p.Architecture = to(armcompute.ArchitectureX64)
	}
	d, exists := f.defs[key(id)]
	if exists {
		if err := immutableDefinitionFields(d.Properties, p); err != nil {
			return armcompute.GalleryImage{}, err
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
	for _, k := range sortedIDs(f.defs, deref(g.ID)+"/images/") {
		other := f.defs[k]
		if k == key(id) {
			continue
		}
		oi, ni := other.Properties.Identifier, p.Identifier
		if strings.EqualFold(deref(oi.Publisher), deref(ni.Publisher)) && strings.EqualFold(deref(oi.Offer), deref(ni.Offer)) && strings.EqualFold(deref(oi.SKU), deref(ni.SKU)) {
			return armcompute.GalleryImage{}, newErr(http.StatusConflict, cloud.CodeConflict,
				"Image definition '%s' in gallery '%s' already uses publisher '%s', offer '%s' and SKU '%s'; the (publisher, offer, sku) identifier must be unique within a gallery.",
				deref(other.Name), deref(g.Name), deref(oi.Publisher), deref(oi.Offer), deref(oi.SKU))
		}
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

// immutableDefinitionFields refuses a PUT changing a definition's
// identity, naming every changed property as Azure does.
func immutableDefinitionFields(old, in *armcompute.GalleryImageProperties) *Error {
	fields := []struct{ name, old, new string }{
		{"osType", strOf(old.OSType), strOf(in.OSType)},
		{"osState", strOf(old.OSState), strOf(in.OSState)},
		{"hyperVGeneration", strOf(old.HyperVGeneration), strOf(in.HyperVGeneration)},
		{"identifier.publisher", deref(old.Identifier.Publisher), deref(in.Identifier.Publisher)},
		{"identifier.offer", deref(old.Identifier.Offer), deref(in.Identifier.Offer)},
		{"identifier.sku", deref(old.Identifier.SKU), deref(in.Identifier.SKU)},
		{"architecture", strOf(old.Architecture), strOf(in.Architecture)},
	}
	var changed []string
	for _, fl := range fields {
		if !strings.EqualFold(fl.old, fl.new) {
			changed = append(changed, fmt.Sprintf("Changing property '%s' is not allowed ('%s' -> '%s').", fl.name, fl.old, fl.new))
		}
	}
	if len(changed) == 0 {
		return nil
	}
	return newErr(http.StatusConflict, cloud.CodePropertyChangeNotAllowed, "%s", strings.Join(changed, " "))
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
