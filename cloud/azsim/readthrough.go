package azsim

import (
	"context"
	"io"
	"strings"
	"sync"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/vhd"
)

// Read-through. With a Base, the state starts empty and a call first
// reads what it addresses from the base into it (load…): a resource the
// state does not hold is asked of the base once, and only when its
// parent came from the base (a parent the run created has nothing below
// it there). What the base answered, and what it did not have, is
// remembered (known), so a resource the run deleted stays deleted. The
// rules then run on the state alone.

// load returns the first error of loads (each a no-op without a Base).
func (p *Provider) load(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (p *Provider) loadGroup(ctx context.Context, rg string) error {
	_, err := p.groupFromBase(ctx, rg)
	return err
}

func (p *Provider) loadGallery(ctx context.Context, rg, name string) error {
	_, err := p.galleryFromBase(ctx, rg, name)
	return err
}

func (p *Provider) loadDefinition(ctx context.Context, rg, gal, name string) error {
	_, err := p.definitionFromBase(ctx, rg, gal, name)
	return err
}

// loadRef reads a blob ref that may be nil.
func (p *Provider) loadRef(ctx context.Context, ref *cloud.BlobRef) error {
	if ref == nil {
		return nil
	}
	return p.loadBlob(ctx, *ref)
}

// loadURL reads the blob at a URL; a disk's SAS URL is the state's.
func (p *Provider) loadURL(ctx context.Context, u string) error {
	ref, err := cloud.ParseBlobURL(u)
	if err != nil {
		return nil // the call reports it
	}
	return p.loadBlob(ctx, ref)
}

// remoteGroup holds the storage accounts whose blobs the base serves but
// whose resource group is unknown (blob calls name only the account);
// no resource group is named "".
const remoteGroup = ""

// probeContainer and probeBlob name a blob nobody has, to learn from the
// base's answer whether an account or container exists.
const (
	probeContainer = "imgflow-overlay-probe"
	probeBlob      = ".imgflow-overlay-probe"
)

type readThrough struct {
	base cloud.Provider
	sub  string
	data *baseData
	// known are the ids (and blob keys) asked of the base, lowercased;
	// guarded by Provider.mu.
	known        map[string]bool
	locationsSet bool
}

func newReadThrough(base cloud.Provider) *readThrough {
	return &readThrough{base: base, sub: base.SubscriptionID(), known: map[string]bool{}, data: &baseData{base: base, refs: map[Key]baseRef{}}}
}

// fetch reads the resource id from the base unless the state holds it
// or the base was asked before, and puts it in the state. It returns
// whether the state's resource came from the base (a leaf: whether it
// exists), so that its children are asked too.
func fetch[T any](ctx context.Context, p *Provider, id string, has func(st *State) (exists, fromBase bool),
	get func() (*T, error), put func(st *State, v *T)) (bool, error) {
	id = key(id)
	p.mu.Lock()
	exists, fromBase := has(p.st)
	asked := p.rt.known[id]
	p.mu.Unlock()
	if exists || asked {
		return exists && fromBase, nil
	}
	v, err := get()
	if err != nil && !cloud.IsNotFound(err) {
		return false, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rt.known[id] = true
	if exists, _ := has(p.st); err != nil || exists {
		return false, nil
	}
	p.mutate(func(st *State) { put(st, v) })
	return true, nil
}

func (p *Provider) groupFromBase(ctx context.Context, name string) (bool, error) {
	if p.rt == nil {
		return false, nil
	}
	if err := p.loadLocations(ctx); err != nil {
		return false, err
	}
	return fetch(ctx, p, cloud.ResourceGroupID(p.rt.sub, name),
		func(st *State) (bool, bool) {
			rg := st.ResourceGroups[key(name)]
			return rg != nil, rg != nil && rg.Base
		},
		func() (*cloud.ResourceGroup, error) { return p.rt.base.GetResourceGroup(ctx, name) },
		func(st *State, v *cloud.ResourceGroup) {
			st.ResourceGroups[key(name)] = &ResourceGroupState{ResourceGroup: *v, Base: true}
			st.Normalize()
		})
}

func (p *Provider) loadLocations(ctx context.Context) error {
	p.mu.Lock()
	set := p.rt.locationsSet
	p.mu.Unlock()
	if set {
		return nil
	}
	locs, err := p.rt.base.ListLocations(ctx)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.locations, p.rt.locationsSet = locs, true
	p.locIndex = azrules.NewRegions(locs)
	return nil
}

// group, gallery and definition find a loaded resource; a missing one
// is an empty one, so that a lookup below it finds nothing.
func group(st *State, rg string) *ResourceGroupState {
	if g := st.ResourceGroups[key(rg)]; g != nil {
		return g
	}
	g := &ResourceGroupState{}
	(&State{ResourceGroups: map[string]*ResourceGroupState{"": g}}).Normalize()
	return g
}

func gallery(st *State, rg, name string) *GalleryState {
	if g := group(st, rg).Galleries[key(name)]; g != nil {
		return g
	}
	return &GalleryState{Definitions: map[string]*DefinitionState{}}
}

func definition(st *State, rg, g, name string) *DefinitionState {
	if d := gallery(st, rg, g).Definitions[key(name)]; d != nil {
		return d
	}
	return &DefinitionState{Versions: map[string]*cloud.ImageVersion{}}
}

func (p *Provider) galleryFromBase(ctx context.Context, rg, name string) (bool, error) {
	if ok, err := p.groupFromBase(ctx, rg); !ok {
		return false, err
	}
	return fetch(ctx, p, cloud.GalleryID(p.rt.sub, rg, name),
		func(st *State) (bool, bool) {
			g := group(st, rg).Galleries[key(name)]
			return g != nil, g != nil && g.Base
		},
		func() (*cloud.Gallery, error) { return p.rt.base.GetGallery(ctx, rg, name) },
		func(st *State, v *cloud.Gallery) {
			group(st, rg).Galleries[key(name)] = &GalleryState{Gallery: *v, Base: true, Definitions: map[string]*DefinitionState{}}
		})
}

// loadGalleries reads every gallery of the base (gallery names are
// unique per subscription).
func (p *Provider) loadGalleries(ctx context.Context) error {
	if p.rt == nil {
		return nil
	}
	all, err := p.rt.base.ListGalleries(ctx)
	if err != nil {
		return err
	}
	for _, g := range all {
		if _, err := p.galleryFromBase(ctx, g.ResourceGroup, g.Name); err != nil {
			return err
		}
	}
	return nil
}

func (p *Provider) definitionFromBase(ctx context.Context, rg, gal, name string) (bool, error) {
	if ok, err := p.galleryFromBase(ctx, rg, gal); !ok {
		return false, err
	}
	return fetch(ctx, p, cloud.ImageDefinitionID(p.rt.sub, rg, gal, name),
		func(st *State) (bool, bool) {
			d := gallery(st, rg, gal).Definitions[key(name)]
			return d != nil, d != nil && d.Base
		},
		func() (*cloud.ImageDefinition, error) { return p.rt.base.GetImageDefinition(ctx, rg, gal, name) },
		func(st *State, v *cloud.ImageDefinition) {
			gallery(st, rg, gal).Definitions[key(name)] = &DefinitionState{ImageDefinition: *v, Base: true,
				Versions: map[string]*cloud.ImageVersion{}}
		})
}

// loadDefinitions reads every definition of a gallery from the base.
func (p *Provider) loadDefinitions(ctx context.Context, rg, gal string) error {
	if ok, err := p.galleryFromBase(ctx, rg, gal); !ok {
		return err
	}
	defs, err := p.rt.base.ListImageDefinitions(ctx, rg, gal)
	if err != nil && !cloud.IsNotFound(err) {
		return err
	}
	for _, d := range defs {
		if _, err := p.definitionFromBase(ctx, rg, gal, d.Name); err != nil {
			return err
		}
	}
	return nil
}

// loadVersions reads every version of a definition from the base.
func (p *Provider) loadVersions(ctx context.Context, rg, gal, def string) error {
	if ok, err := p.definitionFromBase(ctx, rg, gal, def); !ok {
		return err
	}
	versions, err := p.rt.base.ListImageVersions(ctx, rg, gal, def)
	if err != nil && !cloud.IsNotFound(err) {
		return err
	}
	for _, v := range versions {
		if err := p.loadVersion(ctx, rg, gal, def, v.Name); err != nil {
			return err
		}
	}
	return nil
}

func (p *Provider) loadVersion(ctx context.Context, rg, gal, def, name string) error {
	if ok, err := p.definitionFromBase(ctx, rg, gal, def); !ok {
		return err
	}
	_, err := fetch(ctx, p, cloud.ImageVersionID(p.rt.sub, rg, gal, def, name),
		func(st *State) (bool, bool) {
			return definition(st, rg, gal, def).Versions[key(name)] != nil, true
		},
		func() (*cloud.ImageVersion, error) { return p.rt.base.GetImageVersion(ctx, rg, gal, def, name) },
		func(st *State, v *cloud.ImageVersion) {
			definition(st, rg, gal, def).Versions[key(name)] = v
		})
	return err
}

func (p *Provider) loadImage(ctx context.Context, rg, name string) error {
	if ok, err := p.groupFromBase(ctx, rg); !ok {
		return err
	}
	_, err := fetch(ctx, p, cloud.ManagedImageID(p.rt.sub, rg, name),
		func(st *State) (bool, bool) { return group(st, rg).Images[key(name)] != nil, true },
		func() (*cloud.ManagedImage, error) { return p.rt.base.GetManagedImage(ctx, rg, name) },
		func(st *State, v *cloud.ManagedImage) { group(st, rg).Images[key(name)] = v })
	return err
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

// loadVM reads a VM and its OS disk.
func (p *Provider) loadVM(ctx context.Context, rg, name string) error {
	if ok, err := p.groupFromBase(ctx, rg); !ok {
		return err
	}
	_, err := fetch(ctx, p, cloud.VMID(p.rt.sub, rg, name),
		func(st *State) (bool, bool) { return group(st, rg).VMs[key(name)] != nil, true },
		func() (*cloud.VM, error) { return p.rt.base.GetVM(ctx, rg, name) },
		func(st *State, v *cloud.VM) {
			if group(st, rg).VMs == nil {
				group(st, rg).VMs = map[string]*cloud.VM{}
			}
			group(st, rg).VMs[key(name)] = v
		})
	if err != nil {
		return err
	}
	return p.loadDisk(ctx, rg, cloud.VMOSDiskName(name))
}

// loadAccount reads a storage account of a resource group; one known
// from its blobs only moves into its group.
func (p *Provider) loadAccount(ctx context.Context, rg, name string) error {
	if ok, err := p.groupFromBase(ctx, rg); !ok {
		return err
	}
	_, err := fetch(ctx, p, cloud.StorageAccountID(p.rt.sub, rg, name),
		func(st *State) (bool, bool) { return group(st, rg).StorageAccounts[key(name)] != nil, true },
		func() (*cloud.StorageAccount, error) { return p.rt.base.GetStorageAccount(ctx, rg, name) },
		func(st *State, v *cloud.StorageAccount) {
			sa := &StorageAccountState{StorageAccount: *v, Base: true, Containers: map[string]*ContainerState{}}
			if remote := group(st, remoteGroup); remote != nil && remote.StorageAccounts[key(name)] != nil {
				sa.Containers = remote.StorageAccounts[key(name)].Containers
				delete(remote.StorageAccounts, key(name))
			}
			group(st, rg).StorageAccounts[key(name)] = sa
		})
	return err
}

// loadNewAccount prepares a storage account's creation: storage account
// names are global, so one the base's blob endpoint serves is someone
// else's, unless the base can ask Storage itself (a cloud.Preflighter:
// its preflight judges the name).
func (p *Provider) loadNewAccount(ctx context.Context, rg, name string) error {
	if p.rt == nil {
		return nil
	}
	if err := p.loadAccount(ctx, rg, name); err != nil {
		return err
	}
	if _, asks := p.rt.base.(cloud.Preflighter); asks {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.mutate(func(st *State) {
			if remote := group(st, remoteGroup); remote != nil {
				delete(remote.StorageAccounts, key(name))
			}
		})
		return nil
	}
	return p.loadBlob(ctx, cloud.BlobRef{Account: name, Container: probeContainer, Name: probeBlob})
}

// loadSource reads the resource an image source or a VM's image names.
func (p *Provider) loadSource(ctx context.Context, src cloud.ImageSource) error {
	if src.Kind == cloud.SourceVHD {
		ref, err := cloud.ParseBlobURL(src.URI)
		if err != nil {
			return nil // the rule reports it
		}
		return p.load(p.loadBlob(ctx, ref), p.loadID(ctx, src.StorageAccountID))
	}
	return p.loadID(ctx, src.ID)
}

// loadID reads the image version, managed image or storage account id
// names.
func (p *Provider) loadID(ctx context.Context, id string) error {
	rid, err := cloud.ParseResourceID(id)
	if err == nil {
		if q := p.peer(ctx, p.SubscriptionID(), rid.Subscription); q != nil {
			return q.loadID(ctx, id) // another subscription of the tenant reads its own base
		}
	}
	if p.rt == nil || err != nil || !strings.EqualFold(rid.Subscription, p.rt.sub) {
		return nil
	}
	n := rid.Names
	switch {
	case rid.Is("Microsoft.Compute", "galleries", "images", "versions"):
		return p.loadVersion(ctx, rid.ResourceGroup, n[0], n[1], n[2])
	case rid.Is("Microsoft.Compute", "images"):
		return p.loadImage(ctx, rid.ResourceGroup, n[0])
	case rid.Is("Microsoft.Storage", "storageAccounts") && len(n) > 0:
		return p.loadAccount(ctx, rid.ResourceGroup, n[0])
	}
	return nil
}

// loadBlob reads what the base's blob service says of ref: whether the
// account, the container and the blob exist.
func (p *Provider) loadBlob(ctx context.Context, ref cloud.BlobRef) error {
	if p.rt == nil || azrules.IsDiskAccount(ref.Account) {
		return nil
	}
	aKey, cKey, bKey := "account:"+key(ref.Account), "container:"+key(ref.Account)+"/"+ref.Container, "blob:"+ref.URL()
	p.mu.Lock()
	_, sa := p.st.findStorageAccount(ref.Account)
	var c *ContainerState
	if sa != nil {
		c = sa.Containers[ref.Container]
	}
	done := (sa == nil && p.rt.known[aKey]) || (sa != nil && !sa.Base) ||
		(c == nil && p.rt.known[cKey]) || (c != nil && (!c.Base || c.Blobs[ref.Name] != nil || p.rt.known[bKey]))
	p.mu.Unlock()
	if done {
		return nil
	}
	b, err := p.rt.base.GetBlob(ctx, ref)
	account, container := true, true
	switch {
	case cloud.HasCode(err, cloud.CodeBlobNotFound):
	case cloud.HasCode(err, cloud.CodeContainerNotFound):
		container = false
	case cloud.HasCode(err, cloud.CodeResourceNotFound):
		account, container = false, false
	case err != nil:
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rt.known[aKey], p.rt.known[cKey], p.rt.known[bKey] = true, true, true
	if !account {
		return nil
	}
	p.mutate(func(st *State) { p.putBlob(st, ref, b, container) })
	return nil
}

// putBlob puts what the base said of ref in st (see loadBlob).
func (p *Provider) putBlob(st *State, ref cloud.BlobRef, b *cloud.Blob, container bool) {
	_, sa := st.findStorageAccount(ref.Account)
	if sa == nil {
		remote := st.ResourceGroups[remoteGroup]
		if remote == nil {
			remote = &ResourceGroupState{Base: true}
			st.ResourceGroups[remoteGroup] = remote
			st.Normalize()
		}
		sa = &StorageAccountState{StorageAccount: cloud.StorageAccount{Name: ref.Account, BlobEndpoint: cloud.DefaultBlobEndpoint(ref.Account)},
			Base: true, Containers: map[string]*ContainerState{}}
		remote.StorageAccounts[key(ref.Account)] = sa
	}
	if !container {
		return
	}
	if sa.Containers[ref.Container] == nil {
		sa.Containers[ref.Container] = &ContainerState{Name: ref.Container, Base: true, Blobs: map[string]*BlobState{}}
	}
	if b != nil && sa.Containers[ref.Container].Blobs[ref.Name] == nil {
		sa.Containers[ref.Container].Blobs[ref.Name] = &BlobState{Name: ref.Name, Type: b.Type, Size: b.Size, MD5: b.MD5,
			Digest: b.Digest, Metadata: b.Metadata}
		p.rt.data.put(BlobKey(ref.Account, ref.Container, ref.Name), ref, b.Size)
	}
}

// baseData keeps no bytes: content read from the base is read there,
// the rest (uploads of a dry run) reads as zeros.
type baseData struct {
	base cloud.Provider
	mu   sync.Mutex
	refs map[Key]baseRef
}

type baseRef struct {
	ref  cloud.BlobRef
	size int64
}

type baseStaged struct{ at *baseRef }

func (baseStaged) Discard() {}

// baseContent reads content from the base.
type baseContent struct {
	ctx  context.Context
	base cloud.Provider
	at   baseRef
}

func (c *baseContent) ReadAt(b []byte, off int64) (int, error) {
	data, err := c.base.ReadBlob(c.ctx, c.at.ref, off, int64(len(b)))
	return copy(b, data), err
}
func (c *baseContent) Close() error            { return nil }
func (c *baseContent) Size() int64             { return c.at.size }
func (c *baseContent) DataRanges() []vhd.Range { return []vhd.Range{{Offset: 0, Length: c.at.size}} }

func (d *baseData) put(k Key, ref cloud.BlobRef, size int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.refs[k] = baseRef{ref: ref, size: size}
}

func (d *baseData) Write(ctx context.Context, size int64, src io.ReaderAt, ranges []vhd.Range) (Staged, string, error) {
	_, digest, err := noData{}.Write(ctx, size, src, ranges)
	return baseStaged{}, digest, err
}

func (d *baseData) Copy(_ context.Context, c Content, _ int64) (Staged, string, error) {
	if bc, ok := c.(*baseContent); ok {
		return baseStaged{at: &bc.at}, "", nil
	}
	return baseStaged{}, "", nil
}

func (d *baseData) Open(ctx context.Context, k Key) (Content, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if at, ok := d.refs[k]; ok {
		return &baseContent{ctx: ctx, base: d.base, at: at}, nil
	}
	return nil, nil
}

// Has implements Data: a compute resource's content is its own (the
// base's unread), never its source's.
func (d *baseData) Has(k Key) bool {
	if k.ID != "" {
		return true
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.refs[k]
	return ok
}

func (d *baseData) Same(Content, Key) bool { return true }

func (d *baseData) Place(s Staged, k Key) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if at := s.(baseStaged).at; at != nil {
		d.refs[k] = *at
	} else {
		delete(d.refs, k)
	}
	return nil
}

func (d *baseData) Remove(k Key) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.refs, k)
	return nil
}
