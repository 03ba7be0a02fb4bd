package azsim

import (
	"context"
	"io"
	"strings"
	"sync"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/vhd"
)

// Read-through. With a Base, the state starts empty and a call first
// reads what it addresses from the base into it (load…): a resource the
// state does not hold is asked of the base once, and only when its
// parent came from the base (a parent the run created has nothing below
// it there). What the base answered, and what it did not have, is
// remembered (known), so a resource the run deleted stays deleted. The
// rules then run on the state alone.
//
// This file holds the mechanism (fetch, the loads of an image source or
// an id, the base's content); each resource type's loader (loadGallery,
// loadVersion, loadBlob, …) is beside that type's operations, so an
// operation on a type is written in one file.

// load returns the first error of loads (each a no-op without a Base).
func (p *Provider) load(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
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
