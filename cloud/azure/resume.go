package azure

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/pageblob"
	"github.com/google/uuid"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/cloud/transfer"
	"github.com/imgflow/imgflow/internal/redact"
	"github.com/imgflow/imgflow/vhd"
)

// Resumable uploads.
//
// An upload creates its page blob with two metadata entries, the digest
// of the content it is about to write (PendingDigestMetadataKey) and an
// incomplete marker naming the writer (IncompleteMetadataKey); only once
// every piece is in and the digest checked are both replaced by the
// digest (DigestMetadataKey). A process killed half-way thus leaves a blob
// that says what it was meant to hold. The next upload of the same
// content (same size and digest) continues it: it lists the pages the
// blob holds (Get Page Ranges) and sends only the pieces not fully there.
// A piece is one Put Page, which Azure applies whole or not at all, and
// every piece of a blob marked with this digest came from a source with
// this digest, so a piece whose pages are all there holds the right bytes
// and is not read back.
//
// While it writes, an upload holds a lease on the blob (writeLeaseSeconds,
// renewed as it goes) and makes every write under it: a second writer
// waits until the lease ends, then finds the blob complete, or resumes
// it. A killed writer's lease ends by itself within writeLeaseSeconds.

const (
	// PendingDigestMetadataKey holds, while an upload is incomplete, the
	// digest of the content it writes.
	PendingDigestMetadataKey = "imgflowpendingdigest"
	// IncompleteMetadataKey marks a blob an upload is still writing (or
	// was killed writing); the value identifies the writer.
	IncompleteMetadataKey = "imgflowincomplete"

	// writeLeaseSeconds is the lease an upload holds while it writes: a
	// killed upload blocks others this long at most (Azure: 15…60 s).
	writeLeaseSeconds = 15
	// leaseRenewInterval leaves two renewals' slack before the lease ends.
	leaseRenewInterval = writeLeaseSeconds * time.Second / 3
	// leaseWaitInterval is how often a writer waiting for another's lease
	// looks again.
	leaseWaitInterval = time.Second
)

// blobWriter is an upload's hold on its destination: the lease, and the
// pages the blob already held when it was resumed.
type blobWriter struct {
	pc      *pageblob.Client
	lc      *lease.BlobClient
	u       string
	pending string
	// have are the page ranges an interrupted upload already wrote
	// (nil for a new blob).
	have []vhd.Range
	// ctx ends when the lease could not be renewed.
	ctx    context.Context
	cancel context.CancelCauseFunc
	done   chan struct{}
}

// conds are the access conditions of every write under the lease.
func (w *blobWriter) conds() *blob.AccessConditions {
	return &blob.AccessConditions{LeaseAccessConditions: &blob.LeaseAccessConditions{LeaseID: w.lc.LeaseID()}}
}

// claim makes pc an incomplete page blob of size bytes meant to hold the
// content whose digest is pending, and leases it: a new blob; the blob an
// interrupted upload of the same content left (its pages in have); or,
// with overwrite, a replacement of another blob. Without overwrite, a
// complete blob is BlobAlreadyExists and an interrupted upload of other
// content an error saying how to replace it. It waits while another
// writer holds the blob's lease.
func (p *Provider) claim(ctx context.Context, pc *pageblob.Client, u string, size int64, pending string, overwrite bool) (*blobWriter, error) {
	id := uuid.NewString()
	lc, err := lease.NewBlobClient(pc, &lease.BlobClientOptions{LeaseID: &id})
	if err != nil {
		return nil, err
	}
	w := &blobWriter{pc: pc, lc: lc, u: u, pending: pending}
	marker := map[string]*string{PendingDigestMetadataKey: to(pending), IncompleteMetadataKey: to(id)}
	waited := false
	wait := func() error {
		if !waited {
			waited = true
			p.logf("%s: another upload holds the blob's lease; waiting for it (the lease of a killed upload ends within %d s)", u, writeLeaseSeconds)
		}
		select {
		case <-time.After(leaseWaitInterval):
			return nil
		case <-ctx.Done():
			return fmt.Errorf("waiting for the lease of %s: %w", u, context.Cause(ctx))
		}
	}
	for {
		props, err := pc.GetProperties(ctx, nil)
		if err != nil {
			if err := blobErr(err, u); !cloud.HasCode(err, cloud.CodeBlobNotFound) {
				return nil, err
			}
			_, err := pc.Create(ctx, size, &pageblob.CreateOptions{Metadata: marker, AccessConditions: &blob.AccessConditions{
				ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: to(azcore.ETagAny)}}})
			if err != nil && !createRaced(err) {
				return nil, blobErr(err, u)
			}
			continue // created, or created by another writer: look again
		}
		md := props.Metadata
		incomplete := metaValue(md, IncompleteMetadataKey) != ""
		same := incomplete && deref(props.ContentLength) == size && transfer.SameDigest(metaValue(md, PendingDigestMetadataKey), pending)
		switch {
		case same:
			// Ours to write (new, or interrupted): lease it, then check
			// nobody completed or replaced it meanwhile.
			if _, err := lc.AcquireLease(ctx, writeLeaseSeconds, nil); err != nil {
				if !leaseHeld(err) {
					return nil, blobErr(err, u)
				}
				if err := wait(); err != nil {
					return nil, err
				}
				continue
			}
			w.start(ctx)
			now, err := pc.GetProperties(ctx, nil)
			if err == nil && deref(now.ContentLength) == size && metaValue(now.Metadata, IncompleteMetadataKey) != "" &&
				transfer.SameDigest(metaValue(now.Metadata, PendingDigestMetadataKey), pending) {
				if w.have, err = pageRangesOf(ctx, pc); err != nil {
					w.abandon(ctx)
					return nil, blobErr(err, u)
				}
				return w, nil
			}
			w.abandon(ctx)
			if err != nil {
				return nil, blobErr(err, u)
			}
		case !overwrite && incomplete:
			return nil, azrules.BlobAlreadyExists(u, fmt.Sprintf(
				"%s holds an interrupted upload of different content (metadata %s): pass overwrite = True to replace it, or delete the blob.", u, IncompleteMetadataKey))
		case !overwrite:
			return nil, alreadyExists(u)
		case deref(props.LeaseState) == lease.StateTypeLeased:
			if err := wait(); err != nil {
				return nil, err
			}
		default:
			// Replace it, unless it changed since we looked.
			_, err := pc.Create(ctx, size, &pageblob.CreateOptions{Metadata: marker, AccessConditions: &blob.AccessConditions{
				ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfMatch: props.ETag}}})
			if err != nil && !createRaced(err) && !leaseHeld(err) {
				return nil, blobErr(err, u)
			}
		}
	}
}

// start renews the lease until finish or abandon; a failed renewal ends
// w.ctx, so the transfer stops rather than writing unleased.
func (w *blobWriter) start(ctx context.Context) {
	w.ctx, w.cancel = context.WithCancelCause(ctx)
	w.done = make(chan struct{})
	go func() {
		defer close(w.done)
		t := time.NewTicker(leaseRenewInterval)
		defer t.Stop()
		for {
			select {
			case <-w.ctx.Done():
				return
			case <-t.C:
				if _, err := w.lc.RenewLease(w.ctx, nil); err != nil && w.ctx.Err() == nil {
					w.cancel(fmt.Errorf("renew the lease of %s: %w", w.u, blobErr(err, w.u)))
					return
				}
			}
		}
	}()
}

// stop ends the renewals.
func (w *blobWriter) stop() {
	w.cancel(nil)
	<-w.done
}

// abandon stops writing and releases the lease, keeping the blob (and
// its marker) for the next upload to resume; a failure is only logged
// through the caller's error, as the lease ends by itself anyway.
func (w *blobWriter) abandon(ctx context.Context) {
	w.stop()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	_, _ = w.lc.ReleaseLease(ctx, nil)
}

// complete checks what the transfer wrote and turns the marker into the
// digest, under the lease, then releases it.
func (p *Provider) complete(ctx context.Context, w *blobWriter, res *transferResult) error {
	if !transfer.SameDigest(res.digest, w.pending) {
		return &cloud.Error{StatusCode: http.StatusConflict, Code: CodeCopyFailed, Resource: w.u,
			Message: fmt.Sprintf("the source changed during the upload (digest %s, %s before): upload it again", res.digest, w.pending)}
	}
	if err := p.finish(w.ctx, w.pc, w.u, res, w.conds()); err != nil {
		return err
	}
	w.stop()
	if _, err := w.lc.ReleaseLease(ctx, nil); err != nil {
		p.logf("release the lease of %s: %v (it ends by itself within %d s)", w.u, redact.Error(err), writeLeaseSeconds)
	}
	return nil
}

// createRaced tells that a conditional Create lost to another writer.
func createRaced(err error) bool {
	return bloberror.HasCode(err, bloberror.BlobAlreadyExists, bloberror.ConditionNotMet) || isStatus(err, http.StatusPreconditionFailed)
}

// leaseHeld tells that another writer holds the blob's lease.
func leaseHeld(err error) bool {
	return bloberror.HasCode(err, bloberror.LeaseAlreadyPresent, bloberror.LeaseIDMissing,
		bloberror.LeaseIDMismatchWithBlobOperation, bloberror.LeaseIDMismatchWithLeaseOperation)
}

// metaValue is the metadata value of key (names are case-insensitive).
func metaValue(md map[string]*string, key string) string {
	for k, v := range md {
		if strings.EqualFold(k, key) {
			return deref(v)
		}
	}
	return ""
}

// pageRangesOf lists the blob's page ranges, sorted and merged.
func pageRangesOf(ctx context.Context, pc *pageblob.Client) ([]vhd.Range, error) {
	var rs []vhd.Range
	pager := pc.NewGetPageRangesPager(nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, r := range page.PageList.PageRange {
			if r != nil && r.Start != nil && r.End != nil {
				rs = append(rs, vhd.Range{Offset: *r.Start, Length: *r.End - *r.Start + 1})
			}
		}
	}
	return vhd.MergeRanges(rs), nil
}

// covered reports whether the sorted, merged ranges hold all of r.
func covered(have []vhd.Range, r vhd.Range) bool {
	i := sort.Search(len(have), func(i int) bool { return have[i].Offset+have[i].Length > r.Offset })
	return i < len(have) && have[i].Offset <= r.Offset && r.Offset+r.Length <= have[i].Offset+have[i].Length
}

// incompleteErr is GetBlob's answer for a blob an upload has not
// finished: it holds no content yet (an upload of the same content
// resumes it), so it is not found.
func incompleteErr(u string) error {
	return azrules.BlobURLNotFound(u, fmt.Sprintf(
		"It holds an interrupted upload (metadata %s), not complete content: uploading the same content resumes it.", IncompleteMetadataKey))
}
