package ensure

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"strings"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/transfer"
	"github.com/imgflow/imgflow/internal/redact"
)

// EnsurePageBlob uploads src to the page blob ref unless the blob already
// holds the same content (same size and sparse digest, or Content-MD5 for
// a blob without a digest). An existing blob with other content is an
// error unless overwrite, and is then replaced (cloud.Updated). The container is
// created when missing. A blob written by someone else between the check
// and the upload is no conflict when its content is the same.
func EnsurePageBlob(ctx context.Context, p cloud.Provider, ref cloud.BlobRef, src cloud.PageSource, overwrite bool) (*cloud.Blob, cloud.Outcome, error) {
	existing, err := p.GetBlob(ctx, ref)
	switch {
	case err == nil:
		same, err := sameContent(ctx, existing, src)
		if err != nil {
			return nil, "", err
		}
		if same {
			return existing, cloud.Exists, nil
		}
		if !overwrite {
			return nil, "", blobConflict(ref)
		}
	case !cloud.IsNotFound(err):
		return nil, "", err
	}
	if err := p.EnsureContainer(ctx, ref.Account, ref.Container); err != nil {
		return nil, "", err
	}
	b, err := p.UploadPageBlob(ctx, ref, src, overwrite)
	if cloud.HasCode(err, cloud.CodeBlobAlreadyExists) {
		// Written since we looked (a parallel branch or workflow
		// uploading the same file): the same content is no conflict.
		if now, gerr := p.GetBlob(ctx, ref); gerr == nil {
			if same, _ := sameContent(ctx, now, src); same {
				return now, cloud.Exists, nil
			}
		}
	}
	if err != nil {
		return nil, "", fmt.Errorf("upload to %s: %w", ref.URL(), err)
	}
	return b, createdOrUpdated(existing), nil
}

// EnsureBlobCopy copies the blob at srcURL (src is its reference, srcURL
// may carry a SAS) to dest unless dest already holds the same content as
// the source (same size and digest, or Content-MD5 where either has no
// digest). An existing dest with other content is an error unless
// overwrite. The container is created when missing.
func EnsureBlobCopy(ctx context.Context, p cloud.Provider, src cloud.BlobRef, srcURL string, dest cloud.BlobRef, overwrite bool) (*cloud.Blob, cloud.Outcome, error) {
	from, err := p.GetBlob(ctx, src)
	if err != nil {
		return nil, "", fmt.Errorf("source %s: %w", redact.URL(srcURL), err)
	}
	existing, err := p.GetBlob(ctx, dest)
	switch {
	case err == nil:
		if sameBlob(existing, from) {
			return existing, cloud.Exists, nil
		}
		if !overwrite {
			return nil, "", blobConflict(dest)
		}
	case !cloud.IsNotFound(err):
		return nil, "", fmt.Errorf("copy to %s: %w", dest.URL(), err)
	}
	if err := p.EnsureContainer(ctx, dest.Account, dest.Container); err != nil {
		return nil, "", fmt.Errorf("copy to %s: %w", dest.URL(), err)
	}
	b, err := p.CopyBlob(ctx, srcURL, dest, overwrite)
	if cloud.HasCode(err, cloud.CodeBlobAlreadyExists) {
		// Written since we looked: the same content is no conflict.
		if now, gerr := p.GetBlob(ctx, dest); gerr == nil && sameBlob(now, from) {
			return now, cloud.Exists, nil
		}
	}
	if err != nil {
		return nil, "", fmt.Errorf("copy %s to %s: %w", redact.URL(srcURL), dest.URL(), err)
	}
	return b, createdOrUpdated(existing), nil
}

func blobConflict(ref cloud.BlobRef) error {
	return fmt.Errorf("%s already exists with other content: pass overwrite=True to replace it, or write to another name", ref.URL())
}

func createdOrUpdated(existing *cloud.Blob) cloud.Outcome {
	if existing != nil {
		return cloud.Updated
	}
	return cloud.Created
}

// sameContent tells whether a stored blob holds src's content: same size
// and the same sparse digest, src's computed from its data ranges so holes
// are never read. A blob without a digest but with a Content-MD5 (written
// by another tool or an older imgflow) is compared by src's MD5, which
// reads every byte.
func sameContent(ctx context.Context, b *cloud.Blob, src cloud.PageSource) (bool, error) {
	if b.Size != src.Size {
		return false, nil
	}
	switch {
	case b.Digest != "":
		d, err := transfer.SparseDigest(ctx, src.Reader, src.Size, src.Ranges)
		if err != nil {
			return false, err
		}
		return transfer.SameDigest(d, b.Digest), nil
	case b.MD5 != "":
		h := md5.New()
		if _, err := io.Copy(h, io.NewSectionReader(src.Reader, 0, src.Size)); err != nil {
			return false, err
		}
		return strings.EqualFold(hex.EncodeToString(h.Sum(nil)), b.MD5), nil
	}
	return false, nil
}

// sameBlob tells whether two blobs hold the same content: same size and
// digest or, where either has no digest, the same Content-MD5.
func sameBlob(a, b *cloud.Blob) bool {
	switch {
	case a.Size != b.Size:
		return false
	case a.Digest != "" && b.Digest != "":
		return transfer.SameDigest(a.Digest, b.Digest)
	}
	return a.MD5 != "" && strings.EqualFold(a.MD5, b.MD5)
}
