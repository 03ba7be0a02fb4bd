package azsim

import (
	"context"
	"errors"
	"io"
	"os"
	"time"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/cloud/transfer"
	"github.com/imgflow/imgflow/vhd"
)

// Content. Azure copies a source's bytes when it creates a managed image,
// an image version or a disk from it, so later changes to the source do
// not reach them. Each such resource therefore gets its own content, a
// copy of its source's taken at creation, so a disk exported from a
// version reads what the version was made from. Data keeps that content
// and the blobs'; the state holds only metadata.

// Key names stored content: a blob's (Account, Container, Blob) or a
// compute resource's (ID, lowercased).
type Key struct {
	Account, Container, Blob string
	ID                       string
}

// BlobKey is the key of a blob's content.
func BlobKey(account, container, name string) Key {
	return Key{Account: key(account), Container: container, Blob: name}
}

// ResourceKey is the key of a managed image's, image version's or disk's
// content.
func ResourceKey(id string) Key { return Key{ID: key(id)} }

// Content is stored content open for reading.
type Content interface {
	io.ReaderAt
	io.Closer
	// Size is the content's length.
	Size() int64
	// DataRanges lists the ranges that may hold data.
	DataRanges() []vhd.Range
}

// Staged is content written but not placed yet.
type Staged interface {
	// Discard drops content that will not be placed.
	Discard()
}

// Data keeps content. Writes and copies run outside the state lock and
// are staged; placing, opening and removing run under it.
type Data interface {
	// Write stages size bytes of src, of which only ranges hold data, and
	// returns them with their sparse digest (transfer.SparseDigest).
	Write(ctx context.Context, size int64, src io.ReaderAt, ranges []vhd.Range) (Staged, string, error)
	// Copy stages a copy of size bytes of c (nil: content not kept) and
	// returns it with its sparse digest ("" when not computed).
	Copy(ctx context.Context, c Content, size int64) (Staged, string, error)
	// Open opens the content at k, which keeps reading the same bytes if
	// k is replaced meanwhile; nil when it is not kept (reads as zeros).
	// Content that does not exist is an error wrapping os.ErrNotExist.
	Open(ctx context.Context, k Key) (Content, error)
	// Has reports whether content is stored at k.
	Has(k Key) bool
	// Same reports whether k still holds what c was opened from.
	Same(c Content, k Key) bool
	// Place makes s the content at k.
	Place(s Staged, k Key) error
	// Remove removes the content at k; it fails only to stop a delete
	// in a test of a crash.
	Remove(k Key) error
}

// Blobs holds the blobs of the state's storage accounts outside the
// state (Options.Blobs).
type Blobs interface {
	// Blob describes the blob at ref (its type and size); nil when it is
	// not there.
	Blob(ctx context.Context, ref cloud.BlobRef) (*BlobState, error)
}

// DiskAccess opens read access to a disk's content where a reader finds
// it (Options.DiskAccess).
type DiskAccess interface {
	// Grant returns a read SAS URL of the content at k, valid until
	// expiry.
	Grant(ctx context.Context, k Key, expiry time.Time) (string, error)
	// Revoke closes the access Grant opened to k.
	Revoke(ctx context.Context, k Key) error
}

// noData keeps no content: every content reads as zeros.
type noData struct{}

type noStaged struct{}

func (noStaged) Discard() {}

func (noData) Write(ctx context.Context, size int64, src io.ReaderAt, ranges []vhd.Range) (Staged, string, error) {
	d, err := transfer.SparseDigest(ctx, src, size, ranges)
	return noStaged{}, d, err
}
func (noData) Copy(context.Context, Content, int64) (Staged, string, error) {
	return noStaged{}, "", nil
}
func (noData) Open(context.Context, Key) (Content, error) { return nil, nil }
func (noData) Has(Key) bool                               { return false }
func (noData) Same(Content, Key) bool                     { return true }
func (noData) Place(Staged, Key) error                    { return nil }
func (noData) Remove(Key) error                           { return nil }

// content is where a resource's bytes are: size bytes at key, in data
// (nil: the simulation's own; another subscription's of the tenant).
type content struct {
	key  Key
	size int64
	data Data
}

// in is the Data holding c.
func (c content) in(p *Provider) Data {
	if c.data != nil {
		return c.data
	}
	return p.data
}

// maxSourceDepth bounds the resolution of source chains.
const maxSourceDepth = 32

// sourceContent returns the content of an image source. It runs under the
// state lock, after the source was checked.
func (p *Provider) sourceContent(st *State, src cloud.ImageSource, resource string, depth int) (content, error) {
	if depth > maxSourceDepth {
		return content{}, azrules.InvalidParameter(resource, "The source chain of '%s' is too deep or circular.", resource)
	}
	if q, qst := p.sourcePeer(st, src); q != nil {
		return q.sourceContent(qst, src, resource, depth) // its content is the peer's
	}
	switch src.Kind {
	case cloud.SourceVHD:
		ref, err := cloud.ParseBlobURL(src.URI)
		if err != nil {
			return content{}, azrules.InvalidParameter(resource, "%v", err)
		}
		if _, sa := st.findStorageAccount(ref.Account); sa != nil && p.blobs != nil {
			// Checked by vhdBlob; its size is the content's.
			return content{key: BlobKey(sa.Name, ref.Container, ref.Name), size: -1, data: p.data}, nil
		}
		sa, _, b, err := p.lookupBlob(st, ref)
		if err != nil {
			return content{}, err
		}
		return content{key: BlobKey(sa.Name, ref.Container, b.Name), size: b.Size, data: p.data}, nil
	case cloud.SourceImageVersion:
		_, v, err := p.versionByID(st, src.ID, resource)
		if err != nil {
			return content{}, err
		}
		return p.resourceContent(st, v.ID, v.Source, depth+1)
	case cloud.SourceManagedImage:
		img, err := p.managedImageByID(st, src.ID, resource)
		if err != nil {
			return content{}, err
		}
		return p.resourceContent(st, img.ID, img.Source, depth+1)
	}
	return content{}, azrules.InvalidParameter(resource, "The source kind '%s' is not supported.", src.Kind)
}

// resourceContent returns the content of a managed image or image version:
// its own or, for one made before resources had their own, its source's.
func (p *Provider) resourceContent(st *State, id string, src cloud.ImageSource, depth int) (content, error) {
	if q, qst := p.peerState(st, idSubscription(id)); q != nil {
		return q.resourceContent(qst, id, src, depth) // another subscription's resource has its content there
	}
	if p.data.Has(ResourceKey(id)) {
		return content{key: ResourceKey(id), size: -1, data: p.data}, nil
	}
	return p.sourceContent(st, src, id, depth)
}

// dataCopy asks updateWithData to give the resource id a copy of src.
type dataCopy struct {
	id  string
	src content
}

// errNeedData aborts an update attempt whose content is not copied yet.
var errNeedData = errors.New("azsim: content copy needed")

// maxDataAttempts bounds the optimistic copies of updateWithData; the
// last attempt copies under the lock.
const maxDataAttempts = 3

// updateWithData is update for a call that may create a resource with
// content. fn works as for update and returns the copy the new resource
// needs (nil when none, e.g. an idempotent PUT of an existing one).
//
// Like blob transfers, the copy runs outside the lock: a first attempt
// learns the source and fails; its content is copied; the next attempt
// runs fn again on the current state and, if the source is still the
// same (content is replaced, never rewritten), places the copy. Should
// the source keep being replaced, the last attempt copies under the lock.
//
// When nothing changed the state in the meantime (Provider.version), the
// next attempt would make the same state again from a new copy of it:
// the first attempt's is committed instead, with the copy placed.
func (p *Provider) updateWithData(ctx context.Context, fn func(t *tx) (*dataCopy, error)) error {
	var staged Staged // a copy made by an earlier attempt
	var from Content
	defer func() {
		if staged != nil {
			staged.Discard()
		}
	}()
	for attempt := 1; ; attempt++ {
		var need content
		var pending *tx // the attempt's next state, its copy to place
		var pendingID string
		var at uint64 // the version it was made from
		err := p.update(ctx, func(t *tx) error {
			c, err := fn(t)
			if err != nil || c == nil {
				return err
			}
			switch {
			case staged != nil && c.src.in(p).Same(from, c.src.key):
				err := p.data.Place(staged, ResourceKey(c.id))
				staged = nil
				return err
			case attempt == maxDataAttempts:
				s, _, err := p.copyContent(ctx, c.src)
				if err != nil {
					return err
				}
				if err := p.data.Place(s, ResourceKey(c.id)); err != nil {
					s.Discard()
					return err
				}
				return nil
			}
			need = c.src
			pending, pendingID, at = t, c.id, p.version
			return errNeedData
		})
		if !errors.Is(err, errNeedData) {
			return err
		}
		if staged != nil {
			staged.Discard()
			staged = nil
		}
		staged, from, err = p.copyContent(ctx, need)
		if errors.Is(err, os.ErrNotExist) {
			continue // the source went away: the next attempt says why
		}
		if err != nil {
			return err
		}
		if done, err := p.commitUnchanged(ctx, pending, at, func() error {
			if !need.in(p).Same(from, need.key) {
				return errNeedData
			}
			err := p.data.Place(staged, ResourceKey(pendingID))
			staged = nil
			return err
		}); done {
			return err
		}
	}
}

// commitUnchanged commits t, a change made from the state of version at,
// when the state is still at that version and place (run first, under
// the lock) succeeds; done is false when the change must be made anew
// (another change came between, or place says errNeedData).
func (p *Provider) commitUnchanged(ctx context.Context, t *tx, at uint64, place func() error) (done bool, err error) {
	if err := ctx.Err(); err != nil {
		return true, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return true, ErrClosed
	}
	if p.version != at {
		return false, nil
	}
	if err := place(); errors.Is(err, errNeedData) {
		return false, nil
	} else if err != nil {
		return true, err
	}
	return true, p.commit(t)
}

// copyContent stages a copy of src and returns it with the content it
// was copied from (closed, for Data.Same).
func (p *Provider) copyContent(ctx context.Context, src content) (Staged, Content, error) {
	c, err := src.in(p).Open(ctx, src.key)
	if err != nil {
		return nil, nil, err
	}
	size := src.size
	if c != nil {
		defer c.Close()
		if size < 0 {
			size = c.Size()
		}
	}
	s, _, err := p.data.Copy(ctx, c, size)
	return s, c, err
}

// openContent opens src for reading after the lock is released: a
// reader of its size bytes (zeros when not kept).
func (p *Provider) openContent(ctx context.Context, src content) (io.ReaderAt, func(), error) {
	c, err := src.in(p).Open(ctx, src.key)
	if err != nil {
		return nil, nil, err
	}
	if c == nil {
		return zeros{}, func() {}, nil
	}
	return c, func() { c.Close() }, nil
}

// zeros reads as zeros: content that is not kept.
type zeros struct{}

func (zeros) ReadAt(b []byte, _ int64) (int, error) {
	clear(b)
	return len(b), nil
}
