package local

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
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
	out := copyDisk(*d)
	out.AccessGranted = p.activeGrant(rg, d.Name) != nil
	return out
}

// GetDisk implements cloud.Provider.
func (p *Provider) GetDisk(ctx context.Context, rgName, name string) (*cloud.Disk, error) {
	var out cloud.Disk
	err := p.view(ctx, func(st *State) error {
		rg, d, err := p.lookupDisk(st, rgName, name)
		if err != nil {
			return err
		}
		out = p.diskOut(rg, d)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateDiskFromImageVersion implements cloud.Provider: a PUT creating the
// disk from a gallery image version replicated to the disk's location (by
// default the version's), with the version's content and Hyper-V
// generation. A PUT of an existing disk with the same source updates its
// tags; another source is refused.
func (p *Provider) CreateDiskFromImageVersion(ctx context.Context, in cloud.Disk) (*cloud.Disk, error) {
	var out cloud.Disk
	err := p.updateWithData(ctx, func(st *State) (*dataCopy, error) {
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
			d.Tags = copyTags(in.Tags)
			out = p.diskOut(rg, d)
			return nil, nil
		}
		def, v, err := p.versionByID(st, in.SourceImageVersionID, id)
		if err != nil {
			return nil, err
		}
		want := in.Location
		if want == "" {
			want = v.Location
		}
		loc, err := p.locIndex.Resolve(want, "Microsoft.Compute/disks", id)
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
			Tags:      copyTags(in.Tags),
		}
		rg.Disks[key(in.Name)] = d
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
	err := p.update(ctx, func(st *State) error {
		rg, d, err := p.lookupDisk(st, rgName, name)
		if err != nil {
			return err
		}
		if err := azrules.CheckGrantDuration(d.ID, duration); err != nil {
			return err
		}
		if g := p.activeGrant(rg, d.Name); g != nil {
			return azrules.GrantActive(d.ID, d.Name, &g.Expires)
		}
		container, err := p.randomAlnum(12)
		if err != nil {
			return err
		}
		si, err := p.rand.guid()
		if err != nil {
			return err
		}
		raw, err := p.rand.read(32)
		if err != nil {
			return err
		}
		sig := base64.RawURLEncoding.EncodeToString(raw)
		now := p.stamp()
		g := &DiskGrantState{
			Account: diskAccount(d.ID), Container: container, SignedIdentifier: si,
			SigSHA256: hashSig(sig), Granted: now, Expires: now.Add(duration),
		}
		rg.DiskGrants[key(d.Name)] = g
		d.AccessGranted = true
		ref := cloud.BlobRef{Account: g.Account, Container: g.Container, Name: diskBlobName}
		sas = fmt.Sprintf("%s?sv=%s&sr=b&si=%s&sig=%s", ref.URL(), diskSASVersion, si, sig)
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
	return p.update(ctx, func(st *State) error {
		rg, d, err := p.lookupDisk(st, rgName, name)
		if err != nil {
			return err
		}
		delete(rg.DiskGrants, key(d.Name))
		d.AccessGranted = false
		return nil
	})
}

// DeleteDisk implements cloud.Provider. A disk with an open grant cannot
// be deleted.
func (p *Provider) DeleteDisk(ctx context.Context, rgName, name string) error {
	return p.updateRemoving(ctx, func(st *State) (string, error) {
		rg, d, err := p.lookupDisk(st, rgName, name)
		if err != nil {
			return "", err
		}
		if p.activeGrant(rg, d.Name) != nil {
			return "", azrules.DeleteGranted(d.ID, d.Name)
		}
		delete(rg.DiskGrants, key(d.Name))
		delete(rg.Disks, key(d.Name))
		return p.forgetData(d.ID), nil
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
			if strings.EqualFold(cand.Account, ref.Account) {
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
	sig := q.Get("sig")
	if sig == "" {
		return nil, content{}, authenticationFailed(resource, "The SAS has no signature (sig).")
	}
	match := subtle.ConstantTimeCompare([]byte(hashSig(sig)), []byte(g.SigSHA256)) == 1
	if !match || q.Get("si") != g.SignedIdentifier || ref.Container != g.Container || ref.Name != diskBlobName {
		return nil, content{}, authenticationFailed(resource, "Signature did not match.")
	}
	d, ok := rg.Disks[diskKey]
	if !ok {
		return nil, content{}, authenticationFailed(resource, "No access is granted to this disk.")
	}
	return d, content{path: p.dataFile(d.ID), size: d.SizeBytes}, nil
}

// diskWriteRefused is the answer to a write through a disk URL: its SAS
// grants read access only. The resource is the URL without the SAS.
func diskWriteRefused(ref cloud.BlobRef) error {
	clean, _ := splitDiskRef(ref)
	return azrules.DiskWriteRefused(clean)
}

const alnum = "abcdefghijklmnopqrstuvwxyz0123456789"

// randomAlnum returns n random lowercase letters and digits from Rand.
func (p *Provider) randomAlnum(n int) (string, error) {
	b, err := p.rand.read(n)
	if err != nil {
		return "", err
	}
	for i := range b {
		b[i] = alnum[int(b[i])%len(alnum)]
	}
	return string(b), nil
}

// read returns n bytes of Rand.
func (l *lockedReader) read(n int) ([]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := make([]byte, n)
	if _, err := io.ReadFull(l.r, b); err != nil {
		return nil, fmt.Errorf("read random bytes: %w", err)
	}
	return b, nil
}
