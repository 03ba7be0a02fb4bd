package fakearm

import (
	"context"
	"net/http"
	"strings"

	azfake "github.com/Azure/azure-sdk-for-go/sdk/azcore/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/cloud/azure/internal/armconv"
)

// galleryOut is the answer for a gallery: a read (GET, list) shows a
// public gallery's names, a PUT echoes its profile (armconv.GalleryRead).
func (f *Fake) galleryOut(g cloud.Gallery, read bool) armcompute.Gallery {
	out := armconv.Gallery(g)
	if read {
		out = armconv.GalleryRead(g)
	}
	out.Properties.Identifier = &armcompute.GalleryIdentifier{UniqueName: to(f.sub[:8] + "-" + strings.ToUpper(g.Name))}
	return out
}

func (f *Fake) galleriesNewListPager(_ *armcompute.GalleriesClientListOptions) (resp azfake.PagerResponder[armcompute.GalleriesClientListResponse]) {
	return list(f, "", func() (armcompute.GalleriesClientListResponse, *Error) {
		var page armcompute.GalleriesClientListResponse
		gs, err := f.sim.ListGalleries(context.Background())
		if err != nil {
			return page, armError(err)
		}
		for _, g := range gs {
			out := f.galleryOut(g, true)
			page.Value = append(page.Value, &out)
		}
		return page, nil
	})
}

func (f *Fake) galleriesGet(ctx context.Context, rg, name string, opts *armcompute.GalleriesClientGetOptions) (resp azfake.Responder[armcompute.GalleriesClientGetResponse], errResp azfake.ErrorResponder) {
	return answer(f, func() (armcompute.GalleriesClientGetResponse, *Error) {
		g, err := f.sim.GetGallery(simCtx(ctx), rg, name)
		if err != nil {
			return armcompute.GalleriesClientGetResponse{}, armError(err)
		}
		return armcompute.GalleriesClientGetResponse{Gallery: f.galleryOut(*g, true)}, nil
	})
}

func (f *Fake) galleriesBeginCreateOrUpdate(ctx context.Context, rg, name string, in armcompute.Gallery, _ *armcompute.GalleriesClientBeginCreateOrUpdateOptions) (resp azfake.PollerResponder[armcompute.GalleriesClientCreateOrUpdateResponse], errResp azfake.ErrorResponder) {
	return start(f, http.StatusCreated, func() (armcompute.GalleriesClientCreateOrUpdateResponse, *Error) {
		out, err := f.putGallery(ctx, rg, name, in)
		return armcompute.GalleriesClientCreateOrUpdateResponse{Gallery: out}, err
	})
}

// putGallery creates or updates a gallery in the simulation. A community
// sharing profile must carry all four publisher fields, which the
// request model does not enforce.
func (f *Fake) putGallery(ctx context.Context, rg, name string, in armcompute.Gallery) (armcompute.Gallery, *Error) {
	if in.Properties != nil && in.Properties.SharingProfile != nil && strOf(in.Properties.SharingProfile.Permissions) == string(armcompute.GallerySharingPermissionTypesCommunity) {
		ci := in.Properties.SharingProfile.CommunityGalleryInfo
		if ci == nil || deref(ci.PublicNamePrefix) == "" || deref(ci.PublisherURI) == "" || deref(ci.PublisherContact) == "" || deref(ci.Eula) == "" {
			return armcompute.Gallery{}, armError(azrules.InvalidParameter("", "The community gallery info of gallery '%s' must set publicNamePrefix, publisherUri, publisherContact and eula.", name))
		}
	}
	if fe := f.lroFault(ctx, http.MethodPut, cloud.GalleryID(f.sub, rg, name)); fe != nil {
		return armcompute.Gallery{}, nil
	}
	want := armconv.GalleryOf(&in, rg)
	want.Name, want.ResourceGroup, want.Location = name, rg, deref(in.Location)
	g, err := f.sim.CreateGallery(simCtx(ctx), want)
	if err != nil {
		return armcompute.Gallery{}, armError(err)
	}
	return f.galleryOut(*g, false), nil
}

func (f *Fake) gallerySharingBeginUpdate(ctx context.Context, rg, name string, in armcompute.SharingUpdate, _ *armcompute.GallerySharingProfileClientBeginUpdateOptions) (resp azfake.PollerResponder[armcompute.GallerySharingProfileClientUpdateResponse], errResp azfake.ErrorResponder) {
	return start(f, http.StatusAccepted, func() (armcompute.GallerySharingProfileClientUpdateResponse, *Error) {
		if op := strOf(in.OperationType); op != string(armcompute.SharingUpdateOperationTypesEnableCommunity) {
			return armcompute.GallerySharingProfileClientUpdateResponse{}, armError(azrules.InvalidParameter("", "The sharing operation '%s' is not supported by this fake.", op))
		}
		g, err := f.sim.GetGallery(simCtx(ctx), rg, name)
		if err != nil {
			return armcompute.GallerySharingProfileClientUpdateResponse{}, armError(err)
		}
		if fe := f.lroFault(ctx, http.MethodPost, g.ID+"/share"); fe != nil {
			return armcompute.GallerySharingProfileClientUpdateResponse{}, nil
		}
		if _, err := f.sim.ShareCommunity(simCtx(ctx), rg, name); err != nil {
			return armcompute.GallerySharingProfileClientUpdateResponse{}, armError(err)
		}
		return armcompute.GallerySharingProfileClientUpdateResponse{SharingUpdate: armcompute.SharingUpdate{OperationType: in.OperationType}}, nil
	})
}

func (f *Fake) communityGalleriesGet(ctx context.Context, location, public string, _ *armcompute.CommunityGalleriesClientGetOptions) (resp azfake.Responder[armcompute.CommunityGalleriesClientGetResponse], errResp azfake.ErrorResponder) {
	return answer(f, func() (armcompute.CommunityGalleriesClientGetResponse, *Error) {
		g := f.communityGallery(location, public)
		if g == nil {
			return armcompute.CommunityGalleriesClientGetResponse{}, armError(azrules.CommunityGalleryNotFound(public, location))
		}
		return armcompute.CommunityGalleriesClientGetResponse{CommunityGallery: armcompute.CommunityGallery{
			Name: to(public), Location: to(g.Location), Type: to("Microsoft.Compute/locations/communityGalleries"),
			Identifier: &armcompute.CommunityGalleryIdentifier{UniqueID: to("/CommunityGalleries/" + public)},
			Properties: &armcompute.CommunityGalleryProperties{
				CommunityMetadata: &armcompute.CommunityGalleryMetadata{
					PublisherURI: to(g.Community.PublisherURI), PublisherContact: to(g.Community.PublisherContact), Eula: to(g.Community.EULA),
					PublicNames: armconv.GalleryRead(*g).Properties.SharingProfile.CommunityGalleryInfo.PublicNames,
				},
			},
		}}, nil
	})
}

// communityGallery is the shared gallery whose first public name is
// public, when it is in location; nil otherwise.
func (f *Fake) communityGallery(location, public string) *cloud.Gallery {
	gs, _ := f.sim.ListGalleries(context.Background())
	for _, g := range gs {
		if g.Community == nil || !g.CommunityEnabled || !strings.EqualFold(g.PublicName(), public) {
			continue
		}
		if loc, ok := f.regions.Physical(location); !ok || loc != g.Location {
			return nil
		}
		return &g
	}
	return nil
}
