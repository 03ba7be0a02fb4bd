package azure

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/cloud/azure/internal/armconv"
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
			return nil, opError("create disk", d.Name, azrules.InvalidParameter(id,
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
		SKU:        &armcompute.DiskSKU{Name: to(armcompute.DiskStorageAccountTypes(diskSKUFor(d.SecurityType)))},
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

// diskSKUFor is the storage type of a managed disk imgflow makes
// (armconv.DiskSKU).
func diskSKUFor(securityType string) string { return armconv.DiskSKU(securityType) }

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

// Disk read access lasts long enough for the export's copy: the SAS of
// an async server-side copy must stay valid until the service has read
// the last byte, and Azure gives no bound on how long that takes.
const (
	// exportRate is a conservative copy rate (bytes/s) to size the grant:
	// slower than server-side copies and streams usually go.
	exportRate = 20 << 20
	// grantMargin is added to the estimate (queueing, polling, verify).
	grantMargin = 30 * time.Minute
	// maxGrantDuration caps the request. DiskRP's GrantAccessData
	// (2025-01-02) documents no maximum for durationInSeconds (an int32);
	// a day keeps the SAS short-lived, and a copy that outlives it
	// gets its access granted again (CopyBlob).
	maxGrantDuration = 24 * time.Hour
)

// grantDuration is how long to open a disk of size bytes for: what the
// caller asked, or the time a copy can take at exportRate plus a margin
// when that is longer, at most maxGrantDuration, at least a minute.
func grantDuration(requested time.Duration, size int64) time.Duration {
	need := time.Duration(size/exportRate)*time.Second + grantMargin
	return max(min(max(requested, need), maxGrantDuration), time.Minute)
}

// diskGrant is read access this provider opened on a disk: CopyBlob
// recognises its SAS to grant it again if it ends during a copy, and to
// copy a ConfidentialVM disk's guest state with it.
type diskGrant struct {
	rg, disk   string
	duration   time.Duration
	guestState string // the VM guest state SAS (securityDataAccessSAS), ConfidentialVM disks only
}

// GrantDiskAccess implements cloud.Provider: read access for duration, or
// longer when the disk's size needs it for a copy (grantDuration). For a
// ConfidentialVM disk the grant also asks for its VM guest state
// (getSecureVMGuestStateSAS), which CopyBlob copies next to the VHD. The
// returned SAS URL is a secret: errors and logs only ever show it
// redacted.
func (p *Provider) GrantDiskAccess(ctx context.Context, rg, name string, duration time.Duration) (string, error) {
	d, err := p.GetDisk(ctx, rg, name)
	if err != nil {
		return "", opError("grant access to disk", name, err)
	}
	g := &diskGrant{rg: rg, disk: name, duration: grantDuration(duration, d.SizeBytes)}
	sas, guest, err := p.grantAccess(ctx, rg, name, g.duration, d.SecurityType == SecurityConfidentialVM)
	if err != nil {
		return "", err
	}
	if d.SecurityType == SecurityConfidentialVM && guest == "" {
		return "", opError("grant access to disk", name, errors.New("the service returned no VM guest state SAS (securityDataAccessSAS) for a ConfidentialVM disk"))
	}
	g.guestState = guest
	p.rememberGrant(sas, g)
	return sas, nil
}

// grantAccess is beginGetAccess: the disk's SAS and, when asked for, its
// VM guest state SAS.
func (p *Provider) grantAccess(ctx context.Context, rg, name string, duration time.Duration, guestState bool) (sas, guest string, err error) {
	id := cloud.DiskID(p.sub, rg, name)
	data := armcompute.GrantAccessData{
		Access:            to(armcompute.AccessLevelRead),
		DurationInSeconds: to(int32(duration / time.Second)),
	}
	if guestState {
		data.GetSecureVMGuestStateSAS = to(true)
	}
	poller, err := p.disks.BeginGrantAccess(ctx, rg, name, data, nil)
	if err != nil {
		return "", "", opError("grant access to disk", name, azErr(err, id))
	}
	res, err := wait(ctx, p, "grant access to disk "+name, poller)
	if err != nil {
		return "", "", opError("grant access to disk", name, azErr(err, id))
	}
	if deref(res.AccessSAS) == "" {
		return "", "", opError("grant access to disk", name, errors.New("the service returned no access SAS"))
	}
	return *res.AccessSAS, deref(res.SecurityDataAccessSAS), nil
}

// regrant opens a disk's access again after it ended (expired or
// revoked) during a copy: revoke, then grant for as long as before. The
// new SAS replaces the old one.
func (p *Provider) regrant(ctx context.Context, old string, g *diskGrant) (string, *diskGrant, error) {
	if err := p.RevokeDiskAccess(ctx, g.rg, g.disk); err != nil {
		return "", nil, err
	}
	sas, guest, err := p.grantAccess(ctx, g.rg, g.disk, g.duration, g.guestState != "")
	if err != nil {
		return "", nil, err
	}
	ng := &diskGrant{rg: g.rg, disk: g.disk, duration: g.duration, guestState: guest}
	p.grantMu.Lock()
	delete(p.grants, old)
	p.grants[sas] = ng
	p.grantMu.Unlock()
	return sas, ng, nil
}

func (p *Provider) rememberGrant(sas string, g *diskGrant) {
	p.grantMu.Lock()
	defer p.grantMu.Unlock()
	for k, o := range p.grants {
		if o.rg == g.rg && o.disk == g.disk {
			delete(p.grants, k) // a disk has one open SAS
		}
	}
	p.grants[sas] = g
}

func (p *Provider) grantOf(sas string) *diskGrant {
	p.grantMu.Lock()
	defer p.grantMu.Unlock()
	return p.grants[sas]
}

// RevokeDiskAccess implements cloud.Provider.
func (p *Provider) RevokeDiskAccess(ctx context.Context, rg, name string) error {
	poller, err := p.disks.BeginRevokeAccess(ctx, rg, name, nil)
	if err == nil {
		_, err = wait(ctx, p, "revoke access to disk "+name, poller)
	}
	if err == nil {
		p.forgetGrants(rg, name)
	}
	return opError("revoke access to disk", name, azErr(err, cloud.DiskID(p.sub, rg, name)))
}

func (p *Provider) forgetGrants(rg, name string) {
	p.grantMu.Lock()
	defer p.grantMu.Unlock()
	for k, g := range p.grants {
		if strings.EqualFold(g.rg, rg) && strings.EqualFold(g.disk, name) {
			delete(p.grants, k)
		}
	}
}

// DeleteDisk implements cloud.Provider.
func (p *Provider) DeleteDisk(ctx context.Context, rg, name string) error {
	id := cloud.DiskID(p.sub, rg, name)
	err := waitDelete(ctx, p, "delete disk "+name, id, func(ctx context.Context) (*runtime.Poller[armcompute.DisksClientDeleteResponse], error) {
		return p.disks.BeginDelete(ctx, rg, name, nil)
	})
	return opError("delete disk", name, azErr(err, id))
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
