package overlay

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/cloud/transfer"
	"github.com/imgflow/imgflow/internal/redact"
	"github.com/imgflow/imgflow/vhd"
)

const (
	pageSize = 512

	// probeContainer and probeBlob name a blob nobody has, to learn from
	// base's answer whether an account or container exists.
	probeContainer = "imgflow-overlay-probe"
	probeBlob      = ".imgflow-overlay-probe"
)

// blobEntry is a blob the overlay holds: properties only, no data.
type blobEntry struct {
	b       cloud.Blob
	deleted bool
	// data is the base blob holding this blob's content (a base blob
	// whose metadata the overlay changed, or the source of a copy); nil
	// means the content is unknown and reads as zeros.
	data *cloud.BlobRef
}

func blobKey(ref cloud.BlobRef) string {
	return strings.ToLower(ref.Account) + "/" + ref.Container + "/" + ref.Name
}

func containerKey(account, container string) string {
	return strings.ToLower(account) + "/" + container
}

func asCloudError(err error, ce **cloud.Error) bool { return errors.As(err, ce) }

// diskWriteRefused is the answer to a write through a managed disk URL.
func diskWriteRefused(ref cloud.BlobRef) error {
	ref.Name, _, _ = strings.Cut(ref.Name, "?")
	return azrules.DiskWriteRefused(ref)
}

// blob answers GetBlob, and says where the content is: in base at the
// returned ref, or unknown (nil: zeros).
func (p *Provider) blob(ctx context.Context, ref cloud.BlobRef) (*cloud.Blob, *cloud.BlobRef, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if azrules.IsDiskAccount(ref.Account) {
		clean := ref
		clean.Name, _, _ = strings.Cut(ref.Name, "?")
		if !isPending(ref.Account) {
			b, err := p.base.GetBlob(ctx, ref) // a real disk SAS: read only
			return b, &ref, err
		}
		d, err := p.pendingDisk(clean)
		if err != nil {
			return nil, nil, err
		}
		return &cloud.Blob{BlobRef: clean, URL: clean.URL(), Type: cloud.BlobTypePage, Size: d.SizeBytes}, nil, nil
	}
	p.mu.Lock()
	e := p.blobs[blobKey(ref)]
	var out cloud.Blob
	if e != nil && !e.deleted {
		out = clone(e.b)
	}
	inOverlay := p.containers[containerKey(ref.Account, ref.Container)]
	p.mu.Unlock()
	switch {
	case e != nil && e.deleted:
		return nil, nil, azrules.BlobNotFound(ref)
	case e != nil:
		out.BlobRef = cloud.BlobRef{Account: out.Account, Container: ref.Container, Name: ref.Name, Endpoint: ref.Endpoint}
		out.URL = out.BlobRef.URL()
		return &out, e.data, nil
	case inOverlay:
		return nil, nil, azrules.BlobNotFound(ref)
	}
	if a := p.overlayAccount(ref.Account); a != nil && a.fresh {
		return nil, nil, azrules.ContainerNotFound(ref)
	}
	b, err := p.base.GetBlob(ctx, ref)
	if err != nil {
		return nil, nil, err
	}
	return b, &ref, nil
}

// GetBlob implements cloud.Provider. The placeholder SAS URL of a disk the
// overlay granted is a page blob of the disk's size.
func (p *Provider) GetBlob(ctx context.Context, ref cloud.BlobRef) (*cloud.Blob, error) {
	b, _, err := p.blob(ctx, ref)
	return b, err
}

// EnsureContainer implements cloud.Provider: a container that neither the
// overlay nor base has is recorded. Base has it unless its answer for a
// blob in it is ContainerNotFound (or no such account).
func (p *Provider) EnsureContainer(ctx context.Context, account, container string) error {
	resource := cloud.DefaultBlobEndpoint(account) + "/" + container
	if azrules.IsDiskAccount(account) {
		return cloud.NotFound(cloud.CodeResourceNotFound, resource, "storage account %s not found", account)
	}
	p.wmu.Lock()
	defer p.wmu.Unlock()
	p.mu.Lock()
	has := p.containers[containerKey(account, container)]
	p.mu.Unlock()
	if has {
		return nil
	}
	if a := p.overlayAccount(account); a == nil || !a.fresh {
		_, err := p.base.GetBlob(ctx, cloud.BlobRef{Account: account, Container: container, Name: probeBlob})
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case cloud.HasCode(err, cloud.CodeContainerNotFound):
		case a == nil && cloud.IsNotFound(err) && !cloud.HasCode(err, cloud.CodeBlobNotFound):
			return cloud.NotFound(cloud.CodeResourceNotFound, resource, "storage account %s not found", account)
		default:
			return nil
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.containers[containerKey(account, container)] = true
	p.changes = append(p.changes, Change{Op: OpCreate, Kind: KindContainer, ID: resource})
	return nil
}

// writable checks that a blob can be written at ref and reports whether
// one exists there.
func (p *Provider) writable(ctx context.Context, ref cloud.BlobRef, overwrite bool) (bool, error) {
	if azrules.IsDiskAccount(ref.Account) {
		return false, diskWriteRefused(ref)
	}
	_, _, err := p.blob(ctx, ref)
	switch {
	case err == nil && !overwrite:
		return true, cloud.Conflict(cloud.CodeBlobAlreadyExists, ref.URL(), "The specified blob already exists.")
	case err == nil:
		return true, nil
	case cloud.HasCode(err, cloud.CodeBlobNotFound):
		return false, nil
	}
	return false, err
}

// putBlob records b at ref (content in base at data, or zeros).
func (p *Provider) putBlob(ref cloud.BlobRef, b cloud.Blob, data *cloud.BlobRef, ch Change) *cloud.Blob {
	b.BlobRef = cloud.BlobRef{Account: ref.Account, Container: ref.Container, Name: ref.Name, Endpoint: ref.Endpoint}
	b.URL = b.BlobRef.URL()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.blobs[blobKey(ref)] = &blobEntry{b: clone(b), data: data}
	p.changes = append(p.changes, ch)
	out := clone(b)
	return &out
}

// UploadPageBlob implements cloud.Provider: it records the blob's size
// and the sparse digest of the content it would have (read from the data
// ranges only, zeros elsewhere), so identical content is recognised
// later; no data is kept.
func (p *Provider) UploadPageBlob(ctx context.Context, ref cloud.BlobRef, src cloud.PageSource, overwrite bool) (*cloud.Blob, error) {
	if azrules.IsDiskAccount(ref.Account) {
		return nil, diskWriteRefused(ref)
	}
	if src.Size < 0 || src.Size%pageSize != 0 {
		return nil, azrules.InvalidParameter(ref.URL(), "The page blob size %d must be a multiple of 512 bytes.", src.Size)
	}
	digest, err := contentDigest(ctx, src, ref)
	if err != nil {
		return nil, err
	}
	p.wmu.Lock()
	defer p.wmu.Unlock()
	exists, err := p.writable(ctx, ref, overwrite)
	if err != nil {
		return nil, err
	}
	b := cloud.Blob{Type: cloud.BlobTypePage, Size: src.Size, Digest: digest}
	return p.putBlob(ref, b, nil, change(exists, KindBlob, ref.URL())), nil
}

// contentDigest is the sparse digest of a page blob uploaded from src:
// its data ranges (checked as the target does), zeros in between.
func contentDigest(ctx context.Context, src cloud.PageSource, ref cloud.BlobRef) (string, error) {
	ranges := src.Ranges
	if ranges == nil {
		ranges = []vhd.Range{{Offset: 0, Length: src.Size}}
	}
	for _, r := range ranges {
		if r.Offset < 0 || r.Length < 0 || r.Offset+r.Length > src.Size {
			return "", azrules.InvalidParameter(ref.URL(), "page range [%d, +%d) is outside the blob of %d bytes", r.Offset, r.Length, src.Size)
		}
		if r.Length > 0 && src.Reader == nil {
			return "", azrules.InvalidParameter(ref.URL(), "page source with data ranges has no reader")
		}
	}
	d, err := transfer.SparseDigest(ctx, src.Reader, src.Size, ranges)
	if err != nil {
		return "", fmt.Errorf("read %s source: %w", ref.URL(), err)
	}
	return d, nil
}

// CopyBlob implements cloud.Provider: it records dest with the source's
// type, size, digest and MD5. The source is read through the overlay: an overlay
// or base blob, or a disk the overlay granted (its placeholder URL).
func (p *Provider) CopyBlob(ctx context.Context, srcURL string, dest cloud.BlobRef, overwrite bool) (*cloud.Blob, error) {
	srcRef, err := cloud.ParseBlobURL(srcURL)
	if err != nil {
		return nil, azrules.InvalidParameter(redact.URL(srcURL), "invalid copy source: %v", err)
	}
	if azrules.IsDiskAccount(srcRef.Account) && !isPending(srcRef.Account) {
		if u, err := url.Parse(srcURL); err == nil && u.RawQuery != "" {
			srcRef.Name += "?" + u.RawQuery // a real disk SAS, as base reads it
		}
	}
	if azrules.IsDiskAccount(dest.Account) {
		return nil, diskWriteRefused(dest)
	}
	p.wmu.Lock()
	defer p.wmu.Unlock()
	src, data, err := p.blob(ctx, srcRef)
	if err != nil {
		if azrules.IsDiskAccount(srcRef.Account) || !cloud.IsNotFound(err) {
			return nil, err
		}
		return nil, cloud.NotFound(cloud.CodeCannotVerifyCopySource, srcRef.URL(),
			"The specified resource does not exist: copy source %s is not a blob of this subscription (%v).", srcRef.URL(), err)
	}
	exists, err := p.writable(ctx, dest, overwrite)
	if err != nil {
		return nil, err
	}
	b := cloud.Blob{Type: src.Type, Size: src.Size, MD5: src.MD5, Digest: src.Digest}
	return p.putBlob(dest, b, data, change(exists, KindBlob, dest.URL())), nil
}

// ReadBlob implements cloud.Provider. Content the overlay does not know
// (uploads, copies of disks) reads as zeros; a blob whose content is in
// base reads from base.
func (p *Provider) ReadBlob(ctx context.Context, ref cloud.BlobRef, offset, length int64) ([]byte, error) {
	b, data, err := p.blob(ctx, ref)
	if err != nil {
		return nil, err
	}
	if data != nil {
		return p.base.ReadBlob(ctx, *data, offset, length)
	}
	resource := b.URL
	switch {
	case offset < 0 || length < 0:
		return nil, azrules.InvalidParameter(resource, "invalid range: offset %d, length %d", offset, length)
	case length == 0:
		return []byte{}, nil
	case offset >= b.Size:
		return nil, &cloud.Error{StatusCode: http.StatusRequestedRangeNotSatisfiable, Code: cloud.CodeInvalidRange,
			Resource: resource, Message: "The range specified is invalid for the current size of the resource."}
	}
	return make([]byte, min(length, b.Size-offset)), nil
}

// SetBlobMetadata implements cloud.Provider: the overlay's copy of the
// blob (a base blob's properties imported first) gets the metadata.
func (p *Provider) SetBlobMetadata(ctx context.Context, ref cloud.BlobRef, metadata map[string]string) error {
	if azrules.IsDiskAccount(ref.Account) {
		return diskWriteRefused(ref)
	}
	p.wmu.Lock()
	defer p.wmu.Unlock()
	b, data, err := p.blob(ctx, ref)
	if err != nil {
		return err
	}
	b.Metadata = metadata
	p.putBlob(ref, *b, data, Change{Op: OpUpdate, Kind: KindBlob, ID: ref.URL()})
	return nil
}

// DeleteBlob implements cloud.Provider.
func (p *Provider) DeleteBlob(ctx context.Context, ref cloud.BlobRef) error {
	if azrules.IsDiskAccount(ref.Account) {
		return diskWriteRefused(ref)
	}
	p.wmu.Lock()
	defer p.wmu.Unlock()
	if _, _, err := p.blob(ctx, ref); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.blobs[blobKey(ref)] = &blobEntry{deleted: true}
	p.changes = append(p.changes, Change{Op: OpDelete, Kind: KindBlob, ID: ref.URL()})
	return nil
}

// vhdSize checks that uri names a page blob (overlay or base) holding a
// fixed VHD whose virtual size Azure accepts, and returns that size and
// the blob's ref. A blob whose content the overlay does not know is
// assumed to be a fixed VHD of its size.
func (p *Provider) vhdSize(ctx context.Context, uri, resource string) (int64, cloud.BlobRef, error) {
	ref, err := cloud.ParseBlobURL(uri)
	if err != nil {
		return 0, ref, azrules.InvalidParameter(resource, "%v", err)
	}
	if azrules.IsDiskAccount(ref.Account) {
		return 0, ref, azrules.AccountNotFound(ref.Account, ref.URL())
	}
	b, data, err := p.blob(ctx, ref)
	if err != nil {
		return 0, ref, err
	}
	var readFooter func() ([]byte, error)
	if data != nil { // else the content is unknown: taken as a fixed VHD
		readFooter = func() ([]byte, error) {
			return p.base.ReadBlob(ctx, *data, b.Size-vhd.FooterSize, vhd.FooterSize)
		}
	}
	size, err := azrules.CheckVHDBlob(resource, ref, b.Type, b.Size, readFooter)
	return size, ref, err
}
