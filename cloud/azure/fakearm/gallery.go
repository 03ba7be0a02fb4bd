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

// gallery returns a gallery; a missing one is ResourceNotFound, or
// ParentResourceNotFound when nested is set (the caller addresses a
// resource inside it).
func (f *Fake) gallery(rg, name string, nested bool) (*armcompute.Gallery, *Error) {
	g, err := f.group(rg)
	if err != nil {
		return nil, err
	}
	gal, ok := f.galleries[key(cloud.GalleryID(f.sub, rg, name))]
	if !ok {
		if nested {
			return nil, armError(azrules.ParentNotFound("", name))
		}
		return nil, armError(azrules.ResourceNotFound("", "Microsoft.Compute/galleries", name, deref(g.Name)))
	}
	return gal, nil
}

func communityInfo(g *armcompute.Gallery) *armcompute.CommunityGalleryInfo {
	if g.Properties == nil || g.Properties.SharingProfile == nil {
		return nil
	}
	return g.Properties.SharingProfile.CommunityGalleryInfo
}

// currentCommunity is the community profile of a gallery whose sharing
// permissions are Community, as the sharing rule compares it; nil for a
// private gallery.
func currentCommunity(g *armcompute.Gallery) *cloud.CommunityInfo {
	sp := g.Properties.SharingProfile
	if sp == nil || sp.Permissions == nil || *sp.Permissions != armcompute.GallerySharingPermissionTypesCommunity || sp.CommunityGalleryInfo == nil {
		return nil
	}
	return &cloud.CommunityInfo{PublicNamePrefix: deref(sp.CommunityGalleryInfo.PublicNamePrefix)}
}

func communityEnabled(g *armcompute.Gallery) bool {
	ci := communityInfo(g)
	return ci != nil && deref(ci.CommunityGalleryEnabled)
}

// galleryOut is the answer for a gallery. A read (GET, list) of a public
// community gallery answers its publicNames and communityGalleryEnabled
// but no publicNamePrefix, with or without $expand (GalleryRP 2025-03-03
// CommunityGallery_Get.json); a PUT echoes the profile it was given
// (CommunityGallery_Create.json).
func galleryOut(g *armcompute.Gallery, read bool) armcompute.Gallery {
	out := clone(*g)
	ci := communityInfo(&out)
	switch {
	case ci == nil:
	case !read:
		ci.PublicNames = nil
	case deref(ci.CommunityGalleryEnabled):
		ci.PublicNamePrefix = nil
	}
	return out
}

func (f *Fake) galleriesNewListPager(_ *armcompute.GalleriesClientListOptions) (resp azfake.PagerResponder[armcompute.GalleriesClientListResponse]) {
	return list(f, "", func() (armcompute.GalleriesClientListResponse, *Error) {
		var page armcompute.GalleriesClientListResponse
		for _, k := range sortedIDs(f.galleries, "") {
			g := galleryOut(f.galleries[k], true)
			page.Value = append(page.Value, &g)
		}
		return page, nil
	})
}

func (f *Fake) galleriesGet(ctx context.Context, rg, name string, opts *armcompute.GalleriesClientGetOptions) (resp azfake.Responder[armcompute.GalleriesClientGetResponse], errResp azfake.ErrorResponder) {
	return answer(f, func() (armcompute.GalleriesClientGetResponse, *Error) {
		g, err := f.gallery(rg, name, false)
		if err != nil {
			return armcompute.GalleriesClientGetResponse{}, err
		}
		return armcompute.GalleriesClientGetResponse{Gallery: galleryOut(g, true)}, nil
	})
}

func (f *Fake) galleriesBeginCreateOrUpdate(ctx context.Context, rg, name string, in armcompute.Gallery, _ *armcompute.GalleriesClientBeginCreateOrUpdateOptions) (resp azfake.PollerResponder[armcompute.GalleriesClientCreateOrUpdateResponse], errResp azfake.ErrorResponder) {
	return start(f, http.StatusCreated, func() (armcompute.GalleriesClientCreateOrUpdateResponse, *Error) {
		out, err := f.putGallery(ctx, rg, name, in)
		return armcompute.GalleriesClientCreateOrUpdateResponse{Gallery: out}, err
	})
}

// putGallery creates a gallery (a community gallery when the PUT's sharing
// permissions are Community) or updates its description, tags and
// community publisher details. A PUT without a sharing profile keeps the
// current one; one turning a private gallery into a community gallery, or
// changing the public name prefix, is refused (cloud.CheckCommunityProfileChange).
func (f *Fake) putGallery(ctx context.Context, rg, name string, in armcompute.Gallery) (armcompute.Gallery, *Error) {
	grp, err := f.group(rg)
	if err != nil {
		return armcompute.Gallery{}, err
	}
	id := cloud.GalleryID(f.sub, deref(grp.Name), name)
	for k, other := range f.galleries {
		if strings.EqualFold(deref(other.Name), name) && k != key(id) {
			return armcompute.Gallery{}, newErr(http.StatusConflict, cloud.CodeConflict,
				"The gallery name '%s' is not unique within the subscription '%s'. Please pick another gallery name. (It exists in resource group '%s'.)",
				name, f.sub, rgOf(deref(other.ID)))
		}
	}
	want := deref(in.Location)
	if want == "" {
		want = deref(grp.Location)
	}
	loc, lerr := f.resolveLocation(want, "Microsoft.Compute/galleries")
	if lerr != nil {
		return armcompute.Gallery{}, lerr
	}
	g, exists := f.galleries[key(id)]
	if exists && deref(g.Location) != loc {
		return armcompute.Gallery{}, armError(azrules.LocationChanged("", name, deref(grp.Name), deref(g.Location), loc))
	}
	var sp *armcompute.SharingProfile
	if in.Properties != nil {
		sp = in.Properties.SharingProfile
	}
	if sp != nil && sp.Permissions != nil && *sp.Permissions == armcompute.GallerySharingPermissionTypesCommunity {
		ci := sp.CommunityGalleryInfo
		if ci == nil || deref(ci.PublicNamePrefix) == "" || deref(ci.PublisherURI) == "" || deref(ci.PublisherContact) == "" || deref(ci.Eula) == "" {
			return armcompute.Gallery{}, armError(azrules.InvalidParameter("", "The community gallery info of gallery '%s' must set publicNamePrefix, publisherUri, publisherContact and eula.", name))
		}
		if exists {
			next := &cloud.CommunityInfo{PublicNamePrefix: deref(ci.PublicNamePrefix)}
			if ce := cloud.CheckCommunityProfileChange(id, currentCommunity(g), next); ce != nil {
				return armcompute.Gallery{}, newErr(ce.StatusCode, ce.Code, "%s", ce.Message)
			}
		}
	}
	if fe := f.lroFault(ctx, http.MethodPut, id); fe != nil {
		return armcompute.Gallery{}, nil
	}
	if !exists {
		g = &armcompute.Gallery{
			ID: to(id), Name: to(name), Location: to(loc), Type: to("Microsoft.Compute/galleries"),
			Properties: &armcompute.GalleryProperties{
				ProvisioningState: to(armcompute.GalleryProvisioningStateSucceeded),
				Identifier:        &armcompute.GalleryIdentifier{UniqueName: to(f.sub[:8] + "-" + strings.ToUpper(name))},
				SharingProfile:    &armcompute.SharingProfile{Permissions: to(armcompute.GallerySharingPermissionTypesPrivate)},
			},
		}
		f.galleries[key(id)] = g
	}
	g.Tags = copyTags(in.Tags)
	g.Properties.Description = nil
	if in.Properties != nil && deref(in.Properties.Description) != "" {
		g.Properties.Description = to(*in.Properties.Description)
	}
	if sp != nil && sp.Permissions != nil && *sp.Permissions == armcompute.GallerySharingPermissionTypesCommunity {
		cur := communityInfo(g)
		ci := &armcompute.CommunityGalleryInfo{
			PublicNamePrefix: sp.CommunityGalleryInfo.PublicNamePrefix,
			PublisherURI:     sp.CommunityGalleryInfo.PublisherURI,
			PublisherContact: sp.CommunityGalleryInfo.PublisherContact,
			Eula:             sp.CommunityGalleryInfo.Eula,
		}
		if cur != nil {
			ci.CommunityGalleryEnabled, ci.PublicNames = cur.CommunityGalleryEnabled, cur.PublicNames
			ci.PublicNamePrefix = cur.PublicNamePrefix
		}
		g.Properties.SharingProfile = &armcompute.SharingProfile{Permissions: sp.Permissions, CommunityGalleryInfo: ci}
	}
	return galleryOut(g, false), nil
}

func rgOf(id string) string {
	rid, err := cloud.ParseResourceID(id)
	if err != nil {
		return ""
	}
	return rid.ResourceGroup
}

func (f *Fake) gallerySharingBeginUpdate(ctx context.Context, rg, name string, in armcompute.SharingUpdate, _ *armcompute.GallerySharingProfileClientBeginUpdateOptions) (resp azfake.PollerResponder[armcompute.GallerySharingProfileClientUpdateResponse], errResp azfake.ErrorResponder) {
	return start(f, http.StatusAccepted, func() (armcompute.GallerySharingProfileClientUpdateResponse, *Error) {
		accepted, err := f.share(ctx, rg, name, strOf(in.OperationType))
		if err != nil || !accepted {
			return armcompute.GallerySharingProfileClientUpdateResponse{}, err
		}
		return armcompute.GallerySharingProfileClientUpdateResponse{SharingUpdate: armcompute.SharingUpdate{OperationType: in.OperationType}}, nil
	})
}

// share applies a sharing update (EnableCommunity or Reset) to a
// gallery; accepted is false when a fault fails the operation after it
// was accepted.
func (f *Fake) share(ctx context.Context, rg, name, op string) (accepted bool, _ *Error) {
	g, err := f.gallery(rg, name, false)
	if err != nil {
		return false, err
	}
	switch op {
	case string(armcompute.SharingUpdateOperationTypesEnableCommunity):
		ci := communityInfo(g)
		shared := cloud.Gallery{ID: deref(g.ID), Name: name}
		if currentCommunity(g) != nil && ci != nil && deref(ci.PublicNamePrefix) != "" {
			shared.Community = currentCommunity(g)
		}
		// CommunityEnabled stays unset: the definitions of an
		// already shared gallery are checked again.
		if err := azrules.CheckShareable(&shared, f.definitionsIn(g)); err != nil {
			return false, armError(err)
		}
		if fe := f.lroFault(ctx, http.MethodPost, deref(g.ID)+"/share"); fe != nil {
			return false, nil
		}
		if !deref(ci.CommunityGalleryEnabled) {
			ci.CommunityGalleryEnabled = to(true)
			ci.PublicNames = []*string{to(deref(ci.PublicNamePrefix) + "-" + f.guid())}
		}
	case string(armcompute.SharingUpdateOperationTypesReset):
		g.Properties.SharingProfile = &armcompute.SharingProfile{Permissions: to(armcompute.GallerySharingPermissionTypesPrivate)}
	default:
		return false, armError(azrules.InvalidParameter("", "The sharing operation '%s' is not supported by this fake.", op))
	}
	return true, nil
}

func (f *Fake) communityGalleriesGet(ctx context.Context, location, public string, _ *armcompute.CommunityGalleriesClientGetOptions) (resp azfake.Responder[armcompute.CommunityGalleriesClientGetResponse], errResp azfake.ErrorResponder) {
	return answer(f, func() (armcompute.CommunityGalleriesClientGetResponse, *Error) {
		g := f.communityGallery(location, public)
		if g == nil {
			return armcompute.CommunityGalleriesClientGetResponse{}, newErr(http.StatusNotFound, "GalleryNotFound",
				"The community gallery '%s' was not found in location '%s'.", public, location)
		}
		ci := communityInfo(g)
		return armcompute.CommunityGalleriesClientGetResponse{CommunityGallery: armcompute.CommunityGallery{
			Name: to(public), Location: g.Location, Type: to("Microsoft.Compute/locations/communityGalleries"),
			Identifier: &armcompute.CommunityGalleryIdentifier{UniqueID: to("/CommunityGalleries/" + public)},
			Properties: &armcompute.CommunityGalleryProperties{
				CommunityMetadata: &armcompute.CommunityGalleryMetadata{
					PublisherURI: ci.PublisherURI, PublisherContact: to(deref(ci.PublisherContact)), Eula: ci.Eula,
					PublicNames: ci.PublicNames,
				},
			},
		}}, nil
	})
}

// communityGallery is the shared gallery whose first public name is
// public, when it is in location; nil otherwise.
func (f *Fake) communityGallery(location, public string) *armcompute.Gallery {
	for _, k := range sortedIDs(f.galleries, "") {
		g := f.galleries[k]
		ci := communityInfo(g)
		if ci == nil || !deref(ci.CommunityGalleryEnabled) || len(ci.PublicNames) == 0 || !strings.EqualFold(deref(ci.PublicNames[0]), public) {
			continue
		}
		if loc, ok := f.regions.Physical(location); !ok || loc != deref(g.Location) {
			return nil
		}
		return g
	}
	return nil
}
