package azure

import (
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"hash"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/pageblob"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/transfer"
	"github.com/imgflow/imgflow/internal/redact"
	"github.com/imgflow/imgflow/progress"
	"github.com/imgflow/imgflow/vhd"
)

// The data path of UploadPageBlob and of streamed copies (vhd_upload,
// blob_copy and sig_to_vhd where the service cannot copy by itself).
//
// The data ranges are cut into pieces of at most 4 MiB that follow the
// data (transfer.Pieces): holes are never read, ranges a few pages apart are
// sent together, and an extent across a 4 MiB boundary is one request.
// Parallel workers fetch a piece (from the file, or a ranged download),
// skip it when it is all zeros and write its non-zero span with Put Page,
// each step retried on its own. At most 1.5·Parallel 4 MiB buffers exist,
// so memory does not depend on the blob's size. One goroutine sees the
// pieces in order: it assembles the 4 MiB-aligned chunks of the sparse
// digest, feeds the optional Content-MD5 (which, unlike the digest, must
// hash the holes too) and reports progress.
//
// Pieces rather than aligned chunks: Azurite and Azure pay per request,
// and on a disk with scattered extents aligned chunks took 30 % more Put
// Page calls (BENCHMARKS.md).

const (
	// chunkAttempts is how often a chunk's read or write is tried
	// before the transfer fails (the SDK's own retries come on top).
	chunkAttempts = 4
	// defaultChunkRetryDelay is the first wait between attempts; it
	// doubles each time. The blob retry delay of Options.Blob replaces it.
	defaultChunkRetryDelay = time.Second
)

// transferSpec is one transfer: the data ranges (merged, page-aligned) of
// size bytes, read by fetch and written by write.
type transferSpec struct {
	op     string
	ranges []vhd.Range
	size   int64
	md5    bool // compute the Content-MD5 of the whole content
	// have are page ranges the destination already holds (a resumed
	// upload): a piece whose pages are all there is not written again.
	have  []vhd.Range
	fetch func(ctx context.Context, off int64, buf []byte) error
	write func(ctx context.Context, off int64, data []byte) error
}

// transferResult is what a transfer learnt about the content.
type transferResult struct {
	digest string
	md5    []byte // nil unless asked for
	// sent is the bytes written, kept those of pieces the destination
	// already held; nonZero the bytes of both in pages holding data (the
	// destination must hold between nonZero and sent+kept bytes of pages).
	sent, kept, nonZero int64
}

func (p *Provider) transfer(ctx context.Context, s transferSpec) (*transferResult, error) {
	par := p.opts.Parallel
	pieces := transfer.Pieces(s.ranges, s.size, transfer.MergeGap)
	total := transfer.DataBytes(pieces)
	tr := progress.Of(p.opts.Transfers).Start(s.op, total)
	d := transfer.NewDigester(s.size)
	var h hash.Hash
	if s.md5 {
		h = md5.New()
	}
	var pos, done int64
	lastPct := -1
	var sent, kept, nonZero atomic.Int64
	err := transfer.RunChunks(ctx, pieces, transfer.ChunkRun{
		Parallel: par,
		Buffers:  par + par/2,
		NoSums:   true, // the digest's chunks are assembled in order
		Fetch: func(ctx context.Context, off int64, buf []byte) error {
			return p.retry(ctx, fmt.Sprintf("%s: read at %d", s.op, off), func() error { return s.fetch(ctx, off, buf) })
		},
		Process: func(ctx context.Context, j *transfer.ChunkJob) error {
			off, data := j.Span.Offset, j.SpanBytes()
			nonZero.Add(nonZeroPages(data))
			if covered(s.have, j.Span) {
				kept.Add(int64(len(data)))
				return nil
			}
			sent.Add(int64(len(data)))
			return p.retry(ctx, fmt.Sprintf("%s: write at %d", s.op, off), func() error { return s.write(ctx, off, data) })
		},
		InOrder: func(j *transfer.ChunkJob) {
			if j.HasData() {
				d.Write(j.Offset, j.Buf)
			}
			if h != nil {
				hashZeros(h, j.Offset-pos)
				h.Write(j.Buf)
				pos = j.Offset + int64(len(j.Buf)) // zeros past it come with the next piece
			}
			done += j.Data.Length
			tr.Add(j.Data.Length)
			if pct := int(done * 100 / max(total, 1)); pct/5 != lastPct/5 {
				lastPct = pct
				p.progress(s.op, pct)
			}
		},
	})
	tr.End(err)
	if err != nil {
		return nil, err
	}
	if lastPct < 100 {
		p.progress(s.op, 100)
	}
	res := &transferResult{sent: sent.Load(), kept: kept.Load(), nonZero: nonZero.Load()}
	if res.digest, err = d.Digest(); err != nil {
		return nil, err
	}
	if h != nil {
		hashZeros(h, s.size-pos)
		res.md5 = h.Sum(nil)
	}
	return res, nil
}

// nonZeroPages counts the bytes of data in 512-byte pages holding a
// non-zero byte.
func nonZeroPages(data []byte) int64 {
	var n int64
	for off := 0; off < len(data); off += pageSize {
		if !vhd.IsZero(data[off:min(off+pageSize, len(data))]) {
			n += int64(min(pageSize, len(data)-off))
		}
	}
	return n
}

// hashZeros writes n zero bytes to h (the gaps, for Content-MD5), from a
// buffer of its own: a 4 MiB package variable cost every imgflow command
// its allocation at start-up.
func hashZeros(h hash.Hash, n int64) {
	zeros := make([]byte, min(n, 256<<10))
	for n > 0 {
		k := min(n, int64(len(zeros)))
		h.Write(zeros[:k])
		n -= k
	}
}

// permanentError marks an error retrying cannot fix (a short source file).
type permanentError struct{ error }

func (e permanentError) Unwrap() error { return e.error }

// retry runs fn up to chunkAttempts times while it fails with an error
// worth retrying, waiting the retry delay, doubled each time, in between.
func (p *Provider) retry(ctx context.Context, what string, fn func() error) error {
	delay := defaultChunkRetryDelay
	if p.opts.Blob != nil && p.opts.Blob.Retry.RetryDelay > 0 {
		delay = p.opts.Blob.Retry.RetryDelay
	}
	for attempt := 1; ; attempt++ {
		err := fn()
		if err == nil || attempt == chunkAttempts || ctx.Err() != nil || !retriable(err) {
			return err
		}
		p.logf("%s: attempt %d of %d failed, retrying: %v", what, attempt, chunkAttempts, redact.Error(err))
		select {
		case <-time.After(delay << (attempt - 1)):
		case <-ctx.Done():
			return err
		}
	}
}

// retriable tells a transient failure (network, timeouts, throttling,
// server errors, a body damaged on the way) from a definite answer.
func retriable(err error) bool {
	var pe permanentError
	if errors.As(err, &pe) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	status, code := 0, ""
	var re *azcore.ResponseError
	var ce *cloud.Error
	switch {
	case errors.As(err, &re):
		status, code = re.StatusCode, re.ErrorCode
	case errors.As(err, &ce):
		status, code = ce.StatusCode, ce.Code
	default:
		return true // transport and body errors
	}
	switch {
	case status == http.StatusRequestTimeout, status == http.StatusTooManyRequests, status >= 500 && status != http.StatusNotImplemented:
		return true
	case code == "Md5Mismatch" || code == "InvalidMd5":
		return true // damaged on the way
	}
	return false
}

// verifyPages checks that the destination holds the pages a transfer
// wrote: between the bytes of pages holding data and the bytes sent (the
// blob was created empty; a service may or may not keep written zeros).
func (p *Provider) verifyPages(ctx context.Context, pc *pageblob.Client, u string, res *transferResult) error {
	rs, err := pageRangesOf(ctx, pc)
	if err != nil {
		return blobErr(err, u)
	}
	have := rangeBytes(rs)
	if have < res.nonZero || have > res.sent+res.kept {
		return &cloud.Error{StatusCode: http.StatusInternalServerError, Code: CodeCopyFailed, Resource: u,
			Message: fmt.Sprintf("the blob holds %d bytes of pages after the transfer sent %d and found %d there (%d of them data): the transfer is incomplete", have, res.sent, res.kept, res.nonZero)}
	}
	return nil
}

// rangeBytes is the total length of ranges.
func rangeBytes(rs []vhd.Range) int64 {
	var n int64
	for _, r := range rs {
		n += r.Length
	}
	return n
}
