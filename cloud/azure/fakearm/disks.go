package fakearm

import (
	"context"
	"net/http"
	"strings"
	"time"

	azfake "github.com/Azure/azure-sdk-for-go/sdk/azcore/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/cloud/azure/internal/armconv"
)

// Managed images and disks are the simulation's; their data is the blob
// backend's (blobData), a disk's access SAS a SAS of its copy there.

func (f *Fake) imagesGet(ctx context.Context, rg, name string, _ *armcompute.ImagesClientGetOptions) (resp azfake.Responder[armcompute.ImagesClientGetResponse], errResp azfake.ErrorResponder) {
	return answer(f, func() (armcompute.ImagesClientGetResponse, *Error) {
		img, err := f.sim.GetManagedImage(simCtx(ctx), rg, name)
		if err != nil {
			return armcompute.ImagesClientGetResponse{}, armError(err)
		}
		return armcompute.ImagesClientGetResponse{Image: armconv.ManagedImage(*img)}, nil
	})
}

func (f *Fake) imagesBeginCreateOrUpdate(ctx context.Context, rg, name string, in armcompute.Image, _ *armcompute.ImagesClientBeginCreateOrUpdateOptions) (resp azfake.PollerResponder[armcompute.ImagesClientCreateOrUpdateResponse], errResp azfake.ErrorResponder) {
	return start(f, http.StatusCreated, func() (armcompute.ImagesClientCreateOrUpdateResponse, *Error) {
		if fe := f.lroFault(ctx, http.MethodPut, cloud.ManagedImageID(f.sub, rg, name)); fe != nil {
			return armcompute.ImagesClientCreateOrUpdateResponse{}, nil
		}
		want := armconv.ManagedImageOf(&in, rg, func(s string) string { return s })
		want.Name, want.ResourceGroup = name, rg
		img, err := f.sim.CreateManagedImage(simCtx(ctx), want)
		if err != nil {
			return armcompute.ImagesClientCreateOrUpdateResponse{}, armError(err)
		}
		return armcompute.ImagesClientCreateOrUpdateResponse{Image: armconv.ManagedImage(*img)}, nil
	})
}

// imagesBeginUpdate is a PATCH of an image's tags: a PUT of the image as
// it is with the new tags; its storage profile cannot change.
func (f *Fake) imagesBeginUpdate(ctx context.Context, rg, name string, in armcompute.ImageUpdate, _ *armcompute.ImagesClientBeginUpdateOptions) (resp azfake.PollerResponder[armcompute.ImagesClientUpdateResponse], errResp azfake.ErrorResponder) {
	return start(f, http.StatusOK, func() (armcompute.ImagesClientUpdateResponse, *Error) {
		img, err := f.sim.GetManagedImage(simCtx(ctx), rg, name)
		if err != nil {
			return armcompute.ImagesClientUpdateResponse{}, armError(err)
		}
		if in.Properties != nil && in.Properties.StorageProfile != nil {
			return armcompute.ImagesClientUpdateResponse{}, armError(azrules.PropertyChange(img.ID, "storageProfile"))
		}
		if in.Tags != nil {
			img.Tags = armconv.TagsOf(in.Tags)
			if img, err = f.sim.CreateManagedImage(simCtx(ctx), *img); err != nil {
				return armcompute.ImagesClientUpdateResponse{}, armError(err)
			}
		}
		return armcompute.ImagesClientUpdateResponse{Image: armconv.ManagedImage(*img)}, nil
	})
}

func (f *Fake) imagesBeginDelete(ctx context.Context, rg, name string, _ *armcompute.ImagesClientBeginDeleteOptions) (resp azfake.PollerResponder[armcompute.ImagesClientDeleteResponse], errResp azfake.ErrorResponder) {
	return startDelete(f, func() (armcompute.ImagesClientDeleteResponse, *Error) {
		img, err := f.sim.GetManagedImage(simCtx(ctx), rg, name)
		if err != nil {
			return armcompute.ImagesClientDeleteResponse{}, armError(err)
		}
		if fe := f.lroFault(ctx, http.MethodDelete, img.ID); fe != nil {
			return armcompute.ImagesClientDeleteResponse{}, nil
		}
		return armcompute.ImagesClientDeleteResponse{}, armError(f.sim.DeleteManagedImage(simCtx(ctx), rg, name))
	})
}

// diskOut is a disk as ARM answers it, with its version's OS type.
func (f *Fake) diskOut(d *cloud.Disk) armcompute.Disk {
	var osType string
	if rid, err := cloud.ParseResourceID(d.SourceImageVersionID); err == nil && len(rid.Names) == 3 {
		if def, err := f.sim.GetImageDefinition(context.Background(), rid.ResourceGroup, rid.Names[0], rid.Names[1]); err == nil {
			osType = def.OSType
		}
	}
	return armconv.Disk(*d, osType)
}

func (f *Fake) disksGet(ctx context.Context, rg, name string, _ *armcompute.DisksClientGetOptions) (resp azfake.Responder[armcompute.DisksClientGetResponse], errResp azfake.ErrorResponder) {
	return answer(f, func() (armcompute.DisksClientGetResponse, *Error) {
		d, err := f.sim.GetDisk(simCtx(ctx), rg, name)
		if err != nil {
			return armcompute.DisksClientGetResponse{}, armError(err)
		}
		return armcompute.DisksClientGetResponse{Disk: f.diskOut(d)}, nil
	})
}

func (f *Fake) disksBeginCreateOrUpdate(ctx context.Context, rg, name string, in armcompute.Disk, _ *armcompute.DisksClientBeginCreateOrUpdateOptions) (resp azfake.PollerResponder[armcompute.DisksClientCreateOrUpdateResponse], errResp azfake.ErrorResponder) {
	return start(f, http.StatusAccepted, func() (armcompute.DisksClientCreateOrUpdateResponse, *Error) {
		p := in.Properties
		if p == nil || p.CreationData == nil || strOf(p.CreationData.CreateOption) != string(armcompute.DiskCreateOptionFromImage) ||
			p.CreationData.GalleryImageReference == nil || deref(p.CreationData.GalleryImageReference.ID) == "" {
			return armcompute.DisksClientCreateOrUpdateResponse{}, armError(azrules.InvalidParameter("", "This fake creates disks FromImage with a galleryImageReference id only."))
		}
		if fe := f.lroFault(ctx, http.MethodPut, cloud.DiskID(f.sub, rg, name)); fe != nil {
			return armcompute.DisksClientCreateOrUpdateResponse{}, nil
		}
		want := cloud.Disk{Name: name, ResourceGroup: rg, Location: deref(in.Location), Tags: armconv.TagsOf(in.Tags),
			SourceImageVersionID: *p.CreationData.GalleryImageReference.ID, HyperVGeneration: strOf(p.HyperVGeneration)}
		if p.SecurityProfile != nil {
			// ConfidentialVM_… (how its guest state is encrypted) is a
			// ConfidentialVM disk.
			want.SecurityType = strOf(p.SecurityProfile.SecurityType)
			if strings.HasPrefix(want.SecurityType, azrules.SecurityConfidentialVM) {
				want.SecurityType = azrules.SecurityConfidentialVM
			}
		}
		d, err := f.sim.CreateDiskFromImageVersion(simCtx(ctx), want)
		if err != nil {
			return armcompute.DisksClientCreateOrUpdateResponse{}, armError(err)
		}
		return armcompute.DisksClientCreateOrUpdateResponse{Disk: f.diskOut(d)}, nil
	})
}

func (f *Fake) disksBeginGrantAccess(ctx context.Context, rg, name string, in armcompute.GrantAccessData, _ *armcompute.DisksClientBeginGrantAccessOptions) (resp azfake.PollerResponder[armcompute.DisksClientGrantAccessResponse], errResp azfake.ErrorResponder) {
	return start(f, http.StatusAccepted, func() (armcompute.DisksClientGrantAccessResponse, *Error) {
		access, err := f.grantAccess(ctx, rg, name, in)
		return armcompute.DisksClientGrantAccessResponse{AccessURI: access}, err
	})
}

// grantAccess opens a disk's read SAS (and its VM guest state's, when
// asked); the zero AccessURI without an error when a fault fails the
// operation after it was accepted.
func (f *Fake) grantAccess(ctx context.Context, rg, name string, in armcompute.GrantAccessData) (armcompute.AccessURI, *Error) {
	d, err := f.sim.GetDisk(simCtx(ctx), rg, name)
	if err != nil {
		return armcompute.AccessURI{}, armError(err)
	}
	if a := strOf(in.Access); a != string(armcompute.AccessLevelRead) && a != string(armcompute.AccessLevelWrite) {
		return armcompute.AccessURI{}, armError(azrules.InvalidParameter(d.ID, "Access level '%s' is invalid: use Read or Write.", a))
	}
	if fe := f.lroFault(ctx, http.MethodPost, d.ID+"/beginGetAccess"); fe != nil {
		return armcompute.AccessURI{}, nil
	}
	sasURL, err := f.sim.GrantDiskAccess(simCtx(ctx), rg, name, time.Duration(deref(in.DurationInSeconds))*time.Second)
	if err != nil {
		return armcompute.AccessURI{}, armError(err)
	}
	access := armcompute.AccessURI{AccessSAS: to(sasURL)}
	if deref(in.GetSecureVMGuestStateSAS) && d.SecurityType == azrules.SecurityConfidentialVM {
		guest, err := f.guestStateSAS(d.ID) // gueststate.go
		if err != nil {
			return armcompute.AccessURI{}, err
		}
		access.SecurityDataAccessSAS = to(guest)
	}
	return access, nil
}

func (f *Fake) disksBeginRevokeAccess(ctx context.Context, rg, name string, _ *armcompute.DisksClientBeginRevokeAccessOptions) (resp azfake.PollerResponder[armcompute.DisksClientRevokeAccessResponse], errResp azfake.ErrorResponder) {
	return start(f, http.StatusAccepted, func() (armcompute.DisksClientRevokeAccessResponse, *Error) {
		if fe := f.lroFault(ctx, http.MethodPost, cloud.DiskID(f.sub, rg, name)+"/endGetAccess"); fe != nil {
			return armcompute.DisksClientRevokeAccessResponse{}, nil
		}
		return armcompute.DisksClientRevokeAccessResponse{}, armError(f.sim.RevokeDiskAccess(simCtx(ctx), rg, name))
	})
}

func (f *Fake) disksBeginDelete(ctx context.Context, rg, name string, _ *armcompute.DisksClientBeginDeleteOptions) (resp azfake.PollerResponder[armcompute.DisksClientDeleteResponse], errResp azfake.ErrorResponder) {
	return startDelete(f, func() (armcompute.DisksClientDeleteResponse, *Error) {
		d, err := f.sim.GetDisk(simCtx(ctx), rg, name)
		if err != nil {
			return armcompute.DisksClientDeleteResponse{}, armError(err)
		}
		if !d.AccessGranted {
			if fe := f.lroFault(ctx, http.MethodDelete, d.ID); fe != nil {
				return armcompute.DisksClientDeleteResponse{}, nil
			}
		}
		return armcompute.DisksClientDeleteResponse{}, armError(f.sim.DeleteDisk(simCtx(ctx), rg, name))
	})
}
