package azsim

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/internal/deepcopy"
	"github.com/imgflow/imgflow/vhd"
)

// Managed disks, as sig_to_vhd uses them to export a gallery image
// version: create a disk from the version, grant read access (a SAS URL),
// copy that URL into a page blob, revoke, delete. A disk holds a copy of
// its version's content (see updateWithData); a granted disk's SAS URL is
// readable through GetBlob, ReadBlob and CopyBlob.

const (
	// diskBlobName is the blob name of every disk SAS URL.
	diskBlobName = "abcd"
	// diskSASVersion is the sv of disk SAS URLs.
	diskSASVersion = "2018-03-28"
	// pendingAccount and pendingSig make the SAS URL of a dry run's grant,
	// https://md-pending.blob.core.windows.net/<disk>/abcd?sig=<pending>.
	pendingAccount = azrules.DiskAccountPrefix + "pending"
	pendingSig     = "<pending>"
)

// diskAccount is the SAS host label of a disk: md- and 12 characters of
// the hash of its id.
func diskAccount(id string) string {
	sum := sha256.Sum256([]byte(key(id)))
	return azrules.DiskAccountPrefix + hex.EncodeToString(sum[:])[:12]
}

func hashSig(sig string) string {
	sum := sha256.Sum256([]byte(sig))
	return hex.EncodeToString(sum[:])
}

func (p *Provider) lookupDisk(st *State, rgName, name string) (*ResourceGroupState, *cloud.Disk, error) {
	rg, err := p.lookupRG(st, rgName)
	if err != nil {
		return nil, nil, err
	}
	d, ok := rg.Disks[key(name)]
	if !ok {
		return nil, nil, azrules.ResourceNotFound(cloud.DiskID(st.SubscriptionID, rg.Name, name), "Microsoft.Compute/disks", name, rg.Name)
	}
	return rg, d, nil
}

// diskByID finds a managed disk of this subscription by ARM id.
func (p *Provider) diskByID(st *State, id, resource string) (*cloud.Disk, error) {
	rid, err := cloud.ParseResourceID(id)
	if err != nil || !rid.Is("Microsoft.Compute", "disks") || !strings.EqualFold(rid.Subscription, st.SubscriptionID) {
		return nil, azrules.InvalidParameter(resource, "'%s' is not a managed disk id of this subscription.", id)
	}
	_, d, err := p.lookupDisk(st, rid.ResourceGroup, rid.Names[0])
	return d, err
}

// activeGrant returns the disk's grant unless it was revoked or expired.
func (p *Provider) activeGrant(rg *ResourceGroupState, name string) *DiskGrantState {
	g := rg.DiskGrants[key(name)]
	if g == nil || p.now().After(g.Expires) {
		return nil
	}
	return g
}

// diskOut is the disk as returned: a deep copy whose AccessGranted is
// false once the grant expired.
func (p *Provider) diskOut(rg *ResourceGroupState, d *cloud.Disk) cloud.Disk {
	out := deepcopy.Of(*d)
	out.AccessGranted = p.activeGrant(rg, d.Name) != nil
	return out
}

// GetDisk implements cloud.Provider.
func (p *Provider) GetDisk(ctx context.Context, rgName, name string) (*cloud.Disk, error) {
	if err := p.load(p.loadDisk(ctx, rgName, name)); err != nil {
		return nil, err
	}
	return read(ctx, p, func(st *State) (*cloud.Disk, error) {
		rg, d, err := p.lookupDisk(st, rgName, name)
		if err != nil {
			return nil, err
		}
		out := p.diskOut(rg, d)
		return &out, nil
	})
}

// CreateDiskFromImageVersion implements cloud.Provider: a PUT creating the
// disk from a gallery image version replicated to the disk's location (by
// default the version's), with the version's content and Hyper-V
// generation. A PUT of an existing disk with the same source updates its
// tags; another source is refused.
func (p *Provider) CreateDiskFromImageVersion(ctx context.Context, in cloud.Disk) (*cloud.Disk, error) {
	if err := p.load(p.loadDisk(ctx, in.ResourceGroup, in.Name), p.loadID(ctx, in.SourceImageVersionID)); err != nil {
		return nil, err
	}
	var out cloud.Disk
	err := p.updateWithData(ctx, func(t *tx) (*dataCopy, error) {
		st := t.st
		rg, err := p.lookupRG(st, in.ResourceGroup)
		if err != nil {
			return nil, err
		}
		id := cloud.DiskID(st.SubscriptionID, rg.Name, in.Name)
		security, err := azrules.DiskSecurityType(id, in.SecurityType)
		if err != nil {
			return nil, err
		}
		if d, ok := rg.Disks[key(in.Name)]; ok {
			loc := ""
			if in.Location != "" {
				if loc, err = p.locIndex.Resolve(in.Location, "Microsoft.Compute/disks", id); err != nil {
					return nil, err
				}
			}
			if err := azrules.CheckDiskUnchanged(d, loc, in.SourceImageVersionID, security); err != nil {
				return nil, err
			}
			d.Tags = deepcopy.Of(in.Tags)
			t.log(cloud.OpUpdate, cloud.KindDisk, d.ID)
			out = p.diskOut(rg, d)
			return nil, nil
		}
		def, v, err := p.versionByID(st, in.SourceImageVersionID, id)
		if err != nil {
			return nil, err
		}
		loc, err := p.locIndex.Resolve(orDefault(in.Location, v.Location), "Microsoft.Compute/disks", id)
		if err != nil {
			return nil, err
		}
		if err := azrules.CheckDiskSource(id, v, def.HyperVGeneration, loc, security); err != nil {
			return nil, err
		}
		src, err := p.resourceContent(st, v.ID, v.Source, 0)
		if err != nil {
			return nil, err
		}
		d := &cloud.Disk{
			ID: id, Name: in.Name, ResourceGroup: rg.Name, Location: loc,
			SourceImageVersionID: v.ID, SecurityType: security,
			HyperVGeneration: def.HyperVGeneration,
			// An exported disk is a fixed VHD: the virtual size and a footer.
			SizeBytes: v.SizeBytes + vhd.FooterSize,
			Tags:      deepcopy.Of(in.Tags),
		}
		rg.Disks[key(in.Name)] = d
		t.log(cloud.OpCreate, cloud.KindDisk, d.ID)
		out = p.diskOut(rg, d)
		return &dataCopy{id: id, src: src}, nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// GrantDiskAccess implements cloud.Provider. The URL has the shape of
// Azure's (https://md-….blob.core.windows.net/<container>/abcd?sv=…&sr=b&si=…&sig=…);
// only the hash of its signature is kept. A disk with an open grant
// cannot be granted again until it is revoked or expires.
func (p *Provider) GrantDiskAccess(ctx context.Context, rgName, name string, duration time.Duration) (string, error) {
	var sas string
	err := p.changeDisk(ctx, rgName, name, func(t *tx, rg *ResourceGroupState, d *cloud.Disk) error {
		if err := azrules.CheckGrantDuration(d.ID, duration); err != nil {
			return err
		}
		if g := p.activeGrant(rg, d.Name); g != nil {
			return azrules.GrantActive(d.ID, d.Name, &g.Expires)
		}
		now := p.stamp()
		g := &DiskGrantState{Account: diskAccount(d.ID), Granted: now, Expires: now.Add(duration)}
		var err error
		switch {
		case p.diskAccess != nil:
			// The reader finds the content elsewhere: the URL is where.
			sas, err = p.diskAccess.Grant(ctx, ResourceKey(d.ID), g.Expires)
		case p.dryRun:
			// Only the platform can sign: the URL says so, and this
			// simulation reads it as the disk.
			g.Account, g.Container, g.SigSHA256 = pendingAccount, d.Name, hashSig(pendingSig)
			sas = cloud.BlobRef{Account: g.Account, Container: g.Container, Name: diskBlobName}.URL() + "?sig=" + pendingSig
		default:
			var sig string
			if g.Container, g.SignedIdentifier, sig, err = p.signature(); err == nil {
				g.SigSHA256 = hashSig(sig)
				sas = fmt.Sprintf("%s?sv=%s&sr=b&si=%s&sig=%s", cloud.BlobRef{Account: g.Account, Container: g.Container, Name: diskBlobName}.URL(),
					diskSASVersion, g.SignedIdentifier, sig)
			}
		}
		if err != nil {
			return err
		}
		rg.DiskGrants[key(d.Name)] = g
		d.AccessGranted = true
		t.log(cloud.OpCreate, cloud.KindDiskAccess, d.ID)
		return nil
	})
	if err != nil {
		return "", err
	}
	return sas, nil
}

// RevokeDiskAccess implements cloud.Provider; revoking a disk without a
// grant is fine.
func (p *Provider) RevokeDiskAccess(ctx context.Context, rgName, name string) error {
	return p.changeDisk(ctx, rgName, name, func(t *tx, rg *ResourceGroupState, d *cloud.Disk) error {
		if p.diskAccess != nil && rg.DiskGrants[key(d.Name)] != nil {
			if err := p.diskAccess.Revoke(ctx, ResourceKey(d.ID)); err != nil {
				return err
			}
		}
		delete(rg.DiskGrants, key(d.Name))
		d.AccessGranted = false
		t.log(cloud.OpDelete, cloud.KindDiskAccess, d.ID)
		return nil
	})
}

// DeleteDisk implements cloud.Provider. A disk with an open grant cannot
// be deleted.
func (p *Provider) DeleteDisk(ctx context.Context, rgName, name string) error {
	return p.changeDisk(ctx, rgName, name, func(t *tx, rg *ResourceGroupState, d *cloud.Disk) error {
		if p.activeGrant(rg, d.Name) != nil {
			return azrules.DeleteGranted(d.ID, d.Name)
		}
		delete(rg.DiskGrants, key(d.Name))
		delete(rg.Disks, key(d.Name))
		t.remove(ResourceKey(d.ID))
		t.log(cloud.OpDelete, cloud.KindDisk, d.ID)
		return nil
	})
}

// changeDisk runs fn on a disk as a change (update).
func (p *Provider) changeDisk(ctx context.Context, rgName, name string, fn func(t *tx, rg *ResourceGroupState, d *cloud.Disk) error) error {
	if err := p.load(p.loadDisk(ctx, rgName, name)); err != nil {
		return err
	}
	find := func(st *State) error {
		_, _, err := p.lookupDisk(st, rgName, name)
		return err
	}
	return p.updateFound(ctx, find, func(t *tx) error {
		rg, d, err := p.lookupDisk(t.st, rgName, name)
		if err != nil {
			return err
		}
		return fn(t, rg, d)
	})
}

// splitDiskRef separates the SAS a BlobRef of a disk URL carries after
// its name (cloud.BlobRef has no SAS field): ref.Name "abcd?sv=…&sig=…".
// It returns the ref without the SAS, which can be printed.
func splitDiskRef(ref cloud.BlobRef) (cloud.BlobRef, url.Values) {
	name, rawQuery, _ := strings.Cut(ref.Name, "?")
	ref.Name = name
	q, _ := url.ParseQuery(rawQuery)
	return ref, q
}

// grantedDisk authorises a read of a disk's SAS URL (ref without the SAS,
// q its query) and returns the disk and its content. Every refusal is
// Storage's 403 AuthenticationFailed.
func (p *Provider) grantedDisk(st *State, ref cloud.BlobRef, q url.Values) (*cloud.Disk, content, error) {
	resource := ref.URL()
	var rg *ResourceGroupState
	var g *DiskGrantState
	var diskKey string
	for _, r := range st.ResourceGroups {
		for k, cand := range r.DiskGrants {
			if strings.EqualFold(cand.Account, ref.Account) && strings.EqualFold(cand.Container, ref.Container) {
				rg, g, diskKey = r, cand, k
			}
		}
	}
	if g == nil {
		return nil, content{}, authenticationFailed(resource, "No access is granted to this disk (never granted, or revoked).")
	}
	if p.now().After(g.Expires) {
		return nil, content{}, authenticationFailed(resource, fmt.Sprintf("The SAS expired at %s.", g.Expires.Format(time.RFC3339)))
	}
	// A dry run's URL is a placeholder: only the platform signs.
	sig := q.Get("sig")
	if sig == "" && !p.dryRun {
		return nil, content{}, authenticationFailed(resource, "The SAS has no signature (sig).")
	}
	match := p.dryRun || subtle.ConstantTimeCompare([]byte(hashSig(sig)), []byte(g.SigSHA256)) == 1 && q.Get("si") == g.SignedIdentifier
	if !match || ref.Container != g.Container || ref.Name != diskBlobName {
		return nil, content{}, authenticationFailed(resource, "Signature did not match.")
	}
	d, ok := rg.Disks[diskKey]
	if !ok {
		return nil, content{}, authenticationFailed(resource, "No access is granted to this disk.")
	}
	return d, content{key: ResourceKey(d.ID), size: d.SizeBytes}, nil
}

// authenticationFailed is Storage's 403 for a SAS it refuses; resource
// must not carry the SAS.
func authenticationFailed(resource, detail string) error {
	return cloud.Errorf(cloud.CodeAuthenticationFailed, resource, "%s",
		"Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature. "+detail)
}

// diskWriteRefused is the answer to a write through a disk URL: its SAS
// grants read access only. The resource is the URL without the SAS.
func diskWriteRefused(ref cloud.BlobRef) error {
	clean, _ := splitDiskRef(ref)
	return azrules.DiskWriteRefused(clean)
}

const alnum = "abcdefghijklmnopqrstuvwxyz0123456789"

// signature makes a grant's random parts: its container (12 lowercase
// letters and digits), signed identifier and signature.
func (p *Provider) signature() (container, si, sig string, err error) {
	b, err := p.rand.read(12)
	if err != nil {
		return "", "", "", err
	}
	for i := range b {
		b[i] = alnum[int(b[i])%len(alnum)]
	}
	if si, err = p.rand.guid(); err != nil {
		return "", "", "", err
	}
	raw, err := p.rand.read(32)
	if err != nil {
		return "", "", "", err
	}
	return string(b), si, base64.RawURLEncoding.EncodeToString(raw), nil
}

func (p *Provider) loadDisk(ctx context.Context, rg, name string) error {
	if ok, err := p.groupFromBase(ctx, rg); !ok {
		return err
	}
	_, err := fetch(ctx, p, cloud.DiskID(p.rt.sub, rg, name),
		func(st *State) (bool, bool) { return group(st, rg).Disks[key(name)] != nil, true },
		func() (*cloud.Disk, error) { return p.rt.base.GetDisk(ctx, rg, name) },
		func(st *State, v *cloud.Disk) { group(st, rg).Disks[key(name)] = v })
	return err
}
