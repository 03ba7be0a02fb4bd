package fakearm

import (
	"context"
	"net/http"
	"strings"

	azfake "github.com/Azure/azure-sdk-for-go/sdk/azcore/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azure/internal/armconv"
)

// Image versions are the simulation's: it checks their sources, publishes
// them and replicates them on its clock (sim.go's replication); a long
// operation on one ends with its provisioning (lro.go's progress). ARM
// names regions by display name, and answers the replication status only
// with $expand=ReplicationStatus.

func (f *Fake) versionOut(v *cloud.ImageVersion, expand bool) armcompute.GalleryImageVersion {
	return armconv.ImageVersion(*v, f.regions.DisplayName, expand)
}

// versionIn reads a version request for the simulation.
func versionIn(in *armcompute.GalleryImageVersion, rg, gallery, def, name string) cloud.ImageVersion {
	v := armconv.ImageVersionOf(in, rg, gallery, def, nil)
	v.Name, v.ResourceGroup, v.Gallery, v.Definition = name, rg, gallery, def
	return v
}

func (f *Fake) galleryImageVersionsGet(ctx context.Context, rg, gallery, def, name string, opts *armcompute.GalleryImageVersionsClientGetOptions) (resp azfake.Responder[armcompute.GalleryImageVersionsClientGetResponse], errResp azfake.ErrorResponder) {
	return answer(f, func() (armcompute.GalleryImageVersionsClientGetResponse, *Error) {
		expand := opts != nil && opts.Expand != nil && strings.EqualFold(string(*opts.Expand), string(armcompute.ReplicationStatusTypesReplicationStatus))
		v, _, err := f.sim.ImageVersionProgress(simCtx(ctx), rg, gallery, def, name, expand)
		if err != nil {
			return armcompute.GalleryImageVersionsClientGetResponse{}, armError(err)
		}
		return armcompute.GalleryImageVersionsClientGetResponse{GalleryImageVersion: f.versionOut(v, expand)}, nil
	})
}

func (f *Fake) galleryImageVersionsNewListByGalleryImagePager(rg, gallery, def string, _ *armcompute.GalleryImageVersionsClientListByGalleryImageOptions) (resp azfake.PagerResponder[armcompute.GalleryImageVersionsClientListByGalleryImageResponse]) {
	return list(f, cloud.ImageDefinitionID(f.sub, rg, gallery, def)+"/versions", func() (armcompute.GalleryImageVersionsClientListByGalleryImageResponse, *Error) {
		var page armcompute.GalleryImageVersionsClientListByGalleryImageResponse
		versions, err := f.sim.ListImageVersions(context.Background(), rg, gallery, def)
		if err != nil {
			return page, armError(err)
		}
		for i := range versions {
			page.Value = append(page.Value, to(f.versionOut(&versions[i], false)))
		}
		return page, nil
	})
}

func (f *Fake) galleryImageVersionsBeginCreateOrUpdate(ctx context.Context, rg, gallery, def, name string, in armcompute.GalleryImageVersion, _ *armcompute.GalleryImageVersionsClientBeginCreateOrUpdateOptions) (resp azfake.PollerResponder[armcompute.GalleryImageVersionsClientCreateOrUpdateResponse], errResp azfake.ErrorResponder) {
	return start(f, http.StatusCreated, func() (armcompute.GalleryImageVersionsClientCreateOrUpdateResponse, *Error) {
		v, err := f.sim.CreateImageVersion(simCtx(ctx), versionIn(&in, rg, gallery, def, name))
		if err != nil {
			return armcompute.GalleryImageVersionsClientCreateOrUpdateResponse{}, armError(err)
		}
		v = f.failedByFault(ctx, http.MethodPut, v)
		return armcompute.GalleryImageVersionsClientCreateOrUpdateResponse{GalleryImageVersion: f.versionOut(v, false)}, nil
	})
}

func (f *Fake) galleryImageVersionsBeginUpdate(ctx context.Context, rg, gallery, def, name string, in armcompute.GalleryImageVersionUpdate, _ *armcompute.GalleryImageVersionsClientBeginUpdateOptions) (resp azfake.PollerResponder[armcompute.GalleryImageVersionsClientUpdateResponse], errResp azfake.ErrorResponder) {
	// PATCH accepts only 200, initial answer included.
	return start(f, http.StatusOK, func() (armcompute.GalleryImageVersionsClientUpdateResponse, *Error) {
		cur, _, err := f.sim.ImageVersionProgress(simCtx(ctx), rg, gallery, def, name, false)
		if err != nil {
			return armcompute.GalleryImageVersionsClientUpdateResponse{}, armError(err)
		}
		want := versionIn(&armcompute.GalleryImageVersion{Properties: in.Properties, Tags: in.Tags}, rg, gallery, def, name)
		if in.Properties == nil || in.Properties.PublishingProfile == nil || in.Properties.PublishingProfile.ExcludeFromLatest == nil {
			want.ExcludeFromLatest = cur.ExcludeFromLatest // absent from the PATCH: kept
		}
		v, err := f.sim.UpdateImageVersion(simCtx(ctx), want)
		if err != nil {
			return armcompute.GalleryImageVersionsClientUpdateResponse{}, armError(err)
		}
		v = f.failedByFault(ctx, http.MethodPatch, v)
		return armcompute.GalleryImageVersionsClientUpdateResponse{GalleryImageVersion: f.versionOut(v, false)}, nil
	})
}

// failedByFault fails the operation that made or changed v when an LRO
// fault matches it: v stays, Failed, as on Azure (it must be deleted
// before its name is used again).
func (f *Fake) failedByFault(ctx context.Context, method string, v *cloud.ImageVersion) *cloud.ImageVersion {
	if fe := f.lroFault(ctx, method, v.ID); fe == nil {
		return v
	}
	var failure error
	if fl := f.lroFail[strings.ToLower(v.ID)]; fl != nil && fl.err != nil {
		failure = fl.err
	}
	if err := f.sim.FailImageVersion(simCtx(ctx), v.ResourceGroup, v.Gallery, v.Definition, v.Name, failure); err == nil {
		v.ProvisioningState = cloud.ProvisioningFailed
	}
	return v
}

func (f *Fake) galleryImageVersionsBeginDelete(ctx context.Context, rg, gallery, def, name string, _ *armcompute.GalleryImageVersionsClientBeginDeleteOptions) (resp azfake.PollerResponder[armcompute.GalleryImageVersionsClientDeleteResponse], errResp azfake.ErrorResponder) {
	return startDelete(f, func() (armcompute.GalleryImageVersionsClientDeleteResponse, *Error) {
		v, _, err := f.sim.ImageVersionProgress(simCtx(ctx), rg, gallery, def, name, false)
		if err != nil {
			return armcompute.GalleryImageVersionsClientDeleteResponse{}, armError(err)
		}
		if fe := f.lroFault(ctx, http.MethodDelete, v.ID); fe != nil {
			return armcompute.GalleryImageVersionsClientDeleteResponse{}, nil
		}
		return armcompute.GalleryImageVersionsClientDeleteResponse{}, armError(f.sim.DeleteImageVersion(simCtx(ctx), rg, gallery, def, name))
	})
}

// versionStatus is the status of a long operation on the version at id:
// InProgress until its provisioning ended, then Succeeded, or Failed with
// its failure. poll counts as a read of its replication. Called under
// f.mu.
func (f *Fake) versionStatus(id string, poll bool) (string, *Error) {
	rid, err := cloud.ParseResourceID(id)
	if err != nil || len(rid.Names) != 3 {
		return statusSucceeded, nil
	}
	v, failure, err := f.sim.ImageVersionProgress(context.Background(), rid.ResourceGroup, rid.Names[0], rid.Names[1], rid.Names[2], poll)
	switch {
	case err != nil:
		return statusSucceeded, nil // deleted meanwhile
	case v.Failed():
		return statusFailed, armError(failure)
	case v.Provisioning():
		return statusInProgress, nil
	}
	return statusSucceeded, nil
}
