package transfer

import (
	"context"
	"iter"
	"sync"

	"github.com/imgflow/imgflow/vhd"
)

// ChunkSize is the unit in which page blob data moves and is identified:
// 4 MiB, Azure's largest Put Page. Chunks are aligned to it, so a chunk
// covers the same bytes whatever ranges a source reports.
const ChunkSize = 4 << 20

// pageBytes is a page blob's page: the granularity of ChunkJob.Span.
const pageBytes = 512

// Chunk is one ChunkSize-aligned piece of a blob that may hold data:
// [Offset, Offset+Length) is the aligned chunk clipped to the blob's size,
// Data the smallest range inside it covering the data ranges that touch
// it (bytes outside Data are zeros).
type Chunk struct {
	Offset, Length int64
	Data           vhd.Range
}

// Chunks lists, in offset order, the chunks of a blob of size bytes that
// the data ranges touch; chunks no range touches are holes and never
// listed. Ranges may be unsorted or overlap; parts outside [0, size) are
// ignored. The listing is lazy: memory does not grow with the blob.
func Chunks(ranges []vhd.Range, size int64) iter.Seq[Chunk] {
	rs := normalize(ranges, size)
	return func(yield func(Chunk) bool) {
		var cur *Chunk
		for _, r := range rs {
			for off := r.Offset; off < r.Offset+r.Length; {
				start := off / ChunkSize * ChunkSize
				end := min(start+ChunkSize, size)
				piece := vhd.Range{Offset: off, Length: min(end, r.Offset+r.Length) - off}
				if cur != nil && cur.Offset == start {
					cur.Data.Length = piece.Offset + piece.Length - cur.Data.Offset
				} else {
					if cur != nil && !yield(*cur) {
						return
					}
					cur = &Chunk{Offset: start, Length: end - start, Data: piece}
				}
				off = piece.Offset + piece.Length
			}
		}
		if cur != nil {
			yield(*cur)
		}
	}
}

// MergeGap is the widest hole Pieces sends as zeros rather than splitting
// a request: Azurite and Azure pay per Put Page, and 64 KiB of zeros cost
// less than a request.
const MergeGap = 64 << 10

// Pieces lists the data ranges of a blob of size bytes as write requests:
// ranges less than gap bytes apart are merged (the hole between them is
// read and written as zeros), then cut into pieces of at most ChunkSize.
// Unlike Chunks, pieces follow the data rather than the 4 MiB grid: a
// 4 MiB extent across a chunk boundary is one request, not two, which is
// what scattered files spend their time on. A piece is a Chunk whose Data
// is all of it. Page-aligned ranges give page-aligned pieces.
func Pieces(ranges []vhd.Range, size, gap int64) iter.Seq[Chunk] {
	rs := normalize(ranges, size)
	return func(yield func(Chunk) bool) {
		for i := 0; i < len(rs); {
			start, end := rs[i].Offset, rs[i].Offset+rs[i].Length
			for i++; i < len(rs) && rs[i].Offset-end < gap; i++ {
				end = rs[i].Offset + rs[i].Length
			}
			for off := start; off < end; off += ChunkSize {
				piece := vhd.Range{Offset: off, Length: min(ChunkSize, end-off)}
				if !yield(Chunk{Offset: piece.Offset, Length: piece.Length, Data: piece}) {
					return
				}
			}
		}
	}
}

// DataBytes is the number of bytes the chunks read: the sum of their
// Data lengths (the total of a progress report).
func DataBytes(chunks iter.Seq[Chunk]) int64 {
	var n int64
	for c := range chunks {
		n += c.Data.Length
	}
	return n
}

// normalize clips ranges to [0, size), sorts them and merges overlapping
// or adjacent ones.
func normalize(ranges []vhd.Range, size int64) []vhd.Range {
	rs := make([]vhd.Range, 0, len(ranges))
	for _, r := range ranges {
		start, end := max(r.Offset, 0), min(r.Offset+r.Length, size)
		if end > start {
			rs = append(rs, vhd.Range{Offset: start, Length: end - start})
		}
	}
	return vhd.MergeRanges(rs)
}

// ChunkJob is a chunk going through RunChunks.
type ChunkJob struct {
	Chunk
	// Buf is the chunk's content from Offset to the end of Data once
	// fetched: Data as Fetch filled it, zeros before it. The chunk's
	// bytes past Data are zeros and not in Buf (a chunk of Pieces ends
	// with its Data, so Buf is all of it).
	Buf []byte
	// Span is the part of Data from its first to its last 512-byte page
	// holding a non-zero byte (blob offsets): what to write. Zero when
	// the chunk is all zeros. Page-aligned when Data is.
	Span vhd.Range
	// Sum is the chunk's sum when it has data (see SparseDigest), unless
	// ChunkRun.NoSums.
	Sum [32]byte

	// zeroed: Buf was just allocated, so it holds zeros only.
	zeroed bool
}

// HasData reports whether the chunk holds a non-zero byte.
func (j *ChunkJob) HasData() bool { return j.Span.Length > 0 }

// SpanBytes is the content of Span.
func (j *ChunkJob) SpanBytes() []byte {
	lo := j.Span.Offset - j.Offset
	return j.Buf[lo : lo+j.Span.Length]
}

// ChunkRun configures RunChunks.
type ChunkRun struct {
	// Parallel is how many chunks are fetched and processed at once
	// (default 1).
	Parallel int
	// Buffers bounds the chunk buffers in flight (default and minimum
	// Parallel): memory is Buffers·ChunkSize whatever the blob's size.
	// More buffers than workers let fast chunks run ahead of a slow one
	// that InOrder waits for.
	Buffers int
	// Fetch fills buf, the chunk's Data bytes at offset off.
	Fetch func(ctx context.Context, off int64, buf []byte) error
	// Process, when set, handles a chunk that has data (e.g. writes
	// it), in a worker.
	Process func(ctx context.Context, j *ChunkJob) error
	// InOrder, when set, sees every chunk in offset order once it was
	// processed, in one goroutine, before its buffer is reused (hashing
	// the content in order, progress).
	InOrder func(j *ChunkJob)
	// NoSums skips the chunk sums: for Pieces, which are not aligned to
	// the digest's chunks (Digester.Write assembles those).
	NoSums bool
}

// RunChunks fetches, checks for zeros, hashes (for SparseDigest) and
// processes chunks with r.Parallel workers and at most r.Buffers chunk
// buffers. The first error cancels the rest and is returned.
func RunChunks(ctx context.Context, chunks iter.Seq[Chunk], r ChunkRun) error {
	par := max(r.Parallel, 1)
	nbuf := max(r.Buffers, par)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	type slot struct {
		job  ChunkJob
		done chan error
	}
	pool := make(chan []byte, nbuf)
	for range nbuf {
		pool <- nil // allocated on first use: small blobs stay small
	}
	jobs := make(chan *slot)
	order := make(chan *slot, nbuf)

	var wg sync.WaitGroup
	for range par {
		wg.Go(func() {
			for s := range jobs {
				err := runChunk(ctx, &s.job, r)
				if err != nil {
					cancel(err) // at once, not when InOrder gets there
				}
				s.done <- err
			}
		})
	}
	ordered := make(chan struct{})
	go func() {
		defer close(ordered)
		for s := range order {
			var err error
			select {
			case err = <-s.done:
			case <-ctx.Done():
				return
			}
			if err != nil {
				cancel(err)
				return
			}
			if r.InOrder != nil {
				r.InOrder(&s.job)
			}
			pool <- s.job.Buf[:cap(s.job.Buf)]
		}
	}()

dispatch:
	for c := range chunks {
		var buf []byte
		select {
		case buf = <-pool:
		case <-ctx.Done():
			break dispatch
		}
		// Only up to the end of the data: a chunk holding a few sectors
		// (a VHD's footer, a small disk) does not cost 4 MiB of cleared
		// memory. A pooled buffer too small for this chunk is replaced.
		need := c.Data.Offset + c.Data.Length - c.Offset
		zeroed := cap(buf) < int(need)
		if zeroed {
			buf = make([]byte, need)
		}
		s := &slot{job: ChunkJob{Chunk: c, Buf: buf[:need], zeroed: zeroed}, done: make(chan error, 1)}
		order <- s // never blocks: at most nbuf slots hold a buffer
		select {
		case jobs <- s:
		case <-ctx.Done():
			break dispatch
		}
	}
	close(jobs)
	close(order)
	wg.Wait()
	<-ordered
	return context.Cause(ctx)
}

// runChunk fetches one chunk, zeroes what is before its data (the buffer
// ends with it), finds its non-zero span, and hashes and processes it
// when it is not all zeros.
func runChunk(ctx context.Context, j *ChunkJob, r ChunkRun) error {
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	lo, hi := j.Data.Offset-j.Offset, j.Data.Offset+j.Data.Length-j.Offset
	if !j.zeroed {
		// A new buffer is zeros already; clearing it anyway would make
		// the OS back all 4 MiB of it with pages, for a chunk that may
		// hold one sector (a VHD's footer).
		clear(j.Buf[:lo])
	}
	if err := r.Fetch(ctx, j.Data.Offset, j.Buf[lo:hi]); err != nil {
		return err
	}
	lo, hi = trimZeroPages(j.Buf, lo, hi)
	if lo == hi {
		j.Span = vhd.Range{}
		return nil
	}
	j.Span = vhd.Range{Offset: j.Offset + lo, Length: hi - lo}
	if !r.NoSums {
		j.Sum = spanSum(j.Buf, lo, hi)
	}
	if r.Process != nil {
		return r.Process(ctx, j)
	}
	return nil
}

// trimZeroPages narrows [lo, hi) of chunk, widened to whole pages, to the
// span from its first to its last non-zero page (lo == hi: all zeros).
func trimZeroPages(chunk []byte, lo, hi int64) (int64, int64) {
	lo = lo / pageBytes * pageBytes
	hi = min((hi+pageBytes-1)/pageBytes*pageBytes, int64(len(chunk)))
	for lo < hi && vhd.IsZero(chunk[lo:min(lo+pageBytes, hi)]) {
		lo += pageBytes
	}
	for hi > lo {
		p := (hi - 1) / pageBytes * pageBytes
		if !vhd.IsZero(chunk[p:hi]) {
			break
		}
		hi = p
	}
	return lo, hi
}
