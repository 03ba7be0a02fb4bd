package armconv

import (
	"fmt"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/internal/redact"
	"github.com/imgflow/imgflow/vhd"
)

const gib = 1 << 30

// SourceKindOf tells a managed image id from a gallery version id.
func SourceKindOf(id string) cloud.SourceKind {
	rid, err := cloud.ParseResourceID(id)
	switch {
	case err != nil:
		return ""
	case rid.Is("Microsoft.Compute", "images"):
		return cloud.SourceManagedImage
	case rid.Is("Microsoft.Compute", "galleries", "images", "versions"):
		return cloud.SourceImageVersion
	}
	return ""
}

// VersionStorageProfile is a version's source in Azure's three shapes.
func VersionStorageProfile(src cloud.ImageSource) (*armcompute.GalleryImageVersionStorageProfile, error) {
	switch src.Kind {
	case cloud.SourceManagedImage, cloud.SourceImageVersion:
		if src.ID == "" {
			return nil, fmt.Errorf("the %s source has no id", src.Kind)
		}
		return &armcompute.GalleryImageVersionStorageProfile{Source: &armcompute.GalleryArtifactVersionFullSource{ID: To(src.ID)}}, nil
	case cloud.SourceVHD:
		if src.URI == "" {
			return nil, fmt.Errorf("the VHD source has no URI")
		}
		s := &armcompute.GalleryDiskImageSource{URI: To(src.URI)}
		if src.StorageAccountID != "" {
			s.StorageAccountID = To(src.StorageAccountID)
		}
		return &armcompute.GalleryImageVersionStorageProfile{OSDiskImage: &armcompute.GalleryOSDiskImage{
			HostCaching: To(armcompute.HostCachingReadOnly),
			Source:      s,
		}}, nil
	}
	return nil, fmt.Errorf("the image version source kind %q is not supported; use a managed image, an image version or a VHD", src.Kind)
}

// VersionPublishingProfile is the publishing profile of v; create marks a
// PUT (storage account type included), otherwise a PATCH.
func VersionPublishingProfile(v cloud.ImageVersion, create bool) *armcompute.GalleryImageVersionPublishingProfile {
	pp := &armcompute.GalleryImageVersionPublishingProfile{
		ReplicaCount:      optInt32(v.ReplicaCount),
		ExcludeFromLatest: To(v.ExcludeFromLatest),
		EndOfLifeDate:     v.EndOfLife,
	}
	if create || v.StorageAccountType != "" {
		pp.StorageAccountType = Opt[armcompute.StorageAccountType](v.StorageAccountType)
	}
	for _, r := range v.TargetRegions {
		pp.TargetRegions = append(pp.TargetRegions, &armcompute.TargetRegion{
			Name:                 To(r.Name),
			RegionalReplicaCount: optInt32(r.ReplicaCount),
			StorageAccountType:   Opt[armcompute.StorageAccountType](r.StorageAccountType),
		})
	}
	return pp
}

func optInt32(n int) *int32 {
	if n == 0 {
		return nil
	}
	return To(int32(n))
}

// ImageVersionOf reads a version model (an answer, or the fake's request)
// into a cloud.ImageVersion; region names its regions as cloud does (the
// identity when nil). Replication details are redacted of any SAS.
func ImageVersionOf(g *armcompute.GalleryImageVersion, rg, gallery, def string, region func(string) string) cloud.ImageVersion {
	if region == nil {
		region = func(s string) string { return s }
	}
	out := cloud.ImageVersion{ID: Deref(g.ID), Name: Deref(g.Name), ResourceGroup: rg, Gallery: gallery, Definition: def,
		Location: region(Deref(g.Location)), Tags: TagsOf(g.Tags)}
	if rid, err := cloud.ParseResourceID(out.ID); err == nil && len(rid.Names) == 3 {
		out.ResourceGroup, out.Gallery, out.Definition = rid.ResourceGroup, rid.Names[0], rid.Names[1]
	}
	props := g.Properties
	if props == nil {
		return out
	}
	out.ProvisioningState = StrOf(props.ProvisioningState)
	if sp := props.StorageProfile; sp != nil {
		switch {
		case sp.Source != nil && Deref(sp.Source.ID) != "":
			out.Source = cloud.ImageSource{Kind: SourceKindOf(*sp.Source.ID), ID: *sp.Source.ID}
		case sp.OSDiskImage != nil && sp.OSDiskImage.Source != nil:
			s := sp.OSDiskImage.Source
			if Deref(s.URI) != "" {
				out.Source = cloud.ImageSource{Kind: cloud.SourceVHD, URI: *s.URI, StorageAccountID: Deref(s.StorageAccountID)}
			} else if Deref(s.ID) != "" {
				out.Source = cloud.ImageSource{Kind: SourceKindOf(*s.ID), ID: *s.ID}
			}
		}
		if sp.OSDiskImage != nil && sp.OSDiskImage.SizeInGB != nil {
			out.SizeBytes = int64(*sp.OSDiskImage.SizeInGB) * gib
		}
	}
	if pp := props.PublishingProfile; pp != nil {
		out.ReplicaCount = int(Deref(pp.ReplicaCount))
		out.StorageAccountType = StrOf(pp.StorageAccountType)
		out.ExcludeFromLatest = Deref(pp.ExcludeFromLatest)
		if pp.EndOfLifeDate != nil {
			t := pp.EndOfLifeDate.UTC()
			out.EndOfLife = &t
		}
		for _, r := range pp.TargetRegions {
			if r == nil || r.Name == nil {
				continue
			}
			t := cloud.TargetRegion{Name: region(*r.Name), ReplicaCount: int(Deref(r.RegionalReplicaCount)), StorageAccountType: StrOf(r.StorageAccountType)}
			if t.ReplicaCount == 0 {
				t.ReplicaCount = out.ReplicaCount
			}
			if t.StorageAccountType == "" {
				t.StorageAccountType = out.StorageAccountType
			}
			out.TargetRegions = append(out.TargetRegions, t)
		}
	}
	if rs := props.ReplicationStatus; rs != nil {
		for _, s := range rs.Summary {
			if s == nil {
				continue
			}
			out.Replication = append(out.Replication, cloud.RegionStatus{
				Region:   region(Deref(s.Region)),
				State:    StrOf(s.State),
				Progress: int(Deref(s.Progress)),
				Details:  redact.SAS(Deref(s.Details)),
			})
		}
	}
	return out
}

// ImageVersion is a version as ARM answers it: regions by display name
// (display), the replication status only when expand asks for it
// (GalleryImageVersion_Get_WithReplicationStatus.json: every region has
// its details, "" unless it failed).
func ImageVersion(v cloud.ImageVersion, display func(string) string, expand bool) armcompute.GalleryImageVersion {
	sp, _ := VersionStorageProfile(v.Source)
	if sp == nil {
		sp = &armcompute.GalleryImageVersionStorageProfile{}
	}
	if sp.OSDiskImage == nil {
		sp.OSDiskImage = &armcompute.GalleryOSDiskImage{HostCaching: To(armcompute.HostCachingReadOnly)}
	}
	if v.SizeBytes > 0 {
		sp.OSDiskImage.SizeInGB = To(int32((v.SizeBytes + gib - 1) / gib))
	}
	pp := VersionPublishingProfile(v, true)
	for _, t := range pp.TargetRegions {
		t.Name = To(display(*t.Name))
		t.ExcludeFromLatest = To(false)
	}
	props := &armcompute.GalleryImageVersionProperties{
		ProvisioningState: Opt[armcompute.GalleryProvisioningState](orSucceeded(v.ProvisioningState)),
		StorageProfile:    sp,
		PublishingProfile: pp,
	}
	if expand {
		rs := &armcompute.ReplicationStatus{}
		agg := armcompute.AggregatedReplicationStateCompleted
		for _, r := range v.Replication {
			switch r.State {
			case cloud.ReplicationFailed:
				agg = armcompute.AggregatedReplicationStateFailed
			case cloud.ReplicationReplicating:
				if agg != armcompute.AggregatedReplicationStateFailed {
					agg = armcompute.AggregatedReplicationStateInProgress
				}
			}
			rs.Summary = append(rs.Summary, &armcompute.RegionalReplicationStatus{Region: To(display(r.Region)),
				State: To(armcompute.ReplicationState(r.State)), Progress: To(int32(r.Progress)), Details: To(r.Details)})
		}
		rs.AggregatedState = To(agg)
		props.ReplicationStatus = rs
	}
	return armcompute.GalleryImageVersion{
		ID: To(v.ID), Name: To(v.Name), Location: To(display(v.Location)), Type: To("Microsoft.Compute/galleries/images/versions"),
		Tags: Tags(v.Tags), Properties: props,
	}
}

func orSucceeded(state string) string {
	if state == "" {
		return cloud.ProvisioningSucceeded
	}
	return state
}

// ManagedImageOf reads an image model into a cloud.ManagedImage: its
// source is the blob, or a managed disk (a source of no kind, its id).
func ManagedImageOf(img *armcompute.Image, rg string, region func(string) string) cloud.ManagedImage {
	out := cloud.ManagedImage{ID: Deref(img.ID), Name: Deref(img.Name), ResourceGroup: rg, Location: region(Deref(img.Location)), Tags: TagsOf(img.Tags)}
	if rid, err := cloud.ParseResourceID(out.ID); err == nil {
		out.ResourceGroup = rid.ResourceGroup
	}
	if props := img.Properties; props != nil {
		out.HyperVGeneration = StrOf(props.HyperVGeneration)
		if sp := props.StorageProfile; sp != nil && sp.OSDisk != nil {
			d := sp.OSDisk
			out.OSType = StrOf(d.OSType)
			if d.DiskSizeGB != nil {
				out.SizeBytes = int64(*d.DiskSizeGB) * gib
			}
			switch {
			case Deref(d.BlobURI) != "":
				out.Source = cloud.ImageSource{Kind: cloud.SourceVHD, URI: *d.BlobURI}
			case d.ManagedDisk != nil:
				out.Source = cloud.ImageSource{ID: Deref(d.ManagedDisk.ID)}
			}
		}
	}
	return out
}

// ManagedImage is a managed image as ARM answers it.
func ManagedImage(img cloud.ManagedImage) armcompute.Image {
	od := &armcompute.ImageOSDisk{OSState: To(armcompute.OperatingSystemStateTypesGeneralized),
		OSType: Opt[armcompute.OperatingSystemTypes](img.OSType)}
	switch {
	case img.Source.Kind == cloud.SourceVHD:
		od.BlobURI = To(img.Source.URI)
	case img.Source.ID != "":
		od.ManagedDisk = &armcompute.SubResource{ID: To(img.Source.ID)}
	}
	if img.SizeBytes > 0 {
		od.DiskSizeGB = To(int32((img.SizeBytes + gib - 1) / gib))
	}
	return armcompute.Image{
		ID: To(img.ID), Name: To(img.Name), Location: To(img.Location), Type: To("Microsoft.Compute/images"), Tags: Tags(img.Tags),
		Properties: &armcompute.ImageProperties{
			HyperVGeneration:  Opt[armcompute.HyperVGenerationTypes](img.HyperVGeneration),
			ProvisioningState: To(cloud.ProvisioningSucceeded),
			StorageProfile:    &armcompute.ImageStorageProfile{OSDisk: od},
		},
	}
}

// DiskSKU is the storage type of a managed disk imgflow makes (a
// test VM's OS disk, a disk exported from a version): Standard HDD, but
// Standard SSD for ConfidentialVM, the type of every confidential VM disk
// in the REST spec examples (ComputeRP 2025-04-01
// VirtualMachine_Create_WithSecurityTypeConfidentialVM.json: osDisk
// managedDisk storageAccountType StandardSSD_LRS with a
// securityEncryptionType), so that no Azure disk rule on confidential
// disks can refuse it.
func DiskSKU(securityType string) string {
	if strings.EqualFold(securityType, azrules.SecurityConfidentialVM) {
		return string(armcompute.DiskStorageAccountTypesStandardSSDLRS)
	}
	return string(armcompute.DiskStorageAccountTypesStandardLRS)
}

// Disk is a managed disk as ARM answers it. Its size is the disk's, the
// cloud value's without the footer of its export (see DiskOf).
func Disk(d cloud.Disk, osType string) armcompute.Disk {
	size := max(d.SizeBytes-vhd.FooterSize, 0)
	state := armcompute.DiskStateUnattached
	if d.AccessGranted {
		state = armcompute.DiskStateActiveSAS
	}
	props := &armcompute.DiskProperties{
		CreationData: &armcompute.CreationData{CreateOption: To(armcompute.DiskCreateOptionFromImage),
			GalleryImageReference: &armcompute.ImageDiskReference{ID: To(d.SourceImageVersionID)}},
		HyperVGeneration:  Opt[armcompute.HyperVGeneration](d.HyperVGeneration),
		OSType:            Opt[armcompute.OperatingSystemTypes](osType),
		DiskSizeGB:        To(int32((size + gib - 1) / gib)),
		DiskSizeBytes:     To(size),
		DiskState:         To(state),
		ProvisioningState: To(cloud.ProvisioningSucceeded),
	}
	if d.SecurityType != "" {
		props.SecurityProfile = &armcompute.DiskSecurityProfile{SecurityType: To(armcompute.DiskSecurityTypes(d.SecurityType))}
	}
	return armcompute.Disk{ID: To(d.ID), Name: To(d.Name), Location: To(d.Location), Type: To("Microsoft.Compute/disks"),
		Tags: Tags(d.Tags), SKU: &armcompute.DiskSKU{Name: To(armcompute.DiskStorageAccountTypes(DiskSKU(d.SecurityType)))}, Properties: props}
}
