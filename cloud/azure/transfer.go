package azure

import (
	"bytes"
	"context"
	"crypto/md5"
	"sync"

	"github.com/imgflow/imgflow/cloud"
)

// zeros is a read-only chunk of zeros: to detect empty chunks and hash gaps.
var zeros = make([]byte, chunkSize)

func isZero(b []byte) bool {
	for len(b) > 0 {
		n := min(len(b), len(zeros))
		if !bytes.Equal(b[:n], zeros[:n]) {
			return false
		}
		b = b[n:]
	}
	return true
}

// transferJob is one chunk in flight: fetched by a worker, hashed in order
// by the coordinator, written (unless all zeros) by the worker.
type transferJob struct {
	r       cloud.ByteRange
	buf     []byte
	fetched chan error    // the fetch result, once
	hashed  chan struct{} // closed once the coordinator hashed buf
}

// transfer moves chunks (sorted, ≤ chunkSize, non-overlapping, inside
// size) from fetch to write with at most Parallel chunks fetched or
// written at once, skipping the write of all-zero chunks. It returns the
// MD5 of the whole size bytes, gaps between chunks hashed as zeros, so the
// sum is computed while streaming, in order, without reading anything twice.
func (p *Provider) transfer(ctx context.Context, op string, chunks []cloud.ByteRange, size int64,
	fetch func(ctx context.Context, off int64, buf []byte) error,
	write func(ctx context.Context, off int64, data []byte) error,
) ([]byte, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	par := p.opts.Parallel
	jobs := make(chan *transferJob, par)
	// Buffers: one per worker plus one per queued job.
	pool := make(chan []byte, 2*par)
	for range 2 * par {
		pool <- nil
	}
	var wg sync.WaitGroup
	for range par {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				data := j.buf[:j.r.Length]
				err := fetch(ctx, j.r.Offset, data)
				j.fetched <- err
				if err == nil && !isZero(data) {
					if werr := write(ctx, j.r.Offset, data); werr != nil {
						cancel(werr)
					}
				}
				select {
				case <-j.hashed:
				case <-ctx.Done():
				}
				pool <- j.buf
			}
		}()
	}
	finish := func(err error) ([]byte, error) {
		close(jobs)
		wg.Wait()
		if err == nil {
			err = context.Cause(ctx)
		}
		return nil, err
	}

	var total int64
	for _, c := range chunks {
		total += c.Length
	}
	h := md5.New()
	pos := int64(0)
	var done int64
	lastPct := -1
	queue := make([]*transferJob, 0, len(chunks))
	next := 0
	for i := range chunks {
		// Keep up to 2·Parallel chunks ahead of the hasher.
		for next < len(chunks) && next < i+2*par {
			var buf []byte
			select {
			case buf = <-pool:
			case <-ctx.Done():
				return finish(nil)
			}
			if buf == nil {
				buf = make([]byte, chunkSize)
			}
			j := &transferJob{r: chunks[next], buf: buf, fetched: make(chan error, 1), hashed: make(chan struct{})}
			queue = append(queue, j)
			select {
			case jobs <- j:
			case <-ctx.Done():
				return finish(nil)
			}
			next++
		}
		j := queue[i]
		select {
		case err := <-j.fetched:
			if err != nil {
				cancel(err)
				return finish(err)
			}
		case <-ctx.Done():
			return finish(nil)
		}
		hashZeros(h, j.r.Offset-pos)
		h.Write(j.buf[:j.r.Length])
		pos = j.r.Offset + j.r.Length
		close(j.hashed)
		queue[i] = nil
		done += j.r.Length
		if pct := int(done * 100 / max(total, 1)); pct/5 != lastPct/5 {
			lastPct = pct
			p.progress(op, pct)
		}
	}
	close(jobs)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	hashZeros(h, size-pos)
	if len(chunks) == 0 {
		p.progress(op, 100)
	}
	return h.Sum(nil), nil
}

func hashZeros(h interface{ Write([]byte) (int, error) }, n int64) {
	for n > 0 {
		k := min(n, int64(len(zeros)))
		h.Write(zeros[:k])
		n -= k
	}
}
