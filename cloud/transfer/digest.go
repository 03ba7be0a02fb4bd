package transfer

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"runtime"
	"strings"

	"github.com/imgflow/imgflow/vhd"
)

// DigestPrefix starts every SparseDigest string; it names the format.
const DigestPrefix = "sparse-sha256:"

// digestDomain separates SparseDigest from any other SHA-256 use.
const digestDomain = "imgflow sparse digest v1\x00"

// Sparse digests identify page blob content without reading holes.
//
// The content of a blob of size bytes is cut into ChunkSize-aligned
// chunks (the last one shorter). A chunk whose bytes are all zeros, be it
// a hole or written zeros, does not count; every other chunk counts with
// its offset and its sum: the SHA-256 of its span, from its first to its
// last non-zero 512-byte page, with the span's place in the chunk, so the
// zeros around a little data (a VHD footer) are never hashed. The digest
// is
//
//	chunk sum = SHA-256(be64(span offset in the chunk) ‖ be64(span length) ‖ span bytes)
//	digest    = SHA-256(digestDomain ‖ be64(size) ‖ for each non-zero chunk, by offset: be64(offset) ‖ chunk sum)
//
// written DigestPrefix + 64 hex digits. Two blobs of the same size have
// the same digest exactly when their bytes are equal (up to SHA-256
// collisions), and it is computed from data ranges alone, so a sparse
// 30 GiB disk costs what its data costs. Chunk hashes are independent, so
// workers compute them in parallel, in any order, while data moves.

// chunkSum is the sum of chunk whose bytes outside [lo, hi) are zeros.
func chunkSum(chunk []byte, lo, hi int64) ([32]byte, bool) {
	lo, hi = trimZeroPages(chunk, lo, hi)
	if lo == hi {
		return [32]byte{}, false
	}
	return spanSum(chunk, lo, hi), true
}

// spanSum is the sum of chunk whose non-zero span is [lo, hi).
func spanSum(chunk []byte, lo, hi int64) [32]byte {
	h := sha256.New()
	var place [16]byte
	binary.BigEndian.PutUint64(place[:8], uint64(lo))
	binary.BigEndian.PutUint64(place[8:], uint64(hi-lo))
	h.Write(place[:])
	h.Write(chunk[lo:hi])
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}

// Digester folds chunk sums into a SparseDigest. Add the non-zero chunks
// in increasing offset order (RunChunks's InOrder does), or Write content
// that comes in other pieces.
type Digester struct {
	h    hash.Hash
	size int64
	next int64 // the lowest offset Add accepts
	err  error

	// Write assembles the chunk at chunkOff in chunk, bytes [lo, hi)
	// written so far; chunk is nil until the first Write.
	chunk            []byte
	chunkOff, lo, hi int64
	writeNext        int64 // the lowest offset Write accepts
}

// NewDigester starts the digest of a blob of size bytes.
func NewDigester(size int64) *Digester {
	d := &Digester{h: sha256.New(), size: size}
	d.h.Write([]byte(digestDomain))
	d.h.Write(binary.BigEndian.AppendUint64(nil, uint64(size)))
	return d
}

// Add counts the non-zero chunk at off with its sum (see above).
func (d *Digester) Add(off int64, sum [32]byte) {
	if d.err == nil && (off%ChunkSize != 0 || off < d.next || off >= d.size) {
		d.err = fmt.Errorf("sparse digest: chunk at %d out of order or unaligned", off)
	}
	d.next = off + 1
	var b [40]byte
	binary.BigEndian.PutUint64(b[:8], uint64(off))
	copy(b[8:], sum[:])
	d.h.Write(b[:])
}

// Write adds content at off that is not cut into chunks (Pieces):
// pieces in increasing offset order, not overlapping; bytes never written
// are zeros. It copies them into one ChunkSize buffer and sums each chunk
// once it is complete.
func (d *Digester) Write(off int64, data []byte) {
	if d.err == nil && (off < d.writeNext || off+int64(len(data)) > d.size) {
		d.err = fmt.Errorf("sparse digest: %d bytes at %d out of order or past the end", len(data), off)
	}
	if d.err != nil {
		return
	}
	d.writeNext = off + int64(len(data))
	if d.chunk == nil {
		d.chunk = make([]byte, ChunkSize)
	}
	for len(data) > 0 {
		start := off / ChunkSize * ChunkSize
		if d.hi > 0 && start != d.chunkOff {
			d.sumChunk()
		}
		if d.hi == 0 {
			d.chunkOff, d.lo = start, off-start
		}
		n := copy(d.chunk[off-start:min(ChunkSize, d.size-start)], data)
		d.hi = off - start + int64(n)
		off, data = off+int64(n), data[n:]
	}
}

// sumChunk adds the chunk Write assembled and clears the buffer.
func (d *Digester) sumChunk() {
	chunk := d.chunk[:min(ChunkSize, d.size-d.chunkOff)]
	if sum, ok := chunkSum(chunk, d.lo, d.hi); ok {
		d.Add(d.chunkOff, sum)
	}
	clear(d.chunk[d.lo:d.hi])
	d.lo, d.hi = 0, 0
}

// AddJob counts a chunk that went through RunChunks when it has data.
func (d *Digester) AddJob(j *ChunkJob) {
	if j.HasData() {
		d.Add(j.Offset, j.Sum)
	}
}

// Digest returns the digest string, or an error if Add or Write was
// misused.
func (d *Digester) Digest() (string, error) {
	if d.hi > 0 {
		d.sumChunk()
	}
	if d.err != nil {
		return "", d.err
	}
	return DigestPrefix + hex.EncodeToString(d.h.Sum(nil)), nil
}

// SparseDigest computes the digest of size bytes read from r whose data
// lies in ranges (nil: everything); the rest reads as zeros and is never
// read. Files: ranges from vhd.DataRanges (SEEK_DATA/SEEK_HOLE); blobs:
// their page ranges. Chunks are read and hashed in parallel.
func SparseDigest(ctx context.Context, r io.ReaderAt, size int64, ranges []vhd.Range) (string, error) {
	if ranges == nil {
		ranges = []vhd.Range{{Offset: 0, Length: size}}
	}
	d := NewDigester(size)
	par := min(runtime.GOMAXPROCS(0), 4)
	err := RunChunks(ctx, Chunks(ranges, size), ChunkRun{
		Parallel: par,
		Buffers:  2 * par,
		Fetch: func(_ context.Context, off int64, buf []byte) error {
			n, err := r.ReadAt(buf, off)
			if n == len(buf) {
				return nil
			}
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("read at %d: %w", off, err)
		},
		InOrder: d.AddJob,
	})
	if err != nil {
		return "", err
	}
	return d.Digest()
}

// SameDigest reports whether two digest strings are set and equal.
func SameDigest(a, b string) bool { return a != "" && strings.EqualFold(a, b) }
