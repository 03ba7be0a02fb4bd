package azsim

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/url"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/internal/redact"
)

// Blob operations. Metadata lives in the state; content in Data.
// Transfers are staged outside the lock and placed under it, so a
// multi-GiB upload does not block other calls and a failed one leaves
// nothing behind.

const pageSize = 512

// lookupContainer returns the blob's account and container. A managed
// disk's URL names no account: it is read-only.
func (p *Provider) lookupContainer(st *State, ref cloud.BlobRef) (*StorageAccountState, *ContainerState, error) {
	if azrules.IsDiskAccount(ref.Account) {
		return nil, nil, diskWriteRefused(ref)
	}
	_, sa := st.findStorageAccount(ref.Account)
	if sa == nil {
		return nil, nil, azrules.AccountNotFound(ref.Account, ref.URL())
	}
	c, ok := sa.Containers[ref.Container]
	if !ok {
		return nil, nil, azrules.ContainerNotFound(ref)
	}
	return sa, c, nil
}

// lookupBlob returns the blob's account, container and metadata.
func (p *Provider) lookupBlob(st *State, ref cloud.BlobRef) (*StorageAccountState, *ContainerState, *BlobState, error) {
	sa, c, err := p.lookupContainer(st, ref)
	if err != nil {
		return nil, nil, nil, err
	}
	b, ok := c.Blobs[ref.Name]
	if !ok {
		return nil, nil, nil, azrules.BlobNotFound(ref)
	}
	return sa, c, b, nil
}

func blobInfo(ref cloud.BlobRef, sa *StorageAccountState, b *BlobState) *cloud.Blob {
	r := cloud.BlobRef{Account: sa.Name, Container: ref.Container, Name: b.Name, Endpoint: ref.Endpoint}
	return &cloud.Blob{BlobRef: r, URL: r.URL(), Type: b.Type, Size: b.Size, MD5: b.MD5, Digest: b.Digest, Metadata: maps.Clone(b.Metadata)}
}

// GetBlob implements cloud.Provider. A managed disk's SAS URL is a page
// blob of the disk's size; its ref carries the SAS after the name (see
// ReadBlob).
func (p *Provider) GetBlob(ctx context.Context, ref cloud.BlobRef) (*cloud.Blob, error) {
	if err := p.load(p.loadBlob(ctx, ref)); err != nil {
		return nil, err
	}
	var out *cloud.Blob
	err := p.view(ctx, func(st *State) error {
		if azrules.IsDiskAccount(ref.Account) {
			clean, q := splitDiskRef(ref)
			d, _, err := p.grantedDisk(st, clean, q)
			if err != nil {
				return err
			}
			out = &cloud.Blob{BlobRef: clean, URL: clean.URL(), Type: cloud.BlobTypePage, Size: d.SizeBytes}
			return nil
		}
		sa, _, b, err := p.lookupBlob(st, ref)
		if err != nil {
			return err
		}
		out = blobInfo(ref, sa, b)
		return nil
	})
	return out, err
}

// SetBlobMetadata implements cloud.Provider.
func (p *Provider) SetBlobMetadata(ctx context.Context, ref cloud.BlobRef, metadata map[string]string) error {
	if err := p.load(p.loadBlob(ctx, ref)); err != nil {
		return err
	}
	if azrules.IsDiskAccount(ref.Account) {
		return diskWriteRefused(ref)
	}
	return p.update(ctx, func(t *tx) error {
		_, _, b, err := p.lookupBlob(t.st, ref)
		if err != nil {
			return err
		}
		b.Metadata = maps.Clone(metadata)
		t.log(cloud.OpUpdate, cloud.KindBlob, ref.URL())
		return nil
	})
}

// EnsureContainer implements cloud.Provider.
func (p *Provider) EnsureContainer(ctx context.Context, account, container string) error {
	if err := p.load(p.loadBlob(ctx, cloud.BlobRef{Account: account, Container: container, Name: probeBlob})); err != nil {
		return err
	}
	// An existing container (the usual case) is answered without a copy
	// of the state.
	exists := false
	if err := p.view(ctx, func(st *State) error {
		if _, sa := st.findStorageAccount(account); sa != nil {
			_, exists = sa.Containers[container]
		}
		return nil
	}); err != nil || exists {
		return err
	}
	return p.update(ctx, func(t *tx) error {
		_, sa := t.st.findStorageAccount(account)
		if sa == nil {
			return azrules.AccountNotFound(account, cloud.DefaultBlobEndpoint(account)+"/"+container)
		}
		if _, ok := sa.Containers[container]; ok {
			return nil
		}
		sa.Containers[container] = &ContainerState{Name: container, Created: p.stamp(), Blobs: map[string]*BlobState{}}
		t.log(cloud.OpCreate, cloud.KindContainer, cloud.DefaultBlobEndpoint(account)+"/"+container)
		return nil
	})
}

// ReadBlob implements cloud.Provider. A read is clamped to the blob's end;
// one starting past it fails with InvalidRange (416) as in Azure.
//
// A granted managed disk reads through its SAS URL. cloud.BlobRef has no
// SAS field, so the ref carries the SAS after its name, as in
// BlobRef{Account: "md-…", Container: "…", Name: "abcd?sv=…&sig=…"}
// (whose URL() is the SAS URL); a ref without it, such as ParseBlobURL
// gives, is refused with 403 AuthenticationFailed.
func (p *Provider) ReadBlob(ctx context.Context, ref cloud.BlobRef, offset, length int64) ([]byte, error) {
	if err := p.load(p.loadBlob(ctx, ref)); err != nil {
		return nil, err
	}
	var src content
	resource := ref.URL()
	var r io.ReaderAt
	done := func() {}
	err := p.view(ctx, func(st *State) error {
		if azrules.IsDiskAccount(ref.Account) {
			clean, q := splitDiskRef(ref)
			resource = clean.URL() // never the SAS
			_, c, err := p.grantedDisk(st, clean, q)
			if err != nil {
				return err
			}
			src = c
		} else {
			sa, _, b, err := p.lookupBlob(st, ref)
			if err != nil {
				return err
			}
			src = content{key: BlobKey(sa.Name, ref.Container, b.Name), size: b.Size}
		}
		if offset < 0 || length < 0 {
			return azrules.InvalidParameter(resource, "invalid range: offset %d, length %d", offset, length)
		}
		if length == 0 {
			return nil
		}
		if offset >= src.size {
			return azrules.InvalidRange(resource)
		}
		// Opened under the lock: it keeps this content even if the blob
		// is overwritten while we read.
		var err error
		r, done, err = p.openContent(ctx, src)
		return err
	})
	if err != nil {
		return nil, err
	}
	defer done()
	if r == nil {
		return []byte{}, nil // an empty read opens nothing
	}
	buf := make([]byte, min(length, src.size-offset))
	if err := ReadFull(r, buf, offset); err != nil {
		return nil, fmt.Errorf("read %s: %w", resource, err)
	}
	return buf, nil
}

// ReadFull reads len(b) bytes at off; a source ending early is an error
// (io.ReaderAt may return io.EOF together with a full read).
func ReadFull(r io.ReaderAt, b []byte, off int64) error {
	n, err := r.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// checkWrite checks that a blob can be written at ref (account, container,
// overwrite rule) and returns the account and whether a blob is there.
func (p *Provider) checkWrite(st *State, ref cloud.BlobRef, overwrite bool) (*StorageAccountState, *ContainerState, bool, error) {
	sa, c, err := p.lookupContainer(st, ref)
	if err != nil {
		return nil, nil, false, err
	}
	_, exists := c.Blobs[ref.Name]
	if exists && !overwrite {
		return nil, nil, true, azrules.BlobAlreadyExists(ref.URL(), "")
	}
	return sa, c, exists, nil
}

// UploadPageBlob implements cloud.Provider. Only the data ranges are
// read and stored. The blob gets the content's sparse digest (no
// Content-MD5: no service computes one here).
func (p *Provider) UploadPageBlob(ctx context.Context, ref cloud.BlobRef, src cloud.PageSource, overwrite bool) (*cloud.Blob, error) {
	if err := p.load(p.loadBlob(ctx, ref)); err != nil {
		return nil, err
	}
	if azrules.IsDiskAccount(ref.Account) {
		return nil, diskWriteRefused(ref)
	}
	if err := azrules.CheckPageBlobSize(ref.URL(), src.Size); err != nil {
		return nil, err
	}
	ranges, err := src.DataRanges()
	if err != nil {
		return nil, azrules.InvalidParameter(ref.URL(), "%s", err)
	}
	if err := p.view(ctx, func(st *State) error {
		_, _, _, err := p.checkWrite(st, ref, overwrite)
		return err
	}); err != nil {
		return nil, err
	}
	staged, digest, err := p.data.Write(ctx, src.Size, src.Reader, ranges)
	if err != nil {
		return nil, err
	}
	return p.commitBlob(ctx, ref, overwrite, staged, &BlobState{Type: cloud.BlobTypePage, Size: src.Size, Digest: digest})
}

// CopyBlob implements cloud.Provider for sources in this subscription
// (the SAS of srcURL is ignored). The copy keeps the source's type, size,
// MD5 (if any), digest and holes. The SAS URL of a granted managed disk is
// a source too: its SAS is checked, and the copy is a page blob of the
// disk's content.
func (p *Provider) CopyBlob(ctx context.Context, srcURL string, dest cloud.BlobRef, overwrite bool) (*cloud.Blob, error) {
	if err := p.load(p.loadURL(ctx, srcURL), p.loadBlob(ctx, dest)); err != nil {
		return nil, err
	}
	srcRef, err := cloud.ParseBlobURL(srcURL)
	if err != nil {
		return nil, azrules.InvalidParameter(redact.URL(srcURL), "invalid copy source: %v", err)
	}
	var q url.Values
	if azrules.IsDiskAccount(srcRef.Account) {
		u, err := url.Parse(srcURL)
		if err != nil {
			return nil, azrules.InvalidParameter(redact.URL(srcURL), "invalid copy source")
		}
		q = u.Query()
	}
	if azrules.IsDiskAccount(dest.Account) {
		return nil, diskWriteRefused(dest)
	}
	var meta BlobState
	var c Content
	err = p.view(ctx, func(st *State) error {
		var src content
		if q != nil {
			d, dc, err := p.grantedDisk(st, srcRef, q)
			if err != nil {
				return err
			}
			meta, src = BlobState{Type: cloud.BlobTypePage, Size: d.SizeBytes}, dc
		} else {
			sa, _, b, err := p.lookupBlob(st, srcRef)
			if err != nil {
				return azrules.CannotVerifyCopySource(srcRef.URL(), fmt.Sprintf("is not a blob of this subscription (%v)", err))
			}
			meta = BlobState{Type: b.Type, Size: b.Size, MD5: b.MD5, Digest: b.Digest}
			src = content{key: BlobKey(sa.Name, srcRef.Container, b.Name), size: b.Size}
		}
		if _, _, _, err := p.checkWrite(st, dest, overwrite); err != nil {
			return err
		}
		// Opened under the lock, so the copy reads one consistent version.
		var err error
		c, err = p.data.Open(ctx, src.key)
		return err
	})
	if err != nil {
		return nil, err
	}
	if c != nil {
		defer c.Close()
	}
	staged, digest, err := p.data.Copy(ctx, c, meta.Size)
	if err != nil {
		return nil, err
	}
	meta.Digest = orDefault(digest, meta.Digest)
	return p.commitBlob(ctx, dest, overwrite, staged, &meta)
}

// commitBlob records a written blob: it checks the destination again (it
// may have changed while the data was written), places the content and
// stores the metadata.
func (p *Provider) commitBlob(ctx context.Context, ref cloud.BlobRef, overwrite bool, staged Staged, meta *BlobState) (*cloud.Blob, error) {
	var out *cloud.Blob
	err := p.update(ctx, func(t *tx) error {
		sa, c, exists, err := p.checkWrite(t.st, ref, overwrite)
		if err != nil {
			return err
		}
		if err := p.data.Place(staged, BlobKey(sa.Name, ref.Container, ref.Name)); err != nil {
			return err
		}
		staged = nil
		b := *meta
		b.Name = ref.Name
		b.Created = p.stamp()
		c.Blobs[ref.Name] = &b
		t.log(put(exists), cloud.KindBlob, ref.URL())
		out = blobInfo(ref, sa, &b)
		return nil
	})
	if staged != nil {
		staged.Discard()
	}
	return out, err
}

// DeleteBlob implements cloud.Provider.
func (p *Provider) DeleteBlob(ctx context.Context, ref cloud.BlobRef) error {
	if err := p.load(p.loadBlob(ctx, ref)); err != nil {
		return err
	}
	find := func(st *State) error {
		_, _, _, err := p.lookupBlob(st, ref)
		return err
	}
	return p.updateFound(ctx, find, func(t *tx) error {
		sa, c, b, err := p.lookupBlob(t.st, ref)
		if err != nil {
			return err
		}
		delete(c.Blobs, ref.Name)
		t.remove(BlobKey(sa.Name, ref.Container, b.Name))
		t.log(cloud.OpDelete, cloud.KindBlob, ref.URL())
		return nil
	})
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
			remote = (&ResourceGroupState{Base: true}).normalize()
			st.ResourceGroups[remoteGroup] = remote
		}
		sa = (&StorageAccountState{StorageAccount: cloud.StorageAccount{Name: ref.Account, BlobEndpoint: cloud.DefaultBlobEndpoint(ref.Account)},
			Base: true}).normalize()
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
