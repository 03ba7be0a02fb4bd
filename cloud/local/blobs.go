package local

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/internal/redact"
)

// Blob operations. Metadata lives in the state; data in one sparse file
// per blob. Transfers write a temp file outside the lock and rename it
// into place under the lock, so a multi-GiB upload does not block other
// calls and a failed one leaves nothing behind.

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
	if azrules.IsDiskAccount(ref.Account) {
		return diskWriteRefused(ref)
	}
	return p.update(ctx, func(st *State) error {
		_, _, b, err := p.lookupBlob(st, ref)
		if err != nil {
			return err
		}
		b.Metadata = maps.Clone(metadata)
		return nil
	})
}

// EnsureContainer implements cloud.Provider.
func (p *Provider) EnsureContainer(ctx context.Context, account, container string) error {
	return p.update(ctx, func(st *State) error {
		_, sa := st.findStorageAccount(account)
		if sa == nil {
			return azrules.AccountNotFound(account, cloud.DefaultBlobEndpoint(account)+"/"+container)
		}
		if _, ok := sa.Containers[container]; ok {
			return nil
		}
		if err := os.MkdirAll(filepath.Dir(p.blobFile(sa.Name, container, "x")), 0o755); err != nil {
			return err
		}
		sa.Containers[container] = &ContainerState{Name: container, Created: p.stamp(), Blobs: map[string]*BlobState{}}
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
	var f *os.File
	var n int64
	resource := ref.URL()
	err := p.view(ctx, func(st *State) error {
		var src content
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
			src = content{path: p.blobFile(sa.Name, ref.Container, b.Name), size: b.Size}
		}
		if offset < 0 || length < 0 {
			return azrules.InvalidParameter(resource, "invalid range: offset %d, length %d", offset, length)
		}
		if length == 0 {
			return nil
		}
		if offset >= src.size {
			return invalidRange(resource)
		}
		n = min(length, src.size-offset)
		// Opened under the lock: the open file keeps this content even
		// if the blob is overwritten while we read.
		var err error
		f, err = os.Open(src.path)
		return err
	})
	if err != nil {
		return nil, err
	}
	buf := make([]byte, n)
	if f == nil {
		return buf, nil // an empty read opens nothing
	}
	defer f.Close()
	if err := readFull(f, buf, offset); err != nil {
		return nil, fmt.Errorf("read %s: %w", resource, err)
	}
	return buf, nil
}

// checkWrite checks that a blob can be written at ref (account, container,
// overwrite rule) and returns the account.
func (p *Provider) checkWrite(st *State, ref cloud.BlobRef, overwrite bool) (*StorageAccountState, *ContainerState, error) {
	sa, c, err := p.lookupContainer(st, ref)
	if err != nil {
		return nil, nil, err
	}
	if _, exists := c.Blobs[ref.Name]; exists && !overwrite {
		return nil, nil, cloud.Conflict(cloud.CodeBlobAlreadyExists, ref.URL(), "The specified blob already exists.")
	}
	return sa, c, nil
}

// UploadPageBlob implements cloud.Provider. Only the data ranges are
// read, and only the non-zero span of each chunk is written, so the file
// stays as sparse as the source. The blob gets the content's sparse
// digest (no Content-MD5: no service computes one here).
func (p *Provider) UploadPageBlob(ctx context.Context, ref cloud.BlobRef, src cloud.PageSource, overwrite bool) (*cloud.Blob, error) {
	if azrules.IsDiskAccount(ref.Account) {
		return nil, diskWriteRefused(ref)
	}
	if src.Size < 0 || src.Size%pageSize != 0 {
		return nil, azrules.InvalidParameter(ref.URL(), "The page blob size %d must be a multiple of 512 bytes.", src.Size)
	}
	ranges, err := src.DataRanges(ref.URL())
	if err != nil {
		return nil, err
	}
	if err := p.view(ctx, func(st *State) error {
		_, _, err := p.checkWrite(st, ref, overwrite)
		return err
	}); err != nil {
		return nil, err
	}
	tmp, digest, err := p.writeTemp(ctx, src.Size, func(dst *os.File) (string, error) {
		return copySparse(ctx, dst, src.Reader, ranges, src.Size)
	})
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp) // gone once renamed
	return p.commitBlob(ctx, ref, overwrite, tmp, &BlobState{Type: cloud.BlobTypePage, Size: src.Size, Digest: digest})
}

// CopyBlob implements cloud.Provider for sources in this subscription
// (the SAS of srcURL is ignored). The copy keeps the source's type, size,
// MD5 (if any) and holes; its digest is computed on the way. The SAS URL
// of a granted managed disk is a source too: its SAS is checked, and the
// copy is a page blob of the disk's content.
func (p *Provider) CopyBlob(ctx context.Context, srcURL string, dest cloud.BlobRef, overwrite bool) (*cloud.Blob, error) {
	srcRef, err := cloud.ParseBlobURL(srcURL)
	if err != nil {
		return nil, azrules.InvalidParameter(redact.URL(srcURL), "invalid copy source: %v", err)
	}
	if azrules.IsDiskAccount(srcRef.Account) {
		u, err := url.Parse(srcURL)
		if err != nil {
			return nil, azrules.InvalidParameter(redact.URL(srcURL), "invalid copy source")
		}
		return p.copyFromDisk(ctx, srcRef, u.Query(), dest, overwrite)
	}
	var meta BlobState
	var f *os.File
	err = p.view(ctx, func(st *State) error {
		sa, _, b, err := p.lookupBlob(st, srcRef)
		if err != nil {
			return cloud.NotFound(cloud.CodeCannotVerifyCopySource, srcRef.URL(),
				"The specified resource does not exist: copy source %s is not a blob of this subscription (%v).", srcRef.URL(), err)
		}
		if _, _, err := p.checkWrite(st, dest, overwrite); err != nil {
			return err
		}
		meta = BlobState{Type: b.Type, Size: b.Size, MD5: b.MD5}
		// Opened under the lock, so the copy reads one consistent version.
		f, err = os.Open(p.blobFile(sa.Name, srcRef.Container, b.Name))
		return err
	})
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tmp, digest, err := p.writeTemp(ctx, meta.Size, func(dst *os.File) (string, error) {
		return copySparse(ctx, dst, f, dataRanges(f, meta.Size), meta.Size)
	})
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp)
	meta.Digest = digest
	return p.commitBlob(ctx, dest, overwrite, tmp, &meta)
}

// copyFromDisk is CopyBlob from a managed disk's SAS URL (srcRef without
// the SAS, q its query).
func (p *Provider) copyFromDisk(ctx context.Context, srcRef cloud.BlobRef, q url.Values, dest cloud.BlobRef, overwrite bool) (*cloud.Blob, error) {
	var meta BlobState
	var f *os.File
	err := p.view(ctx, func(st *State) error {
		d, src, err := p.grantedDisk(st, srcRef, q)
		if err != nil {
			return err
		}
		if _, _, err := p.checkWrite(st, dest, overwrite); err != nil {
			return err
		}
		meta = BlobState{Type: cloud.BlobTypePage, Size: d.SizeBytes}
		// Opened under the lock, so the copy reads one consistent version.
		f, err = os.Open(src.path)
		return err
	})
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tmp, digest, err := p.writeTemp(ctx, meta.Size, func(dst *os.File) (string, error) {
		return copySparse(ctx, dst, f, dataRanges(f, meta.Size), meta.Size)
	})
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp)
	meta.Digest = digest
	return p.commitBlob(ctx, dest, overwrite, tmp, &meta)
}

// writeTemp creates a temp file of the given size in the blob directory,
// lets fill write it, and syncs it (not for a memory provider, whose data
// goes with the process); it returns the file name and fill's result. The
// temp file is removed on failure.
func (p *Provider) writeTemp(ctx context.Context, size int64, fill func(*os.File) (string, error)) (string, string, error) {
	if p.readOnly {
		return "", "", errReadOnly
	}
	f, err := os.CreateTemp(filepath.Join(p.blobDir, tmpDirName), "blob-*")
	if err != nil {
		return "", "", err
	}
	name := f.Name()
	sum, err := func() (string, error) {
		if err := f.Truncate(size); err != nil {
			return "", err
		}
		sum, err := fill(f)
		if err != nil || p.tempDir != "" {
			return sum, err
		}
		return sum, f.Sync()
	}()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return "", "", err
	}
	return name, sum, nil
}

// commitBlob records a written blob: it checks the destination again (it
// may have changed while the data was written), moves tmp into place
// and stores the metadata.
func (p *Provider) commitBlob(ctx context.Context, ref cloud.BlobRef, overwrite bool, tmp string, meta *BlobState) (*cloud.Blob, error) {
	var out *cloud.Blob
	err := p.update(ctx, func(st *State) error {
		sa, c, err := p.checkWrite(st, ref, overwrite)
		if err != nil {
			return err
		}
		dst := p.blobFile(sa.Name, ref.Container, ref.Name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.Rename(tmp, dst); err != nil {
			return err
		}
		b := *meta
		b.Name = ref.Name
		b.Created = p.stamp()
		c.Blobs[ref.Name] = &b
		out = blobInfo(ref, sa, &b)
		return nil
	})
	return out, err
}

// DeleteBlob implements cloud.Provider.
func (p *Provider) DeleteBlob(ctx context.Context, ref cloud.BlobRef) error {
	return p.updateRemoving(ctx, func(st *State) (string, error) {
		sa, c, b, err := p.lookupBlob(st, ref)
		if err != nil {
			return "", err
		}
		delete(c.Blobs, ref.Name)
		return p.blobFile(sa.Name, ref.Container, b.Name), nil
	})
}
