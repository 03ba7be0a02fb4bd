package fakearm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"time"

	azfake "github.com/Azure/azure-sdk-for-go/sdk/azcore/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
)

// managedImage is a managed image as the fake keeps it.
type managedImage struct {
	img     *armcompute.Image
	source  cloud.ImageSource // vhd (blob URI) or a disk id (Kind "")
	osType  string
	hyperV  string
	size    int64
	content string
}

// disk is a managed disk as the fake keeps it.
type disk struct {
	d       *armcompute.Disk
	size    int64
	content string // the blob its data was made from
	// data is the blob holding the disk's data in the blob backend
	// (account, container md-…, blob "abcd"), "" without a backend.
	data    string
	policy  string // stored access policy id of the open SAS
	granted bool
}

func (f *Fake) imagesGet(ctx context.Context, rg, name string, _ *armcompute.ImagesClientGetOptions) (resp azfake.Responder[armcompute.ImagesClientGetResponse], errResp azfake.ErrorResponder) {
	return answer(f, func() (armcompute.ImagesClientGetResponse, *Error) {
		m, err := f.image(rg, name)
		if err != nil {
			return armcompute.ImagesClientGetResponse{}, err
		}
		return armcompute.ImagesClientGetResponse{Image: clone(*m.img)}, nil
	})
}

func (f *Fake) imagesBeginCreateOrUpdate(ctx context.Context, rg, name string, in armcompute.Image, _ *armcompute.ImagesClientBeginCreateOrUpdateOptions) (resp azfake.PollerResponder[armcompute.ImagesClientCreateOrUpdateResponse], errResp azfake.ErrorResponder) {
	return start(f, http.StatusCreated, func() (armcompute.ImagesClientCreateOrUpdateResponse, *Error) {
		out, err := f.putImage(ctx, rg, name, in)
		return armcompute.ImagesClientCreateOrUpdateResponse{Image: out}, err
	})
}

func (f *Fake) imagesBeginUpdate(ctx context.Context, rg, name string, in armcompute.ImageUpdate, _ *armcompute.ImagesClientBeginUpdateOptions) (resp azfake.PollerResponder[armcompute.ImagesClientUpdateResponse], errResp azfake.ErrorResponder) {
	return start(f, http.StatusOK, func() (armcompute.ImagesClientUpdateResponse, *Error) {
		m, err := f.image(rg, name)
		if err != nil {
			return armcompute.ImagesClientUpdateResponse{}, err
		}
		if in.Properties != nil && in.Properties.StorageProfile != nil {
			return armcompute.ImagesClientUpdateResponse{}, armError(azrules.PropertyChange("", "storageProfile"))
		}
		if in.Tags != nil {
			m.img.Tags = copyTags(in.Tags)
		}
		return armcompute.ImagesClientUpdateResponse{Image: clone(*m.img)}, nil
	})
}

func (f *Fake) imagesBeginDelete(ctx context.Context, rg, name string, _ *armcompute.ImagesClientBeginDeleteOptions) (resp azfake.PollerResponder[armcompute.ImagesClientDeleteResponse], errResp azfake.ErrorResponder) {
	return startDelete(f, func() (armcompute.ImagesClientDeleteResponse, *Error) {
		m, err := f.image(rg, name)
		if err != nil {
			return armcompute.ImagesClientDeleteResponse{}, err
		}
		if fe := f.lroFault(ctx, http.MethodDelete, deref(m.img.ID)); fe == nil {
			delete(f.images, key(deref(m.img.ID)))
		}
		return armcompute.ImagesClientDeleteResponse{}, nil
	})
}

func (f *Fake) image(rg, name string) (*managedImage, *Error) {
	g, err := f.group(rg)
	if err != nil {
		return nil, err
	}
	m, ok := f.images[key(cloud.ManagedImageID(f.sub, rg, name))]
	if !ok {
		return nil, armError(azrules.ResourceNotFound("", "Microsoft.Compute/images", name, deref(g.Name)))
	}
	return m, nil
}

func imageSource(in armcompute.Image) cloud.ImageSource {
	if in.Properties == nil || in.Properties.StorageProfile == nil || in.Properties.StorageProfile.OSDisk == nil {
		return cloud.ImageSource{}
	}
	d := in.Properties.StorageProfile.OSDisk
	switch {
	case deref(d.BlobURI) != "":
		return cloud.ImageSource{Kind: cloud.SourceVHD, URI: *d.BlobURI}
	case d.ManagedDisk != nil:
		return cloud.ImageSource{ID: deref(d.ManagedDisk.ID)}
	}
	return cloud.ImageSource{}
}

func (f *Fake) putImage(ctx context.Context, rg, name string, in armcompute.Image) (armcompute.Image, *Error) {
	g, err := f.group(rg)
	if err != nil {
		return armcompute.Image{}, err
	}
	id := cloud.ManagedImageID(f.sub, deref(g.Name), name)
	want := deref(in.Location)
	if want == "" {
		want = deref(g.Location)
	}
	loc, lerr := f.resolveLocation(want, "Microsoft.Compute/images")
	if lerr != nil {
		return armcompute.Image{}, lerr
	}
	src := imageSource(in)
	if m, ok := f.images[key(id)]; ok {
		if deref(m.img.Location) != loc {
			return armcompute.Image{}, armError(azrules.LocationChanged("", name, deref(g.Name), deref(m.img.Location), loc))
		}
		if !cloud.SameSource(m.source, src) {
			return armcompute.Image{}, armError(azrules.PropertyChange("", "source"))
		}
		m.img.Tags = copyTags(in.Tags)
		return clone(*m.img), nil
	}
	m := &managedImage{source: src}
	osDisk := in.Properties.StorageProfile.OSDisk
	m.osType = strOf(osDisk.OSType)
	m.hyperV = strOf(in.Properties.HyperVGeneration)
	switch {
	case src.Kind == cloud.SourceVHD:
		size, _, err := f.checkVHD(src.URI)
		if err != nil {
			return armcompute.Image{}, err
		}
		m.size, m.content = size, stripQuery(src.URI)
	case src.ID != "":
		dk, ok := f.disks[key(src.ID)]
		if !ok {
			rid, _ := cloud.ParseResourceID(src.ID)
			name := src.ID
			if rid != nil && len(rid.Names) > 0 {
				name = rid.Names[0]
			}
			return armcompute.Image{}, armError(azrules.ResourceNotFound("", "Microsoft.Compute/disks", name, rgOf(src.ID)))
		}
		m.size, m.content = dk.size, dk.content
		if m.hyperV == "" {
			m.hyperV = strOf(dk.d.Properties.HyperVGeneration)
		}
		if m.osType == "" {
			m.osType = strOf(dk.d.Properties.OSType)
		}
	default:
		return armcompute.Image{}, armError(azrules.InvalidParameter("", "Managed image '%s' needs a source: storageProfile.osDisk.blobUri or managedDisk.", name))
	}
	if m.hyperV == "" {
		m.hyperV = cloud.HyperVGenV1 // Azure's default for images
	}
	if fe := f.lroFault(ctx, http.MethodPut, id); fe != nil {
		return armcompute.Image{}, nil
	}
	if src.Kind == cloud.SourceVHD {
		content, err := f.snapshot(id, m.content)
		if err != nil {
			return armcompute.Image{}, err
		}
		m.content = content
	}
	od := clone(*osDisk)
	od.OSType = optEnum[armcompute.OperatingSystemTypes](m.osType)
	if m.size > 0 {
		od.DiskSizeGB = to(int32((m.size + gib - 1) / gib))
	}
	m.img = &armcompute.Image{
		ID: to(id), Name: to(name), Location: to(loc), Type: to("Microsoft.Compute/images"), Tags: copyTags(in.Tags),
		Properties: &armcompute.ImageProperties{
			HyperVGeneration:  to(armcompute.HyperVGenerationTypes(m.hyperV)),
			ProvisioningState: to("Succeeded"),
			StorageProfile:    &armcompute.ImageStorageProfile{OSDisk: &od},
		},
	}
	f.images[key(id)] = m
	return clone(*m.img), nil
}

func optEnum[T ~string](s string) *T {
	if s == "" {
		return nil
	}
	v := T(s)
	return &v
}

func (f *Fake) disk(rg, name string) (*disk, *Error) {
	g, err := f.group(rg)
	if err != nil {
		return nil, err
	}
	d, ok := f.disks[key(cloud.DiskID(f.sub, rg, name))]
	if !ok {
		return nil, armError(azrules.ResourceNotFound("", "Microsoft.Compute/disks", name, deref(g.Name)))
	}
	return d, nil
}

func (f *Fake) disksGet(ctx context.Context, rg, name string, _ *armcompute.DisksClientGetOptions) (resp azfake.Responder[armcompute.DisksClientGetResponse], errResp azfake.ErrorResponder) {
	return answer(f, func() (armcompute.DisksClientGetResponse, *Error) {
		d, err := f.disk(rg, name)
		if err != nil {
			return armcompute.DisksClientGetResponse{}, err
		}
		return armcompute.DisksClientGetResponse{Disk: clone(*d.d)}, nil
	})
}

func (f *Fake) disksBeginCreateOrUpdate(ctx context.Context, rg, name string, in armcompute.Disk, _ *armcompute.DisksClientBeginCreateOrUpdateOptions) (resp azfake.PollerResponder[armcompute.DisksClientCreateOrUpdateResponse], errResp azfake.ErrorResponder) {
	return start(f, http.StatusAccepted, func() (armcompute.DisksClientCreateOrUpdateResponse, *Error) {
		out, err := f.putDisk(ctx, rg, name, in)
		return armcompute.DisksClientCreateOrUpdateResponse{Disk: out}, err
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
	d, err := f.disk(rg, name)
	if err != nil {
		return armcompute.AccessURI{}, err
	}
	if a := strOf(in.Access); a != string(armcompute.AccessLevelRead) && a != string(armcompute.AccessLevelWrite) {
		return armcompute.AccessURI{}, armError(azrules.InvalidParameter("", "Access level '%s' is invalid: use Read or Write.", a))
	}
	if d.granted {
		return armcompute.AccessURI{}, armError(azrules.GrantActive("", name, nil))
	}
	secs := int(deref(in.DurationInSeconds))
	if secs <= 0 {
		return armcompute.AccessURI{}, armError(azrules.InvalidParameter("", "durationInSeconds must be positive."))
	}
	if fe := f.lroFault(ctx, http.MethodPost, deref(d.d.ID)+"/beginGetAccess"); fe != nil {
		return armcompute.AccessURI{}, nil
	}
	sasURL, err := f.grant(d, time.Duration(secs)*time.Second)
	if err != nil {
		return armcompute.AccessURI{}, err
	}
	access := armcompute.AccessURI{AccessSAS: to(sasURL)}
	if deref(in.GetSecureVMGuestStateSAS) {
		guest, err := f.guestStateSAS(d) // gueststate.go
		if err != nil {
			return armcompute.AccessURI{}, err
		}
		access.SecurityDataAccessSAS = optString(guest)
	}
	d.granted = true
	d.d.Properties.DiskState = to(armcompute.DiskStateActiveSAS)
	return access, nil
}

func (f *Fake) disksBeginRevokeAccess(ctx context.Context, rg, name string, _ *armcompute.DisksClientBeginRevokeAccessOptions) (resp azfake.PollerResponder[armcompute.DisksClientRevokeAccessResponse], errResp azfake.ErrorResponder) {
	return start(f, http.StatusAccepted, func() (armcompute.DisksClientRevokeAccessResponse, *Error) {
		d, err := f.disk(rg, name)
		if err != nil {
			return armcompute.DisksClientRevokeAccessResponse{}, err
		}
		if fe := f.lroFault(ctx, http.MethodPost, deref(d.d.ID)+"/endGetAccess"); fe == nil {
			if rerr := f.revoke(d); rerr != nil {
				return armcompute.DisksClientRevokeAccessResponse{}, rerr
			}
			d.granted = false
			d.d.Properties.DiskState = to(armcompute.DiskStateUnattached)
		}
		return armcompute.DisksClientRevokeAccessResponse{}, nil
	})
}

func (f *Fake) disksBeginDelete(ctx context.Context, rg, name string, _ *armcompute.DisksClientBeginDeleteOptions) (resp azfake.PollerResponder[armcompute.DisksClientDeleteResponse], errResp azfake.ErrorResponder) {
	return startDelete(f, func() (armcompute.DisksClientDeleteResponse, *Error) {
		d, err := f.disk(rg, name)
		if err != nil {
			return armcompute.DisksClientDeleteResponse{}, err
		}
		if d.granted {
			return armcompute.DisksClientDeleteResponse{}, armError(azrules.DeleteGranted("", name))
		}
		if fe := f.lroFault(ctx, http.MethodDelete, deref(d.d.ID)); fe == nil {
			f.dropDiskData(d)
			delete(f.disks, key(deref(d.d.ID)))
		}
		return armcompute.DisksClientDeleteResponse{}, nil
	})
}

func (f *Fake) putDisk(ctx context.Context, rg, name string, in armcompute.Disk) (armcompute.Disk, *Error) {
	g, err := f.group(rg)
	if err != nil {
		return armcompute.Disk{}, err
	}
	id := cloud.DiskID(f.sub, deref(g.Name), name)
	loc, lerr := f.resolveLocation(deref(in.Location), "Microsoft.Compute/disks")
	if lerr != nil {
		return armcompute.Disk{}, lerr
	}
	p := in.Properties
	if p == nil || p.CreationData == nil || strOf(p.CreationData.CreateOption) != string(armcompute.DiskCreateOptionFromImage) ||
		p.CreationData.GalleryImageReference == nil || deref(p.CreationData.GalleryImageReference.ID) == "" {
		return armcompute.Disk{}, armError(azrules.InvalidParameter("", "This fake creates disks FromImage with a galleryImageReference id only."))
	}
	srcID := *p.CreationData.GalleryImageReference.ID
	if d, ok := f.disks[key(id)]; ok {
		old := cloud.Disk{Name: name, ResourceGroup: deref(g.Name), Location: deref(d.d.Location),
			SourceImageVersionID: deref(d.d.Properties.CreationData.GalleryImageReference.ID), SecurityType: securityOf(d.d.Properties)}
		if err := azrules.CheckDiskUnchanged(&old, loc, srcID, securityOf(p)); err != nil {
			return armcompute.Disk{}, armError(err)
		}
		d.d.Tags = copyTags(in.Tags)
		return clone(*d.d), nil
	}
	v, ok := f.versions[key(srcID)]
	if !ok {
		rid, perr := cloud.ParseResourceID(srcID)
		if perr != nil || !rid.Is("Microsoft.Compute", "galleries", "images", "versions") {
			return armcompute.Disk{}, armError(azrules.InvalidParameter("", "'%s' is not a gallery image version id.", srcID))
		}
		return armcompute.Disk{}, armError(azrules.ResourceNotFound("", "Microsoft.Compute/galleries/images/versions", strings.Join(rid.Names, "/"), rid.ResourceGroup))
	}
	hyperV := strOf(p.HyperVGeneration)
	if hyperV == "" {
		hyperV = v.def.HyperVGeneration
	}
	if !strings.EqualFold(hyperV, v.def.HyperVGeneration) {
		return armcompute.Disk{}, armError(azrules.InvalidParameter("", "The Hyper-V generation '%s' of the disk does not match the '%s' of gallery image definition '%s'.", hyperV, v.def.HyperVGeneration, v.def.Name))
	}
	if err := azrules.CheckDiskSource("", replicationOf(v), hyperV, loc, securityOf(p)); err != nil {
		return armcompute.Disk{}, armError(err)
	}
	if fe := f.lroFault(ctx, http.MethodPut, id); fe != nil {
		return armcompute.Disk{}, nil
	}
	d := &disk{size: v.size, content: v.content}
	if d.size == 0 {
		d.size = 30 * gib
	}
	gb := int32((d.size + gib - 1) / gib)
	props := &armcompute.DiskProperties{
		CreationData:      &armcompute.CreationData{CreateOption: to(armcompute.DiskCreateOptionFromImage), GalleryImageReference: &armcompute.ImageDiskReference{ID: to(srcID)}},
		HyperVGeneration:  to(armcompute.HyperVGeneration(hyperV)),
		OSType:            to(armcompute.OperatingSystemTypes(v.def.OSType)),
		SecurityProfile:   p.SecurityProfile,
		DiskSizeGB:        to(gb),
		DiskSizeBytes:     to(d.size),
		DiskState:         to(armcompute.DiskStateUnattached),
		ProvisioningState: to("Succeeded"),
		TimeCreated:       to(time.Now().UTC()),
		UniqueID:          to(f.guid()),
	}
	d.d = &armcompute.Disk{ID: to(id), Name: to(name), Location: to(loc), Type: to("Microsoft.Compute/disks"),
		Tags: copyTags(in.Tags), SKU: in.SKU, Properties: props}
	if berr := f.materialize(d); berr != nil {
		return armcompute.Disk{}, berr
	}
	f.disks[key(id)] = d
	return clone(*d.d), nil
}

// diskContainer is the container holding a disk's data in the blob
// backend, named like a managed disk's storage ("md-…").
func diskContainer(id string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(id)))
	return azrules.DiskAccountPrefix + hex.EncodeToString(sum[:6])
}

// grant returns the disk's read SAS URL: a real SAS of its data blob in
// the blob backend, else a well-formed managed-disk SAS URL (which reads
// nothing).
func (f *Fake) grant(d *disk, dur time.Duration) (string, *Error) {
	if f.opts.Blob != nil && d.data != "" {
		u, err := f.opts.Blob.grant(d, f.guid(), dur)
		if err != nil {
			return "", newErr(http.StatusInternalServerError, "InternalExecutionError", "fake disk SAS: %v", err)
		}
		return u, nil
	}
	c := diskContainer(deref(d.d.ID))
	sig := strings.ReplaceAll(f.guid(), "-", "")
	return "https://" + c + ".z7.blob.storage.azure.net/" + strings.TrimPrefix(c, azrules.DiskAccountPrefix) + "/abcd?sv=2018-03-28&sr=b&si=" + f.guid() + "&sig=" + sig, nil
}

func (f *Fake) revoke(d *disk) *Error {
	if f.opts.Blob != nil && d.data != "" {
		if err := f.opts.Blob.revoke(d); err != nil {
			return newErr(http.StatusInternalServerError, "InternalExecutionError", "fake disk revoke: %v", err)
		}
	}
	return nil
}

// materialize puts a new disk's data in the blob backend: a copy of its
// version's VHD.
func (f *Fake) materialize(d *disk) *Error {
	if f.opts.Blob == nil || d.content == "" {
		return nil
	}
	data, err := f.opts.Blob.copyToDisk(d.content, diskContainer(deref(d.d.ID)))
	if err != nil {
		return newErr(http.StatusInternalServerError, "InternalExecutionError", "fake disk data: %v", err)
	}
	d.data = data
	return nil
}

// snapshot copies the VHD a new image or version is made from into the
// resource's own storage, as Azure does: the source blob may be deleted
// once the resource exists (packer deletes its staged OS disk). Snapshots
// live as long as the blob backend.
func (f *Fake) snapshot(id, src string) (string, *Error) {
	if f.opts.Blob == nil || src == "" {
		return src, nil
	}
	data, err := f.opts.Blob.copyToDisk(src, diskContainer(id))
	if err != nil {
		return "", newErr(http.StatusInternalServerError, "InternalExecutionError", "fake image data: %v", err)
	}
	return data, nil
}

func (f *Fake) dropDiskData(d *disk) {
	if f.opts.Blob != nil && d.data != "" {
		f.opts.Blob.dropDisk(d)
	}
}

// securityOf is the security type of disk properties p ("" for none).
func securityOf(p *armcompute.DiskProperties) string {
	if p == nil || p.SecurityProfile == nil {
		return ""
	}
	return strOf(p.SecurityProfile.SecurityType)
}

// replicationOf is version v as the rules read its replication: a region
// is Completed once its replication is.
func replicationOf(v *version) *cloud.ImageVersion {
	out := &cloud.ImageVersion{ID: v.id}
	for _, t := range v.targets {
		if st := v.regions[t.Name]; st != nil && st.state == armcompute.ReplicationStateCompleted {
			out.Replication = append(out.Replication, cloud.RegionStatus{Region: t.Name, State: cloud.ReplicationCompleted, Progress: 100})
		}
	}
	return out
}
