package azure

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/pageblob"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/cloud/transfer"
	"github.com/imgflow/imgflow/internal/redact"
	"github.com/imgflow/imgflow/vhd"
)

const (
	pageSize = 512
	// chunkSize is Azure's maximum Put Page (and Put Page From URL) size,
	// and the unit in which all-zero data is skipped.
	chunkSize = 4 << 20
	// cleanupTimeout bounds best-effort deletes after a failure.
	cleanupTimeout = time.Minute
)

// blobEndpoint is the blob service URL of an account: Options.BlobEndpoint,
// else the cloud's (Options.Cloud).
func (p *Provider) blobEndpoint(account string) string {
	if p.opts.BlobEndpoint != nil {
		if ep := p.opts.BlobEndpoint(account); ep != "" {
			return strings.TrimRight(ep, "/")
		}
	}
	return p.opts.Cloud.BlobEndpoint(account)
}

// resolve fills the endpoint of a blob reference.
func (p *Provider) resolve(ref cloud.BlobRef) cloud.BlobRef {
	if ref.Endpoint == "" {
		if ep := p.blobEndpoint(ref.Account); ep != cloud.DefaultBlobEndpoint(ref.Account) {
			ref.Endpoint = ep
		}
	}
	return ref
}

func (p *Provider) blobOptions() *azblob.ClientOptions {
	if p.opts.Blob != nil {
		o := *p.opts.Blob
		return &o
	}
	return &azblob.ClientOptions{}
}

// containerClient is a client for the container, authenticated as
// blobCredential chose for the account.
func (p *Provider) containerClient(ctx context.Context, account, endpoint, name string) (*container.Client, error) {
	if endpoint == "" {
		endpoint = p.blobEndpoint(account)
	}
	u := strings.TrimRight(endpoint, "/") + "/" + url.PathEscape(name)
	opts := (*container.ClientOptions)(p.blobOptions())
	cred, err := p.blobCredential(ctx, account, endpoint)
	if err != nil {
		return nil, err
	}
	if cred != nil {
		return container.NewClientWithSharedKeyCredential(u, cred, opts)
	}
	return container.NewClient(u, p.cred, opts)
}

// pageClient is a client for the blob. A name carrying a query ("abcd?sv=…&sig=…",
// a managed disk's SAS) is read through that SAS.
func (p *Provider) pageClient(ctx context.Context, ref cloud.BlobRef) (*pageblob.Client, error) {
	if name, query, ok := strings.Cut(ref.Name, "?"); ok {
		ep := ref.Endpoint
		if ep == "" {
			ep = p.blobEndpoint(ref.Account)
		}
		u := strings.TrimRight(ep, "/") + "/" + url.PathEscape(ref.Container) + "/" + escapeBlobName(name) + "?" + query
		return pageblob.NewClientWithNoCredential(u, (*pageblob.ClientOptions)(p.blobOptions()))
	}
	cc, err := p.containerClient(ctx, ref.Account, ref.Endpoint, ref.Container)
	if err != nil {
		return nil, err
	}
	return cc.NewPageBlobClient(ref.Name), nil
}

// escapeBlobName escapes each "/"-separated part of a blob name.
func escapeBlobName(name string) string {
	parts := strings.Split(name, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

// shown is a blob's URL as errors and logs print it: never a SAS.
func shown(ref cloud.BlobRef) string { return redact.URL(ref.URL()) }

// GetBlob implements cloud.Provider.
func (p *Provider) GetBlob(ctx context.Context, ref cloud.BlobRef) (*cloud.Blob, error) {
	full := p.resolve(ref)
	pc, err := p.pageClient(ctx, full)
	if err != nil {
		return nil, opError("get blob", shown(full), err)
	}
	props, err := pc.GetProperties(ctx, nil)
	if err != nil {
		return nil, opError("get blob", shown(full), blobErr(err, shown(full)))
	}
	if metaValue(props.Metadata, IncompleteMetadataKey) != "" {
		return nil, opError("get blob", shown(full), incompleteErr(shown(full)))
	}
	return blobOut(ref, full, props), nil
}

// DigestMetadataKey is the blob metadata holding the content's sparse
// digest (transfer.SparseDigest), written by imgflow's uploads and copies.
// It is the target's business: GetBlob returns it as Blob.Digest, not in
// Blob.Metadata, and SetBlobMetadata keeps it.
//
// Like Content-MD5, it describes the content as imgflow wrote it: a tool
// that later changes pages in place (Put Page on the existing blob)
// leaves it stale. Tools that replace the blob (Put Blob, Copy Blob)
// replace the metadata too.
const DigestMetadataKey = "imgflowdigest"

func blobOut(ref, full cloud.BlobRef, props blob.GetPropertiesResponse) *cloud.Blob {
	b := &cloud.Blob{BlobRef: ref, URL: shown(full), Type: strOf(props.BlobType), Size: deref(props.ContentLength)}
	if len(props.ContentMD5) > 0 {
		b.MD5 = hex.EncodeToString(props.ContentMD5)
	}
	for k, v := range props.Metadata {
		// Metadata names are case-insensitive; HTTP canonicalises them.
		k = strings.ToLower(k)
		if k == DigestMetadataKey {
			b.Digest = deref(v)
			continue
		}
		if b.Metadata == nil {
			b.Metadata = map[string]string{}
		}
		b.Metadata[k] = deref(v)
	}
	return b
}

// metadataDigest is the digest a blob's metadata holds.
func metadataDigest(md map[string]*string) string { return metaValue(md, DigestMetadataKey) }

// SetBlobMetadata implements cloud.Provider: the blob's user metadata is
// replaced; its digest (DigestMetadataKey) is kept, as the content did not
// change. The blob must not change between the read and the write.
func (p *Provider) SetBlobMetadata(ctx context.Context, ref cloud.BlobRef, metadata map[string]string) error {
	full := p.resolve(ref)
	u := shown(full)
	pc, err := p.pageClient(ctx, full)
	if err != nil {
		return opError("set blob metadata", u, err)
	}
	props, err := pc.GetProperties(ctx, nil)
	if err != nil {
		return opError("set blob metadata", u, blobErr(err, u))
	}
	md := make(map[string]*string, len(metadata)+1)
	for k, v := range metadata {
		if !strings.EqualFold(k, DigestMetadataKey) {
			md[k] = to(v)
		}
	}
	if d := metadataDigest(props.Metadata); d != "" {
		md[DigestMetadataKey] = to(d)
	}
	_, err = pc.SetMetadata(ctx, md, &blob.SetMetadataOptions{AccessConditions: &blob.AccessConditions{
		ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: props.ETag}}})
	return opError("set blob metadata", u, blobErr(err, u))
}

// blobErr converts a storage error; a 404 without a code (HEAD answers
// carry no body) is BlobNotFound.
func blobErr(err error, resource string) error {
	err = azErr(err, resource)
	var ce *cloud.Error
	if errors.As(err, &ce) && ce.StatusCode == http.StatusNotFound && (ce.Code == "" || ce.Code == "NotFound") {
		msg := ce.Message
		*ce = *azrules.BlobURLNotFound(ce.Resource, "")
		if msg != "" {
			ce.Message = msg
		}
	}
	return err
}

// EnsureContainer implements cloud.Provider.
func (p *Provider) EnsureContainer(ctx context.Context, account, name string) error {
	ep := p.blobEndpoint(account)
	shown := ep + "/" + name
	cc, err := p.containerClient(ctx, account, ep, name)
	if err != nil {
		return opError("create container", shown, err)
	}
	if _, err := cc.Create(ctx, nil); err != nil && !bloberror.HasCode(err, bloberror.ContainerAlreadyExists) {
		return opError("create container", shown, azErr(err, shown))
	}
	return nil
}

// ReadBlob implements cloud.Provider: a ranged download, clamped to the
// blob's end; a read starting past it is InvalidRange (416).
func (p *Provider) ReadBlob(ctx context.Context, ref cloud.BlobRef, offset, length int64) ([]byte, error) {
	full := p.resolve(ref)
	u := shown(full)
	if offset < 0 || length < 0 {
		return nil, opError("read blob", u, azrules.InvalidParameter(u, "invalid range: offset %d, length %d", offset, length))
	}
	pc, err := p.pageClient(ctx, full)
	if err != nil {
		return nil, opError("read blob", u, err)
	}
	if length == 0 {
		if _, err := pc.GetProperties(ctx, nil); err != nil {
			return nil, opError("read blob", u, blobErr(err, u))
		}
		return []byte{}, nil
	}
	res, err := pc.DownloadStream(ctx, &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: offset, Count: length}})
	if err != nil {
		return nil, opError("read blob", u, blobErr(err, u))
	}
	body := res.NewRetryReader(ctx, nil)
	defer body.Close()
	data, err := io.ReadAll(io.LimitReader(body, length))
	if err != nil {
		return nil, opError("read blob", u, redact.Error(err))
	}
	if len(data) == 0 {
		// Azure answers a range past the end with 416; emulators may
		// answer it empty.
		props, err := pc.GetProperties(ctx, nil)
		if err != nil {
			return nil, opError("read blob", u, blobErr(err, u))
		}
		if offset >= deref(props.ContentLength) {
			return nil, opError("read blob", u, azrules.InvalidRange(u))
		}
	}
	return data, nil
}

// DeleteBlob implements cloud.Provider (snapshots included).
func (p *Provider) DeleteBlob(ctx context.Context, ref cloud.BlobRef) error {
	full := p.resolve(ref)
	pc, err := p.pageClient(ctx, full)
	if err != nil {
		return opError("delete blob", shown(full), err)
	}
	// An upload killed while it wrote leaves its lease (resume.go) for up
	// to writeLeaseSeconds: a resumed run deleting what it staged waits
	// it out, as a resumed upload does.
	deadline := time.Now().Add((writeLeaseSeconds + 5) * time.Second)
	for waited := false; ; waited = true {
		_, err = pc.Delete(ctx, &blob.DeleteOptions{DeleteSnapshots: to(blob.DeleteSnapshotsOptionTypeInclude)})
		if !leaseHeld(err) || time.Now().After(deadline) {
			break
		}
		if !waited {
			p.logf("%s: a lease is on the blob; waiting for it to end to delete the blob (the lease of a killed upload ends within %d s)", shown(full), writeLeaseSeconds)
		}
		select {
		case <-ctx.Done():
			return opError("delete blob", shown(full), ctx.Err())
		case <-time.After(time.Second):
		}
	}
	return opError("delete blob", shown(full), blobErr(err, shown(full)))
}

// UploadPageBlob implements cloud.Provider: the page blob is created with
// its full size, then the data ranges move through the transfer (see
// transfer.go): only non-zero chunks are sent, several at once, each
// retried. The sparse digest is stored in the blob's metadata and, with
// Options.ContentMD5, the MD5 of the whole content as Content-MD5.
// The result is verified (size, the pages written, the digest).
//
// Uploads resume (resume.go): the blob carries the digest it is meant to
// hold until it is complete, and an upload of the same content into a
// blob an interrupted one left sends only the pieces it lacks. A failed
// upload therefore keeps its blob; GetBlob reports it as not found.
func (p *Provider) UploadPageBlob(ctx context.Context, ref cloud.BlobRef, src cloud.PageSource, overwrite bool) (*cloud.Blob, error) {
	full := p.resolve(ref)
	u := shown(full)
	fail := func(err error) (*cloud.Blob, error) { return nil, opError("upload page blob", u, err) }
	if err := azrules.CheckPageBlobSize(u, src.Size); err != nil {
		return fail(err)
	}
	ranges, err := pageRanges(src, u)
	if err != nil {
		return fail(err)
	}
	// The digest comes first: the blob records it from its creation.
	pending, err := transfer.SparseDigest(ctx, src.Reader, src.Size, append([]vhd.Range{}, ranges...))
	if err != nil {
		return fail(permanentError{fmt.Errorf("digest of the source: %w", err)})
	}
	pc, err := p.pageClient(ctx, full)
	if err != nil {
		return fail(err)
	}
	w, err := p.claim(ctx, pc, u, src.Size, pending, overwrite)
	if err != nil {
		return fail(err)
	}
	if w.have != nil {
		p.logf("%s: resuming an interrupted upload (%d bytes of pages already there)", u, rangeBytes(w.have))
	}
	res, err := p.transfer(w.ctx, transferSpec{
		op: "upload " + u, ranges: ranges, size: src.Size, md5: p.opts.ContentMD5, have: w.have,
		fetch: func(_ context.Context, off int64, buf []byte) error {
			if err := readFull(src.Reader, buf, off); err != nil {
				return permanentError{err}
			}
			return nil
		},
		write: func(ctx context.Context, off int64, data []byte) error {
			return uploadPages(ctx, pc, off, data, w.conds())
		},
	})
	if err == nil {
		err = p.complete(ctx, w, res)
	}
	if err != nil {
		w.abandon(ctx)
		return fail(blobErr(err, u))
	}
	props, err := pc.GetProperties(ctx, nil)
	if err == nil && deref(props.ContentLength) != src.Size {
		err = &cloud.Error{StatusCode: http.StatusInternalServerError, Code: CodeCopyFailed, Resource: u,
			Message: fmt.Sprintf("the blob has %d bytes after the upload, the source %d", deref(props.ContentLength), src.Size)}
	}
	if err != nil {
		return fail(blobErr(err, u))
	}
	return blobOut(ref, full, props), nil
}

// finish records what a transfer into pc learnt (Content-MD5, digest)
// and checks the pages it wrote; ac are the writes' access conditions
// (an upload's lease), or nil. Setting the metadata drops an upload's
// incomplete marker.
func (p *Provider) finish(ctx context.Context, pc *pageblob.Client, u string, res *transferResult, ac *blob.AccessConditions) error {
	if err := p.verifyPages(ctx, pc, u, res); err != nil {
		return err
	}
	if res.md5 != nil {
		if err := setMD5(ctx, pc, res.md5, ac); err != nil {
			return err
		}
	}
	_, err := pc.SetMetadata(ctx, map[string]*string{DigestMetadataKey: to(res.digest)}, &blob.SetMetadataOptions{AccessConditions: ac})
	return err
}

// createPageBlob creates (or, with overwrite, replaces) an empty page blob
// of size bytes; without overwrite an existing blob is BlobAlreadyExists.
func (p *Provider) createPageBlob(ctx context.Context, pc *pageblob.Client, u string, size int64, overwrite bool) error {
	opts := &pageblob.CreateOptions{}
	if !overwrite {
		if _, err := pc.GetProperties(ctx, nil); err == nil {
			return alreadyExists(u)
		} else if err := blobErr(err, u); !cloud.HasCode(err, cloud.CodeBlobNotFound) {
			return err
		}
		opts.AccessConditions = &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: to(azcore.ETagAny)}}
	}
	if _, err := pc.Create(ctx, size, opts); err != nil {
		if !overwrite && (bloberror.HasCode(err, bloberror.BlobAlreadyExists, bloberror.ConditionNotMet) || isStatus(err, http.StatusPreconditionFailed)) {
			return alreadyExists(u)
		}
		return blobErr(err, u)
	}
	return nil
}

func alreadyExists(u string) error {
	return azrules.BlobAlreadyExists(u, "")
}

// uploadPages writes one chunk. There is no per-request MD5: HTTPS
// already protects the bytes in transit, and hashing every chunk costs
// CPU the transfer needs (it measured 10 % of the throughput against
// Azurite on two cores, BENCHMARKS.md).
func uploadPages(ctx context.Context, pc *pageblob.Client, off int64, data []byte, ac *blob.AccessConditions) error {
	_, err := pc.UploadPages(ctx, streaming.NopCloser(bytes.NewReader(data)),
		blob.HTTPRange{Offset: off, Count: int64(len(data))}, &pageblob.UploadPagesOptions{AccessConditions: ac})
	return err
}

func setMD5(ctx context.Context, pc *pageblob.Client, sum []byte, ac *blob.AccessConditions) error {
	_, err := pc.SetHTTPHeaders(ctx, blob.HTTPHeaders{BlobContentMD5: sum, BlobContentType: to("application/octet-stream")},
		&blob.SetHTTPHeadersOptions{AccessConditions: ac})
	return err
}

// deleteQuietly removes a blob left by a failed transfer; a failure is
// only logged (the transfer's error is what matters).
func (p *Provider) deleteQuietly(ctx context.Context, pc *pageblob.Client, u string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	if _, err := pc.Delete(ctx, nil); err != nil && !bloberror.HasCode(err, bloberror.BlobNotFound) {
		p.logf("delete incomplete blob %s: %v", u, redact.Error(err))
	}
}

// pageRanges returns the source's data ranges (PageSource.DataRanges)
// widened to whole 512-byte pages, as Put Page writes them, and merged.
func pageRanges(src cloud.PageSource, u string) ([]vhd.Range, error) {
	rs, err := src.DataRanges()
	if err != nil {
		return nil, azrules.InvalidParameter(u, "%s", err)
	}
	for i, r := range rs {
		start := r.Offset / pageSize * pageSize
		end := (r.Offset + r.Length + pageSize - 1) / pageSize * pageSize
		rs[i] = vhd.Range{Offset: start, Length: end - start}
	}
	return vhd.MergeRanges(rs), nil
}

// readFull reads len(b) bytes at off; a source ending early is an error.
func readFull(r io.ReaderAt, b []byte, off int64) error {
	n, err := r.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("read source at %d: %w", off, err)
}
