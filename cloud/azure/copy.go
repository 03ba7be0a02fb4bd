package azure

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/pageblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/cloud/transfer"
	"github.com/imgflow/imgflow/internal/redact"
	"github.com/imgflow/imgflow/progress"
	"github.com/imgflow/imgflow/vhd"
)

// copySASLifetime is how long a SAS the provider signs for a server-side
// copy source stays valid: long enough for a slow multi-GiB copy.
const copySASLifetime = 48 * time.Hour

// copyJob is one CopyBlob call.
type copyJob struct {
	srcURL    string // with its SAS, if any: never printed
	shown     string // srcURL redacted
	srcRef    cloud.BlobRef
	src       *pageblob.Client
	size      int64
	srcMD5    []byte
	srcDigest string // the source's sparse digest, when it has one
	page      bool
	dest      cloud.BlobRef // resolved
	dst       *pageblob.Client
	overwrite bool
	created   bool // the destination was created by this copy
}

// CopyBlob implements cloud.Provider. The source may be any blob URL with
// a SAS (a managed disk's md-….blob.core.windows.net or
// ….blob.storage.azure.net access URL) or a blob of an account this
// provider can read. Data moves as Options.CopyMode says (default: a
// server-side copy with status polling; Put Page From URL by ranges where
// the service does not do server-side copies; a streamed download/upload
// of the source's page ranges where the service cannot read the source
// (CannotVerifyCopySource) or Put Page From URL is not implemented, as
// on Azurite). The destination gets the source's sparse digest when the
// source has one (a server-side copy carries the source's metadata), or
// the digest computed on the way when the data streams through imgflow.
// The result is checked: same size and, when both are known, same digest
// and same MD5.
//
// A source that is a disk SAS from GrantDiskAccess is granted again when
// its access ends during the copy (expired, or revoked), and the copy
// starts over once. For a ConfidentialVM disk the VM guest state
// (securityDataAccessSAS) is copied too, to cloud.GuestStateBlobName of
// dest.
func (p *Provider) CopyBlob(ctx context.Context, srcURL string, dest cloud.BlobRef, overwrite bool) (*cloud.Blob, error) {
	g := p.grantOf(srcURL)
	b, err := p.copyBlob(ctx, srcURL, dest, overwrite)
	if err != nil && g != nil && sourceDenied(err) && !p.sourceReadable(ctx, srcURL) {
		p.logf("copy from disk %s: its read access ended during the copy (%s); granting it again", g.disk, errCode(err))
		var rerr error
		if srcURL, g, rerr = p.regrant(ctx, srcURL, g); rerr != nil {
			return nil, fmt.Errorf("%w (granting access again: %w)", err, rerr)
		}
		b, err = p.copyBlob(ctx, srcURL, dest, overwrite)
	}
	if err != nil || g == nil || g.guestState == "" {
		return b, err
	}
	gs := dest
	gs.Name = cloud.GuestStateBlobName(dest.Name)
	if _, err := p.copyBlob(ctx, g.guestState, gs, overwrite); err != nil {
		if !overwrite {
			// The VHD is useless without its guest state: leave no half export.
			if pc, cerr := p.pageClient(ctx, p.resolve(dest)); cerr == nil {
				p.deleteQuietly(ctx, pc, shown(p.resolve(dest)))
			}
		}
		return nil, fmt.Errorf("copy the VM guest state of disk %s: %w", g.disk, err)
	}
	return b, nil
}

// sourceDenied tells a copy that failed because its source stopped
// answering (a disk SAS that expired or was revoked) from other failures.
func sourceDenied(err error) bool {
	return isCopySourceError(err) || cloud.HasCode(err, CodeCopyFailed) ||
		isStatus(err, http.StatusForbidden, http.StatusUnauthorized)
}

// sourceReadable reports whether a SAS source still answers: a copy that
// failed while it does failed for another reason than its access ending.
func (p *Provider) sourceReadable(ctx context.Context, srcURL string) bool {
	c, err := pageblob.NewClientWithNoCredential(srcURL, (*pageblob.ClientOptions)(p.blobOptions()))
	if err != nil {
		return false
	}
	_, err = c.GetProperties(ctx, nil)
	return err == nil
}

// copyBlob is one copy of CopyBlob.
func (p *Provider) copyBlob(ctx context.Context, srcURL string, dest cloud.BlobRef, overwrite bool) (*cloud.Blob, error) {
	j := &copyJob{srcURL: srcURL, shown: redact.URL(srcURL), overwrite: overwrite}
	j.dest = p.resolve(dest)
	du := shown(j.dest)
	what := j.shown + " to " + du
	fail := func(err error) (*cloud.Blob, error) { return nil, opError("copy blob", what, err) }

	ref, err := cloud.ParseBlobURL(srcURL)
	if err != nil {
		return fail(azrules.InvalidParameter(j.shown, "invalid copy source: %v", redact.Error(err)))
	}
	j.srcRef = ref
	if j.src, err = p.sourceClient(ctx, srcURL, ref); err != nil {
		return fail(err)
	}
	props, err := j.src.GetProperties(ctx, nil)
	if err != nil {
		err = azErr(err, j.shown)
		if isStatus(err, http.StatusNotFound, http.StatusForbidden) {
			var ce *cloud.Error
			errors.As(err, &ce)
			return fail(azrules.CannotVerifyCopySource(j.shown, "cannot be read ("+ce.Code+")"))
		}
		return fail(err)
	}
	j.size = deref(props.ContentLength)
	j.srcMD5 = props.ContentMD5
	j.srcDigest = metadataDigest(props.Metadata)
	j.page = strOf(props.BlobType) == string(blob.BlobTypePageBlob)
	if j.dst, err = p.pageClient(ctx, j.dest); err != nil {
		return fail(err)
	}
	if !overwrite {
		if _, err := j.dst.GetProperties(ctx, nil); err == nil {
			return fail(alreadyExists(du))
		} else if err := blobErr(err, du); !cloud.HasCode(err, cloud.CodeBlobNotFound) {
			return fail(err)
		}
	}

	err = p.runCopy(ctx, j)
	if err == nil {
		err = p.verifyCopy(ctx, j)
	}
	if err != nil {
		if j.created && !cloud.HasCode(err, cloud.CodeBlobAlreadyExists) {
			p.deleteQuietly(ctx, j.dst, du)
		}
		return fail(err)
	}
	got, err := j.dst.GetProperties(ctx, nil)
	if err != nil {
		return fail(blobErr(err, du))
	}
	return blobOut(dest, j.dest, got), nil
}

// runCopy moves the data with the configured mode and its fallbacks.
// When the service cannot read the source (CannotVerifyCopySource: a
// source behind a firewall, a private endpoint, or a SAS the service
// refuses) while imgflow can, the data streams through imgflow: Put Page
// From URL would fail the same way, as it is the service reading the
// source too.
func (p *Provider) runCopy(ctx context.Context, j *copyJob) error {
	mode := p.opts.CopyMode
	if mode == CopyAuto || mode == CopyServer {
		err := p.serverCopy(ctx, j)
		if err == nil || mode == CopyServer || !serverCopyUnsupported(err) {
			return err
		}
		if isCopySourceError(err) {
			p.logf("copy %s: the storage service cannot read the source (%s); streaming the data through imgflow", j.shown, errCode(err))
			mode = CopyStream
		} else {
			p.logf("copy %s: server-side copy not possible (%v); copying by ranges", j.shown, err)
			mode = CopyRanges
		}
	}
	if !j.page {
		return p.streamBlockCopy(ctx, j)
	}
	if mode == CopyRanges {
		err := p.rangeCopy(ctx, j)
		switch {
		case err == nil:
			return nil
		case isStatus(err, http.StatusNotImplemented):
			p.logf("copy %s: Put Page From URL not implemented by the service; streaming the data", j.shown)
		case isCopySourceError(err):
			p.logf("copy %s: the storage service cannot read the source (%s); streaming the data through imgflow", j.shown, errCode(err))
		default:
			return err
		}
	}
	return p.streamCopy(ctx, j)
}

// serverCopyUnsupported tells a server-side copy the service refused to
// do (not implemented, or it could not reach a source we can read) from a
// real failure.
func serverCopyUnsupported(err error) bool {
	if isStatus(err, http.StatusNotImplemented) {
		return true
	}
	return isCopySourceError(err) || cloud.HasCode(err, "FeatureNotSupported") || cloud.HasCode(err, "NotImplemented")
}

// sourceClient reads the copy source: through its SAS when it has one,
// else with this provider's credentials for the account.
func (p *Provider) sourceClient(ctx context.Context, srcURL string, ref cloud.BlobRef) (*pageblob.Client, error) {
	if strings.Contains(srcURL, "?") {
		return pageblob.NewClientWithNoCredential(srcURL, (*pageblob.ClientOptions)(p.blobOptions()))
	}
	return p.pageClient(ctx, ref)
}

// copySource is the URL the storage service reads a server-side copy
// from: the caller's SAS URL, or the blob with a read SAS signed with the
// account key (or a user delegation key), or the bare URL as a last
// resort (a public blob or one in the destination account).
func (p *Provider) copySource(ctx context.Context, j *copyJob) string {
	if strings.Contains(j.srcURL, "?") {
		return j.srcURL
	}
	if u, err := p.blobSAS(ctx, j.srcRef, sas.BlobPermissions{Read: true}, copySASLifetime); err == nil {
		return u
	}
	return j.srcRef.URL()
}

// serverCopy is StartCopyFromURL with status polling; cancelling ctx
// aborts the copy.
func (p *Provider) serverCopy(ctx context.Context, j *copyJob) (err error) {
	du := shown(j.dest)
	opts := &blob.StartCopyFromURLOptions{}
	if !j.overwrite {
		opts.AccessConditions = &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: to(azcore.ETagAny)}}
	}
	res, err := j.dst.StartCopyFromURL(ctx, p.copySource(ctx, j), opts)
	if err != nil {
		if !j.overwrite && isStatus(err, http.StatusConflict, http.StatusPreconditionFailed) && !isCopySourceError(err) {
			return alreadyExists(du)
		}
		return blobErr(err, du)
	}
	j.created = true
	status, id := strOf(res.CopyStatus), deref(res.CopyID)
	op := "copy " + j.shown + " to " + du
	p.progress(op, 0)
	tr := progress.Of(p.opts.Transfers).Start(op+" (server-side)", j.size)
	var reported int64
	report := func(copied int64) {
		if copied > reported {
			tr.Add(copied - reported)
			reported = copied
		}
	}
	defer func() { tr.End(err) }()
	for status == string(blob.CopyStatusTypePending) {
		select {
		case <-ctx.Done():
			actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
			if _, err := j.dst.AbortCopyFromURL(actx, id, nil); err != nil {
				p.logf("abort copy to %s: %v", du, redact.Error(err))
			}
			cancel()
			return ctx.Err()
		case <-time.After(p.opts.PollFrequency):
		}
		props, err := j.dst.GetProperties(ctx, nil)
		if err != nil {
			return blobErr(err, du)
		}
		status = strOf(props.CopyStatus)
		if copied, total, ok := copyProgress(deref(props.CopyProgress)); ok {
			p.progress(op, int(copied*100/total))
			report(copied)
		}
		if status != string(blob.CopyStatusTypePending) && status != string(blob.CopyStatusTypeSuccess) {
			return &cloud.Error{StatusCode: http.StatusInternalServerError, Code: CodeCopyFailed, Resource: du,
				Message: redact.SAS(fmt.Sprintf("copy %s: %s", status, deref(props.CopyStatusDescription)))}
		}
	}
	if status != string(blob.CopyStatusTypeSuccess) {
		return &cloud.Error{StatusCode: http.StatusInternalServerError, Code: CodeCopyFailed, Resource: du,
			Message: "copy ended " + status}
	}
	p.progress(op, 100)
	report(j.size)
	return nil
}

// isCopySourceError tells the service failing to read a copy source
// (which imgflow itself read a moment before) from a failure at the
// destination: CannotVerifyCopySource, or the source's own 401/403/404
// answer the service reports as a CopySource… code.
func isCopySourceError(err error) bool {
	ce, ok := asCloudError(err)
	if !ok {
		return false
	}
	return ce.Code == cloud.CodeCannotVerifyCopySource ||
		(strings.HasPrefix(ce.Code, "CopySource") && isStatus(err, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound))
}

// copyProgress parses x-ms-copy-progress ("copied/total").
func copyProgress(s string) (copied, total int64, ok bool) {
	a, b, ok := strings.Cut(s, "/")
	if !ok {
		return 0, 0, false
	}
	copied, err1 := strconv.ParseInt(a, 10, 64)
	total, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || total <= 0 || copied < 0 {
		return 0, 0, false
	}
	return min(copied, total), total, true
}

// sourceRanges lists the source's written pages (GetPageRanges), merged:
// empty ranges are never moved.
func (p *Provider) sourceRanges(ctx context.Context, j *copyJob) ([]vhd.Range, error) {
	pager := j.src.NewGetPageRangesPager(nil)
	var rs []vhd.Range
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, azErr(err, j.shown)
		}
		for _, r := range page.PageList.PageRange {
			if r == nil || r.Start == nil || r.End == nil {
				continue
			}
			rs = append(rs, vhd.Range{Offset: *r.Start, Length: *r.End - *r.Start + 1})
		}
	}
	return vhd.MergeRanges(rs), nil
}

// createDest creates the destination page blob once.
func (p *Provider) createDest(ctx context.Context, j *copyJob) error {
	if j.created {
		return nil
	}
	if err := p.createPageBlob(ctx, j.dst, shown(j.dest), j.size, j.overwrite); err != nil {
		return err
	}
	j.created = true
	return nil
}

// rangeCopy copies the source's page ranges with Put Page From URL in
// pieces of up to 4 MiB (transfer.Pieces), Parallel at once, each retried; the service reads
// the source itself, so imgflow never sees the data: the destination gets
// the source's digest and MD5 when it has them, nothing otherwise.
func (p *Provider) rangeCopy(ctx context.Context, j *copyJob) error {
	if err := p.createDest(ctx, j); err != nil {
		return err
	}
	ranges, err := p.sourceRanges(ctx, j)
	if err != nil {
		return err
	}
	src := p.copySource(ctx, j)
	op := "copy " + j.shown + " to " + shown(j.dest)
	pieces := transfer.Pieces(ranges, j.size, transfer.MergeGap)
	total := transfer.DataBytes(pieces)
	tr := progress.Of(p.opts.Transfers).Start(op, total)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sem := make(chan struct{}, p.opts.Parallel)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var copied int64
	for c := range pieces {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func(c vhd.Range) {
			defer wg.Done()
			defer func() { <-sem }()
			err := p.retry(ctx, fmt.Sprintf("%s: write at %d", op, c.Offset), func() error {
				_, err := j.dst.UploadPagesFromURL(ctx, src, c.Offset, c.Offset, c.Length, nil)
				return err
			})
			if err != nil {
				cancel(blobErr(err, shown(j.dest)))
				return
			}
			tr.Add(c.Length)
			mu.Lock()
			copied += c.Length
			pct := int(copied * 100 / max(total, 1))
			mu.Unlock()
			p.progress(op, pct)
		}(c.Data)
	}
	wg.Wait()
	err = context.Cause(ctx)
	tr.End(err)
	if err != nil {
		return err
	}
	if len(j.srcMD5) > 0 {
		if err := setMD5(ctx, j.dst, j.srcMD5, nil); err != nil {
			return err
		}
	}
	if j.srcDigest != "" {
		_, err := j.dst.SetMetadata(ctx, map[string]*string{DigestMetadataKey: to(j.srcDigest)}, nil)
		return err
	}
	return nil
}

// streamCopy downloads the source's page ranges and uploads the non-zero
// chunks through the transfer (transfer.go), computing the digest (and
// MD5) on the way; both are checked against the source's when it has them.
func (p *Provider) streamCopy(ctx context.Context, j *copyJob) error {
	if err := p.createDest(ctx, j); err != nil {
		return err
	}
	ranges, err := p.sourceRanges(ctx, j)
	if err != nil {
		// Not every source lists its pages (a disk SAS may refuse): copy
		// everything, zero chunks are still skipped.
		p.logf("copy %s: page ranges unavailable (%v); reading the whole blob", j.shown, err)
		ranges = []vhd.Range{{Offset: 0, Length: j.size}}
	}
	res, err := p.transfer(ctx, transferSpec{
		op: "copy " + j.shown + " to " + shown(j.dest), ranges: ranges, size: j.size,
		md5:   p.opts.ContentMD5 || len(j.srcMD5) > 0,
		fetch: func(ctx context.Context, off int64, buf []byte) error { return downloadRange(ctx, j.src, off, buf) },
		write: func(ctx context.Context, off int64, data []byte) error {
			return uploadPages(ctx, j.dst, off, data, nil)
		},
	})
	if err != nil {
		return blobErr(err, shown(j.dest))
	}
	if j.srcDigest != "" && res.digest != j.srcDigest {
		return digestMismatch(j, res.digest)
	}
	if len(j.srcMD5) > 0 && !bytes.Equal(res.md5, j.srcMD5) {
		return md5Mismatch(j, res.md5)
	}
	return p.finish(ctx, j.dst, shown(j.dest), res, nil)
}

// streamBlockCopy streams a block blob source into a block blob.
func (p *Provider) streamBlockCopy(ctx context.Context, j *copyJob) error {
	res, err := j.src.DownloadStream(ctx, nil)
	if err != nil {
		return azErr(err, j.shown)
	}
	body := res.NewRetryReader(ctx, nil)
	defer body.Close()
	h := md5.New()
	bb, err := p.blockClient(ctx, j.dest)
	if err != nil {
		return err
	}
	opts := &blockblob.UploadStreamOptions{Concurrency: p.opts.Parallel}
	if !j.overwrite {
		opts.AccessConditions = &blob.AccessConditions{ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: to(azcore.ETagAny)}}
	}
	if _, err := bb.UploadStream(ctx, io.TeeReader(body, h), opts); err != nil {
		if !j.overwrite && isStatus(err, http.StatusConflict, http.StatusPreconditionFailed) {
			return alreadyExists(shown(j.dest))
		}
		return blobErr(err, shown(j.dest))
	}
	j.created = true
	sum := h.Sum(nil)
	if len(j.srcMD5) > 0 && !bytes.Equal(sum, j.srcMD5) {
		return md5Mismatch(j, sum)
	}
	_, err = bb.SetHTTPHeaders(ctx, blob.HTTPHeaders{BlobContentMD5: sum, BlobContentType: to("application/octet-stream")}, nil)
	return err
}

func (p *Provider) blockClient(ctx context.Context, ref cloud.BlobRef) (*blockblob.Client, error) {
	cc, err := p.containerClient(ctx, ref.Account, ref.Endpoint, ref.Container)
	if err != nil {
		return nil, err
	}
	return cc.NewBlockBlobClient(ref.Name), nil
}

// CodeDigestMismatch: a copy whose sparse digest differs from the source's.
const CodeDigestMismatch = "DigestMismatch"

func digestMismatch(j *copyJob, got string) error {
	return &cloud.Error{StatusCode: http.StatusInternalServerError, Code: CodeDigestMismatch, Resource: shown(j.dest),
		Message: fmt.Sprintf("the copy's digest %s differs from the source's %s: the source changed during the copy, or data was damaged", got, j.srcDigest)}
}

func md5Mismatch(j *copyJob, got []byte) error {
	return &cloud.Error{StatusCode: http.StatusInternalServerError, Code: CodeMD5Mismatch, Resource: shown(j.dest),
		Message: fmt.Sprintf("the copy's MD5 %s differs from the source's %s", hex.EncodeToString(got), hex.EncodeToString(j.srcMD5))}
}

// downloadRange fills buf from the blob at off.
func downloadRange(ctx context.Context, c *pageblob.Client, off int64, buf []byte) error {
	res, err := c.DownloadStream(ctx, &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: off, Count: int64(len(buf))}})
	if err != nil {
		return err
	}
	body := res.NewRetryReader(ctx, nil)
	defer body.Close()
	if _, err := io.ReadFull(body, buf); err != nil {
		return redact.Error(fmt.Errorf("read source at %d: %w", off, err))
	}
	return nil
}

// verifyCopy checks the destination against the source: same size, and
// the same digest and MD5 when both are known.
func (p *Provider) verifyCopy(ctx context.Context, j *copyJob) error {
	du := shown(j.dest)
	got, err := j.dst.GetProperties(ctx, nil)
	if err != nil {
		return blobErr(err, du)
	}
	if n := deref(got.ContentLength); n != j.size {
		return &cloud.Error{StatusCode: http.StatusInternalServerError, Code: CodeCopyFailed, Resource: du,
			Message: fmt.Sprintf("the copy has %d bytes, the source %d", n, j.size)}
	}
	if len(got.ContentMD5) > 0 && len(j.srcMD5) > 0 && !bytes.Equal(got.ContentMD5, j.srcMD5) {
		return md5Mismatch(j, got.ContentMD5)
	}
	if d := metadataDigest(got.Metadata); d != "" && j.srcDigest != "" && d != j.srcDigest {
		return digestMismatch(j, d)
	}
	return nil
}
