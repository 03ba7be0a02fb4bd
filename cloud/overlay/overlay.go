// Package overlay is the planning provider: a cloud.Provider over a real
// target that reads through to it and records every write instead of
// making it.
//
// imgflow's validation pass and `imgflow plan` run a workflow against it:
// every read goes to the base provider unless the overlay holds the object
// (something the workflow "created", changed or deleted earlier in the same
// dry run); every write is checked with the target's rules (parents,
// locations, immutable fields, sources), recorded in the overlay and
// answered with what the target would return, placeholders standing for
// what only the platform can generate. The base is never changed.
package overlay

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/internal/deepcopy"
)

// Change is one write the overlay recorded, in call order.
type Change = cloud.Change

// Change operations.
const (
	OpCreate = cloud.OpCreate
	OpUpdate = cloud.OpUpdate
	OpDelete = cloud.OpDelete
)

// Change kinds.
const (
	KindResourceGroup    = cloud.KindResourceGroup
	KindGallery          = cloud.KindGallery
	KindCommunitySharing = cloud.KindCommunitySharing
	KindImageDefinition  = cloud.KindImageDefinition
	KindImageVersion     = cloud.KindImageVersion
	KindManagedImage     = cloud.KindManagedImage
	KindStorageAccount   = cloud.KindStorageAccount
	KindDisk             = cloud.KindDisk
	KindDiskAccess       = cloud.KindDiskAccess
	KindContainer        = cloud.KindContainer
	KindBlob             = cloud.KindBlob
)

// Provider is the overlay over a base provider. It is safe for concurrent
// use.
type Provider struct {
	base cloud.Provider
	sub  string
	// peer finds the overlays of the tenant's other subscriptions
	// (JoinTenant); nil: none.
	peer func(ctx context.Context, sub string) *Provider

	// wmu serialises writes: each reads (overlay, then base) and records as
	// one step, so parallel writes see each other's results.
	wmu sync.Mutex

	// mu guards the fields below. It is never held while base is called.
	mu        sync.Mutex
	locations []cloud.Location
	// objs are the ARM resources the overlay holds, by pathKey.
	objs map[string]*entry
	// grants maps the container of a pending disk SAS URL (the disk's
	// lowercased name) to the disk's pathKey.
	grants map[string]string
	// containers are the containers created in the overlay (base has
	// none of them), by blobKey without the blob name.
	containers map[string]bool
	blobs      map[string]*blobEntry
	changes    []Change
}

var _ cloud.Provider = (*Provider)(nil)

// New returns an overlay over base. base is only read.
func New(base cloud.Provider) *Provider {
	return &Provider{
		base: base, sub: base.SubscriptionID(),
		objs: map[string]*entry{}, grants: map[string]string{},
		containers: map[string]bool{}, blobs: map[string]*blobEntry{},
	}
}

// Changes lists the writes recorded so far, in order.
func (p *Provider) Changes() []Change {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.changes)
}

// Target implements cloud.Provider: the base's target.
func (p *Provider) Target() string { return p.base.Target() }

// SubscriptionID implements cloud.Provider: the base's subscription.
func (p *Provider) SubscriptionID() string { return p.sub }

// ListLocations implements cloud.Provider: the base's list, read once.
func (p *Provider) ListLocations(ctx context.Context) ([]cloud.Location, error) {
	locs, err := p.knownLocations(ctx)
	return slices.Clone(locs), err
}

func (p *Provider) knownLocations(ctx context.Context) ([]cloud.Location, error) {
	p.mu.Lock()
	locs := p.locations
	p.mu.Unlock()
	if locs != nil {
		return locs, nil
	}
	locs, err := p.base.ListLocations(ctx)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.locations = locs
	p.mu.Unlock()
	return locs, nil
}

// regions indexes the base's locations as ARM looks them up.
func (p *Provider) regions(ctx context.Context) (azrules.Regions, error) {
	locs, err := p.knownLocations(ctx)
	if err != nil {
		return azrules.Regions{}, fmt.Errorf("list locations: %w", err)
	}
	return azrules.NewRegions(locs), nil
}

// resolveLocation resolves a location with ARM's error for one the
// resource cannot be deployed to (azrules.Regions.Resolve).
func (p *Provider) resolveLocation(ctx context.Context, name, resourceType, id string) (string, error) {
	regions, err := p.regions(ctx)
	if err != nil {
		return "", err
	}
	return regions.Resolve(name, resourceType, id)
}

// Resource paths. A resource is addressed by its path from the resource
// group down; pathKey folds it (ARM names are case-insensitive).

const (
	tGroup   = "resourceGroups"
	tGallery = "Microsoft.Compute/galleries"
	tDef     = "Microsoft.Compute/galleries/images"
	tVersion = "Microsoft.Compute/galleries/images/versions"
	tImage   = "Microsoft.Compute/images"
	tAccount = "Microsoft.Storage/storageAccounts"
	tDisk    = "Microsoft.Compute/disks"
)

type seg struct{ typ, name string }

func pGroup(rg string) []seg      { return []seg{{tGroup, rg}} }
func pGallery(rg, g string) []seg { return []seg{{tGroup, rg}, {tGallery, g}} }
func pDef(rg, g, d string) []seg  { return []seg{{tGroup, rg}, {tGallery, g}, {tDef, d}} }
func pVersion(rg, g, d, v string) []seg {
	return []seg{{tGroup, rg}, {tGallery, g}, {tDef, d}, {tVersion, v}}
}
func pImage(rg, n string) []seg   { return []seg{{tGroup, rg}, {tImage, n}} }
func pAccount(rg, n string) []seg { return []seg{{tGroup, rg}, {tAccount, n}} }
func pDisk(rg, n string) []seg    { return []seg{{tGroup, rg}, {tDisk, n}} }

func pathKey(path []seg) string {
	var b strings.Builder
	for _, s := range path {
		b.WriteString("/" + s.typ + "/" + s.name)
	}
	return strings.ToLower(b.String())
}

// idOf is the ARM id of the resource at path.
func (p *Provider) idOf(path []seg) string {
	n := func(i int) string { return path[i].name }
	switch path[len(path)-1].typ {
	case tGallery:
		return cloud.GalleryID(p.sub, n(0), n(1))
	case tDef:
		return cloud.ImageDefinitionID(p.sub, n(0), n(1), n(2))
	case tVersion:
		return cloud.ImageVersionID(p.sub, n(0), n(1), n(2), n(3))
	case tImage:
		return cloud.ManagedImageID(p.sub, n(0), n(1))
	case tAccount:
		return cloud.StorageAccountID(p.sub, n(0), n(1))
	case tDisk:
		return cloud.DiskID(p.sub, n(0), n(1))
	case tVM:
		return cloud.VMID(p.sub, n(0), n(1))
	}
	return cloud.ResourceGroupID(p.sub, n(0))
}

// entry is a resource the overlay holds.
type entry struct {
	path []seg
	// v is the resource (a cloud.Gallery, cloud.Disk, … value).
	v any
	// fresh marks a resource the overlay created: base has nothing at or
	// below its path (the resource did not exist there, or the overlay
	// deleted it before creating it again).
	fresh   bool
	deleted bool
}

// where tells who answers for the resource at path: the overlay (e), base
// (askBase), or nobody: missing is then the level of path that does not
// exist. It runs under mu.
func (p *Provider) where(path []seg) (e *entry, missing int, askBase bool) {
	fresh := false
	for i := range path {
		e := p.objs[pathKey(path[:i+1])]
		last := i == len(path)-1
		switch {
		case e != nil && e.deleted:
			return nil, i, false
		case e != nil && last:
			return e, -1, false
		case e != nil:
			fresh = fresh || e.fresh
		case fresh:
			return nil, i, false
		case last:
			return nil, -1, true
		}
	}
	panic("overlay: empty path")
}

// notFound is ARM's 404 for the resource id at path whose level missing
// does not exist; nested makes the last level of path a parent of id too.
func (p *Provider) notFound(path []seg, missing int, id string, nested bool) error {
	switch {
	case missing == 0:
		return cloud.NotFound(cloud.CodeResourceGroupNotFound, cloud.ResourceGroupID(p.sub, path[0].name),
			"Resource group '%s' could not be found.", path[0].name)
	case missing == len(path)-1 && !nested:
		names := make([]string, 0, len(path)-1)
		for _, s := range path[1:] {
			names = append(names, s.name)
		}
		return cloud.NotFound(cloud.CodeResourceNotFound, id, "The Resource '%s/%s' under resource group '%s' was not found.",
			path[missing].typ, strings.Join(names, "/"), path[0].name)
	}
	return azrules.ParentNotFound(id, path[missing].name)
}

// read answers a Get of the resource at path: the overlay's copy, the
// overlay's 404, or base's answer.
func read[T any](ctx context.Context, p *Provider, path []seg, fromBase func() (*T, error)) (*T, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	e, missing, askBase := p.where(path)
	var out T
	if e != nil {
		out = clone(e.v.(T))
	}
	p.mu.Unlock()
	switch {
	case e != nil:
		return &out, nil
	case askBase:
		return fromBase()
	}
	return nil, p.notFound(path, missing, p.idOf(path), false)
}

// list merges base's resources with the overlay's entries of type typ
// under parent (by case-insensitive name; overlay entries win, overlay
// deletions remove), sorted by name; a nil parent means every parent.
func list[T any](p *Provider, parent []seg, typ string, fromBase []T, name func(T) string) []T {
	byName := map[string]T{}
	for _, v := range fromBase {
		byName[strings.ToLower(name(v))] = v
	}
	prefix := pathKey(parent)
	p.mu.Lock()
	for _, e := range p.objs {
		last := e.path[len(e.path)-1]
		if last.typ != typ || (parent != nil && pathKey(e.path[:len(e.path)-1]) != prefix) {
			continue
		}
		if e.deleted {
			delete(byName, strings.ToLower(last.name))
		} else {
			byName[strings.ToLower(last.name)] = clone(e.v.(T))
		}
	}
	p.mu.Unlock()
	out := make([]T, 0, len(byName))
	for _, k := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, byName[k])
	}
	return out
}

// record stores v at path and appends the change; a resource the overlay
// already holds keeps its freshness. It returns a copy of v.
func record[T any](p *Provider, path []seg, v T, fresh bool, ch Change) *T {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := pathKey(path)
	if old := p.objs[k]; old != nil && !old.deleted {
		fresh = old.fresh
	}
	p.objs[k] = &entry{path: path, v: clone(v), fresh: fresh}
	p.changes = append(p.changes, ch)
	out := clone(v)
	return &out
}

// remove records the deletion of the resource at path.
func (p *Provider) remove(path []seg, ch Change) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.objs[pathKey(path)] = &entry{path: path, deleted: true}
	p.changes = append(p.changes, ch)
}

// change is the Change of a PUT: create when the resource did not exist.
func change(existed bool, kind, id string) Change {
	if existed {
		return Change{Op: OpUpdate, Kind: kind, ID: id}
	}
	return Change{Op: OpCreate, Kind: kind, ID: id}
}

// existing turns a Get's answer into (resource, exists): a 404 is "does
// not exist", any other error fails.
func existing[T any](v *T, err error) (*T, bool, error) {
	switch {
	case cloud.IsNotFound(err):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	return v, true, nil
}

// clone deep-copies a resource, so stored and returned values share no
// maps or slices with callers.
func clone[T any](v T) T { return deepcopy.Of(v) }

// ListMarketplaceImageVersions implements cloud.Provider: the marketplace
// is the base's, which nothing in a workflow changes.
func (p *Provider) ListMarketplaceImageVersions(ctx context.Context, location string, img cloud.MarketplaceImage) ([]string, error) {
	return p.base.ListMarketplaceImageVersions(ctx, location, img)
}
