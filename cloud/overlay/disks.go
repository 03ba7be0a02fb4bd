package overlay

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/vhd"
)

const (
	// pendingAccount is the host label of the SAS URL GrantDiskAccess
	// returns for a disk: https://md-pending.blob.core.windows.net/<disk>/abcd?sig=<pending>.
	// Only the overlay reads it; base never sees it.
	pendingAccount = azrules.DiskAccountPrefix + "pending"
	diskBlobName   = "abcd"
	pendingSAS     = "sig=<pending>"
)

func isPending(account string) bool { return strings.EqualFold(account, pendingAccount) }

// GetDisk implements cloud.Provider.
func (p *Provider) GetDisk(ctx context.Context, rg, name string) (*cloud.Disk, error) {
	return read(ctx, p, pDisk(rg, name), func() (*cloud.Disk, error) { return p.base.GetDisk(ctx, rg, name) })
}

// CreateDiskFromImageVersion implements cloud.Provider: records a disk made
// from a version replicated to its location (by default the version's),
// one footer larger than the version, or the new tags of an existing disk
// (whose source and security type cannot change).
func (p *Provider) CreateDiskFromImageVersion(ctx context.Context, in cloud.Disk) (*cloud.Disk, error) {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	rg, err := p.GetResourceGroup(ctx, in.ResourceGroup)
	if err != nil {
		return nil, err
	}
	id := cloud.DiskID(p.sub, rg.Name, in.Name)
	security, err := azrules.DiskSecurityType(id, in.SecurityType)
	if err != nil {
		return nil, err
	}
	old, exists, err := existing(p.GetDisk(ctx, rg.Name, in.Name))
	if err != nil {
		return nil, err
	}
	path := pDisk(rg.Name, in.Name)
	if exists {
		loc := ""
		if in.Location != "" {
			if loc, err = p.resolveLocation(ctx, in.Location, tDisk, id); err != nil {
				return nil, err
			}
		}
		if err := azrules.CheckDiskUnchanged(old, loc, in.SourceImageVersionID, security); err != nil {
			return nil, err
		}
		old.Tags = in.Tags
		return record(p, path, *old, false, change(true, KindDisk, old.ID)), nil
	}
	def, v, err := p.versionByID(ctx, in.SourceImageVersionID, id)
	if err != nil {
		return nil, err
	}
	loc, err := p.resolveLocation(ctx, orDefault(in.Location, v.Location), tDisk, id)
	if err != nil {
		return nil, err
	}
	if err := azrules.CheckDiskSource(id, v, def.HyperVGeneration, loc, security); err != nil {
		return nil, err
	}
	d := cloud.Disk{
		ID: id, Name: in.Name, ResourceGroup: rg.Name, Location: loc,
		SourceImageVersionID: v.ID, SecurityType: security, HyperVGeneration: def.HyperVGeneration,
		SizeBytes: v.SizeBytes + vhd.FooterSize, Tags: in.Tags,
	}
	return record(p, path, d, true, change(false, KindDisk, id)), nil
}

// GrantDiskAccess implements cloud.Provider: it records the grant and
// returns the placeholder URL https://md-pending.blob.core.windows.net/<disk>/abcd?sig=<pending>,
// which the overlay's GetBlob, ReadBlob and CopyBlob read as the disk.
func (p *Provider) GrantDiskAccess(ctx context.Context, rg, name string, duration time.Duration) (string, error) {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	d, err := p.GetDisk(ctx, rg, name)
	if err != nil {
		return "", err
	}
	if err := azrules.CheckGrantDuration(d.ID, duration); err != nil {
		return "", err
	}
	if d.AccessGranted {
		return "", azrules.GrantActive(d.ID, d.Name, nil)
	}
	d.AccessGranted = true
	path := pDisk(d.ResourceGroup, d.Name)
	record(p, path, *d, false, Change{Op: OpCreate, Kind: KindDiskAccess, ID: d.ID})
	p.mu.Lock()
	p.grants[strings.ToLower(d.Name)] = pathKey(path)
	p.mu.Unlock()
	ref := cloud.BlobRef{Account: pendingAccount, Container: d.Name, Name: diskBlobName}
	return ref.URL() + "?" + pendingSAS, nil
}

// RevokeDiskAccess implements cloud.Provider; revoking a disk without a
// grant is fine.
func (p *Provider) RevokeDiskAccess(ctx context.Context, rg, name string) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	d, err := p.GetDisk(ctx, rg, name)
	if err != nil {
		return err
	}
	d.AccessGranted = false
	path := pDisk(d.ResourceGroup, d.Name)
	record(p, path, *d, false, Change{Op: OpDelete, Kind: KindDiskAccess, ID: d.ID})
	p.dropGrant(path)
	return nil
}

// DeleteDisk implements cloud.Provider; a disk with an open grant cannot
// be deleted.
func (p *Provider) DeleteDisk(ctx context.Context, rg, name string) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	d, err := p.GetDisk(ctx, rg, name)
	if err != nil {
		return err
	}
	if d.AccessGranted {
		return azrules.DeleteGranted(d.ID, d.Name)
	}
	path := pDisk(d.ResourceGroup, d.Name)
	p.remove(path, Change{Op: OpDelete, Kind: KindDisk, ID: d.ID})
	p.dropGrant(path)
	return nil
}

func (p *Provider) dropGrant(path []seg) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c, k := range p.grants {
		if k == pathKey(path) {
			delete(p.grants, c)
		}
	}
}

// pendingDisk is the granted disk a placeholder SAS URL (ref without its
// query) names; anything else is Storage's 403 AuthenticationFailed.
func (p *Provider) pendingDisk(ref cloud.BlobRef) (*cloud.Disk, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ref.Name == diskBlobName {
		if e := p.objs[p.grants[strings.ToLower(ref.Container)]]; e != nil && !e.deleted {
			if d := clone(e.v.(cloud.Disk)); d.AccessGranted {
				return &d, nil
			}
		}
	}
	return nil, &cloud.Error{StatusCode: http.StatusForbidden, Code: cloud.CodeAuthenticationFailed, Resource: ref.URL(),
		Message: "Server failed to authenticate the request. No access is granted to this disk (never granted, or revoked)."}
}
