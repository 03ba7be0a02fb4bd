package azure

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"

	"github.com/imgflow/imgflow/cloud"
)

// vhdFooterSize is the footer a disk export appends to the disk's bytes.
const vhdFooterSize = 512

// Disk security types as cloud.Disk names them.
const (
	SecurityTrustedLaunch  = "TrustedLaunch"
	SecurityConfidentialVM = "ConfidentialVM"
)

// GetDisk implements cloud.Provider.
func (p *Provider) GetDisk(ctx context.Context, rg, name string) (*cloud.Disk, error) {
	res, err := p.disks.Get(ctx, rg, name, nil)
	if err != nil {
		return nil, opError("get disk", name, azErr(err, cloud.DiskID(p.sub, rg, name)))
	}
	return p.diskOut(ctx, &res.Disk, rg), nil
}

// CreateDiskFromImageVersion implements cloud.Provider: a managed disk
// made FromImage with a gallery image reference, with the security
// profile TrustedLaunch or ConfidentialVM images need. An empty location
// is the version's.
func (p *Provider) CreateDiskFromImageVersion(ctx context.Context, d cloud.Disk) (*cloud.Disk, error) {
	id := cloud.DiskID(p.sub, d.ResourceGroup, d.Name)
	loc := d.Location
	if loc == "" {
		rid, err := cloud.ParseResourceID(d.SourceImageVersionID)
		if err != nil || !rid.Is("Microsoft.Compute", "galleries", "images", "versions") {
			return nil, opError("create disk", d.Name, cloud.BadRequest(cloud.CodeInvalidParameter, id,
				"'%s' is not a gallery image version id.", d.SourceImageVersionID))
		}
		v, err := p.GetImageVersion(ctx, rid.ResourceGroup, rid.Names[0], rid.Names[1], rid.Names[2])
		if err != nil {
			return nil, opError("create disk", d.Name, err)
		}
		loc = v.Location
	}
	props := &armcompute.DiskProperties{
		CreationData: &armcompute.CreationData{
			CreateOption:          to(armcompute.DiskCreateOptionFromImage),
			GalleryImageReference: &armcompute.ImageDiskReference{ID: to(d.SourceImageVersionID)},
		},
		HyperVGeneration: optStr[armcompute.HyperVGeneration](d.HyperVGeneration),
	}
	if st := diskSecurityType(d.SecurityType); st != nil {
		props.SecurityProfile = &armcompute.DiskSecurityProfile{SecurityType: st}
	}
	body := armcompute.Disk{
		Location:   to(loc),
		Tags:       tagsIn(d.Tags),
		SKU:        &armcompute.DiskSKU{Name: to(armcompute.DiskStorageAccountTypesStandardLRS)},
		Properties: props,
	}
	poller, err := p.disks.BeginCreateOrUpdate(ctx, d.ResourceGroup, d.Name, body, nil)
	if err == nil {
		_, err = wait(ctx, p, "create disk "+d.Name, poller)
	}
	if err != nil {
		return nil, opError("create disk", d.Name, azErr(err, id))
	}
	return p.GetDisk(ctx, d.ResourceGroup, d.Name)
}

func diskSecurityType(s string) *armcompute.DiskSecurityTypes {
	switch {
	case s == "":
		return nil
	case strings.EqualFold(s, SecurityTrustedLaunch):
		return to(armcompute.DiskSecurityTypesTrustedLaunch)
	case strings.EqualFold(s, SecurityConfidentialVM):
		return to(armcompute.DiskSecurityTypesConfidentialVMVmguestStateOnlyEncryptedWithPlatformKey)
	}
	return to(armcompute.DiskSecurityTypes(s))
}

// GrantDiskAccess implements cloud.Provider: read access for duration
// (at least a minute). The returned SAS URL is a secret: errors and logs
// only ever show it redacted.
func (p *Provider) GrantDiskAccess(ctx context.Context, rg, name string, duration time.Duration) (string, error) {
	id := cloud.DiskID(p.sub, rg, name)
	secs := int32(max(duration, time.Minute) / time.Second)
	poller, err := p.disks.BeginGrantAccess(ctx, rg, name, armcompute.GrantAccessData{
		Access:            to(armcompute.AccessLevelRead),
		DurationInSeconds: to(secs),
	}, nil)
	if err != nil {
		return "", opError("grant access to disk", name, azErr(err, id))
	}
	res, err := wait(ctx, p, "grant access to disk "+name, poller)
	if err != nil {
		return "", opError("grant access to disk", name, azErr(err, id))
	}
	if deref(res.AccessSAS) == "" {
		return "", opError("grant access to disk", name, errors.New("the service returned no access SAS"))
	}
	return *res.AccessSAS, nil
}

// RevokeDiskAccess implements cloud.Provider.
func (p *Provider) RevokeDiskAccess(ctx context.Context, rg, name string) error {
	poller, err := p.disks.BeginRevokeAccess(ctx, rg, name, nil)
	if err == nil {
		_, err = wait(ctx, p, "revoke access to disk "+name, poller)
	}
	return opError("revoke access to disk", name, azErr(err, cloud.DiskID(p.sub, rg, name)))
}

// DeleteDisk implements cloud.Provider.
func (p *Provider) DeleteDisk(ctx context.Context, rg, name string) error {
	poller, err := p.disks.BeginDelete(ctx, rg, name, nil)
	if err == nil {
		_, err = wait(ctx, p, "delete disk "+name, poller)
	}
	return opError("delete disk", name, azErr(err, cloud.DiskID(p.sub, rg, name)))
}

func (p *Provider) diskOut(ctx context.Context, d *armcompute.Disk, rg string) *cloud.Disk {
	out := &cloud.Disk{ID: deref(d.ID), Name: deref(d.Name), ResourceGroup: rg, Location: p.regionName(ctx, deref(d.Location)), Tags: tagsOut(d.Tags)}
	if r := rgFromID(out.ID); r != "" {
		out.ResourceGroup = r
	}
	props := d.Properties
	if props == nil {
		return out
	}
	if cd := props.CreationData; cd != nil && cd.GalleryImageReference != nil {
		out.SourceImageVersionID = deref(cd.GalleryImageReference.ID)
	}
	if sp := props.SecurityProfile; sp != nil && sp.SecurityType != nil {
		st := string(*sp.SecurityType)
		if strings.HasPrefix(st, SecurityConfidentialVM) {
			st = SecurityConfidentialVM
		}
		out.SecurityType = st
	}
	out.HyperVGeneration = strOf(props.HyperVGeneration)
	// SizeBytes is the size of the disk's export through its SAS: a
	// fixed VHD, the disk's bytes and a 512-byte footer (as the local
	// target reports it, and as sig_to_vhd checks the copy).
	switch {
	case props.DiskSizeBytes != nil:
		out.SizeBytes = *props.DiskSizeBytes + vhdFooterSize
	case props.DiskSizeGB != nil:
		out.SizeBytes = int64(*props.DiskSizeGB)*gib + vhdFooterSize
	}
	if st := props.DiskState; st != nil {
		out.AccessGranted = *st == armcompute.DiskStateActiveSAS || *st == armcompute.DiskStateActiveSASFrozen
	}
	return out
}
