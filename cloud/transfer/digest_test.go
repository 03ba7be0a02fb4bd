package transfer_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud/transfer"
	"github.com/imgflow/imgflow/vhd"
)

func digestOf(t *testing.T, content []byte, ranges []vhd.Range) string {
	t.Helper()
	d, err := transfer.SparseDigest(context.Background(), bytes.NewReader(content), int64(len(content)), ranges)
	require.NoError(t, err)
	return d
}

func fileDigest(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	st, err := f.Stat()
	require.NoError(t, err)
	ranges, err := vhd.DataRanges(f)
	require.NoError(t, err)
	d, err := transfer.SparseDigest(context.Background(), f, st.Size(), ranges)
	require.NoError(t, err)
	return d
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

func TestDigestHoleEqualsWrittenZeros(t *testing.T) {
	const size = 40<<20 + 512
	content := make([]byte, size)
	copy(content[1<<20:], randomBytes(3<<20))  // chunk 0 and 1
	copy(content[17<<20+100:], []byte("data")) // chunk 4, unaligned
	copy(content[size-512:], randomBytes(512)) // the tail chunk of 512 bytes

	dir := t.TempDir()
	// sparse.img: holes wherever content is zero.
	sparse, err := os.Create(filepath.Join(dir, "sparse.img"))
	require.NoError(t, err)
	require.NoError(t, sparse.Truncate(size))
	for _, r := range []vhd.Range{{Offset: 1 << 20, Length: 3 << 20}, {Offset: 17<<20 + 100, Length: 4}, {Offset: size - 512, Length: 512}} {
		_, err := sparse.WriteAt(content[r.Offset:r.Offset+r.Length], r.Offset)
		require.NoError(t, err)
	}
	require.NoError(t, sparse.Close())
	// dense.img: every byte written, zeros included.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "dense.img"), content, 0o644))

	want := digestOf(t, content, nil)
	assert.Regexp(t, `^sparse-sha256:[0-9a-f]{64}$`, want)
	assert.Equal(t, want, fileDigest(t, filepath.Join(dir, "sparse.img")), "holes")
	assert.Equal(t, want, fileDigest(t, filepath.Join(dir, "dense.img")), "written zeros")
	// Ranges that are too wide, overlap or cover zeros change nothing.
	assert.Equal(t, want, digestOf(t, content, []vhd.Range{{Offset: 0, Length: 20 << 20}, {Offset: 10 << 20, Length: 31<<20 + 512}}))
	assert.Equal(t, want, digestOf(t, content, []vhd.Range{{Offset: size - 512, Length: 512}, {Offset: 17 << 20, Length: 4096}, {Offset: 1 << 20, Length: 3 << 20}}))
}

func TestDigestDiffers(t *testing.T) {
	const size = 16 << 20
	content := make([]byte, size)
	copy(content, randomBytes(5<<20))
	base := digestOf(t, content, nil)

	changed := bytes.Clone(content)
	changed[4<<20+12345] ^= 1
	assert.NotEqual(t, base, digestOf(t, changed, nil), "one changed byte")

	inZeros := bytes.Clone(content)
	inZeros[12<<20] = 1
	assert.NotEqual(t, base, digestOf(t, inZeros, nil), "one byte where there were zeros")

	// The same data at another offset, or in a longer blob.
	moved := make([]byte, size)
	copy(moved[4<<20:], content[:5<<20])
	assert.NotEqual(t, base, digestOf(t, moved, nil))
	longer := append(bytes.Clone(content), make([]byte, 512)...)
	assert.NotEqual(t, base, digestOf(t, longer, nil), "the size counts")
	assert.NotEqual(t, digestOf(t, make([]byte, 512), nil), digestOf(t, make([]byte, 1024), nil), "all zeros: only the size")

	// Data outside the ranges is not read: it counts as zeros.
	assert.Equal(t, digestOf(t, make([]byte, size), nil), digestOf(t, content, []vhd.Range{}))
}

// A 30 GiB sparse disk with a few MiB of data: the digest reads the data
// only, so it takes milliseconds, not the minute hashing 30 GiB would.
func TestDigestOfLargeSparseFileIsFast(t *testing.T) {
	const size = 30<<30 + 512
	path := filepath.Join(t.TempDir(), "os.vhd")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(size))
	for _, off := range []int64{0, 1 << 30, 17<<30 + 4096, size - 4<<20} {
		_, err := f.WriteAt(randomBytes(1<<20), off)
		require.NoError(t, err)
	}
	require.NoError(t, f.Close())

	start := time.Now()
	d := fileDigest(t, path)
	took := time.Since(start)
	t.Logf("digest of a 30 GiB sparse file: %v", took)
	assert.Less(t, took, time.Second)
	assert.Regexp(t, `^sparse-sha256:`, d)
}

func TestChunks(t *testing.T) {
	const size = 3*transfer.ChunkSize + 512
	got := slices.Collect(transfer.Chunks([]vhd.Range{
		{Offset: 3*transfer.ChunkSize + 100, Length: 1000}, // clipped at size
		{Offset: 100, Length: 50},
		{Offset: 120, Length: 100},                     // overlaps
		{Offset: transfer.ChunkSize - 10, Length: 20},  // spans chunks 0 and 1
		{Offset: -5, Length: 3},                        // outside
		{Offset: transfer.ChunkSize + 4096, Length: 0}, // empty
	}, size))
	assert.Equal(t, []transfer.Chunk{
		{Offset: 0, Length: transfer.ChunkSize, Data: vhd.Range{Offset: 100, Length: transfer.ChunkSize - 100}},
		{Offset: transfer.ChunkSize, Length: transfer.ChunkSize, Data: vhd.Range{Offset: transfer.ChunkSize, Length: 10}},
		{Offset: 3 * transfer.ChunkSize, Length: 512, Data: vhd.Range{Offset: 3*transfer.ChunkSize + 100, Length: 412}},
	}, got)
	assert.Equal(t, int64(transfer.ChunkSize-100+10+412), transfer.DataBytes(transfer.Chunks([]vhd.Range{
		{Offset: 100, Length: 50}, {Offset: 120, Length: 100}, {Offset: transfer.ChunkSize - 10, Length: 20}, {Offset: 3*transfer.ChunkSize + 100, Length: 1000},
	}, size)))
	assert.Empty(t, slices.Collect(transfer.Chunks(nil, size)))
}

// RunChunks sets a chunk's Span to the pages from its first to its last
// non-zero byte within its Data; an all-zero chunk has none and is not
// processed.
func TestRunChunksFindsTheNonZeroSpan(t *testing.T) {
	const size = 3 * transfer.ChunkSize
	content := make([]byte, size)
	content[transfer.ChunkSize+5000] = 1
	content[transfer.ChunkSize+9000] = 1
	var spans []vhd.Range
	var written [][]byte
	err := transfer.RunChunks(context.Background(), transfer.Chunks([]vhd.Range{{Offset: transfer.ChunkSize + 100, Length: 1 << 20}, {Offset: 2 * transfer.ChunkSize, Length: 512}}, size), transfer.ChunkRun{
		Fetch: func(_ context.Context, off int64, buf []byte) error {
			copy(buf, content[off:])
			return nil
		},
		Process: func(_ context.Context, j *transfer.ChunkJob) error {
			written = append(written, slices.Clone(j.SpanBytes()))
			return nil
		},
		InOrder: func(j *transfer.ChunkJob) { spans = append(spans, j.Span) },
	})
	require.NoError(t, err)
	assert.Equal(t, []vhd.Range{{Offset: transfer.ChunkSize + 4608, Length: 9216 - 4608}, {}}, spans)
	require.Len(t, written, 1, "the all-zero chunk is not processed")
	assert.Equal(t, content[transfer.ChunkSize+4608:transfer.ChunkSize+9216], written[0])
}

func TestRunChunksBoundsBuffersAndKeepsOrder(t *testing.T) {
	const n = 24
	size := int64(n * transfer.ChunkSize)
	content := make([]byte, size)
	for i := range n {
		if i%3 != 0 { // every third chunk is zeros
			content[int64(i)*transfer.ChunkSize+7] = byte(i)
		}
	}
	var mu sync.Mutex
	bufs := map[*byte]bool{}
	var inFlight, peak, processed atomic.Int32
	var order []int64
	err := transfer.RunChunks(context.Background(), transfer.Chunks([]vhd.Range{{Offset: 0, Length: size}}, size), transfer.ChunkRun{
		Parallel: 4, Buffers: 6,
		Fetch: func(_ context.Context, off int64, buf []byte) error {
			mu.Lock()
			bufs[&buf[:1][0]] = true
			mu.Unlock()
			cur := inFlight.Add(1)
			for {
				p := peak.Load()
				if cur <= p || peak.CompareAndSwap(p, cur) {
					break
				}
			}
			// Later chunks finish first.
			time.Sleep(time.Duration(n-off/transfer.ChunkSize) * 100 * time.Microsecond)
			inFlight.Add(-1)
			copy(buf, content[off:])
			return nil
		},
		Process: func(_ context.Context, j *transfer.ChunkJob) error {
			processed.Add(1)
			assert.True(t, j.HasData())
			return nil
		},
		InOrder: func(j *transfer.ChunkJob) { order = append(order, j.Offset) },
	})
	require.NoError(t, err)
	assert.LessOrEqual(t, len(bufs), 6, "buffers")
	assert.LessOrEqual(t, peak.Load(), int32(4), "workers")
	assert.Equal(t, int32(n-(n+2)/3), processed.Load(), "zero chunks are not processed")
	require.Len(t, order, n)
	assert.True(t, slices.IsSorted(order))
}

func TestRunChunksFirstErrorCancels(t *testing.T) {
	const size = 64 * transfer.ChunkSize
	boom := errors.New("boom")
	var fetched atomic.Int32
	err := transfer.RunChunks(context.Background(), transfer.Chunks([]vhd.Range{{Offset: 0, Length: size}}, size), transfer.ChunkRun{
		Parallel: 2,
		Fetch: func(ctx context.Context, off int64, buf []byte) error {
			fetched.Add(1)
			if off == 3*transfer.ChunkSize {
				return boom
			}
			buf[0] = 1
			return ctx.Err()
		},
	})
	assert.ErrorIs(t, err, boom)
	assert.Less(t, fetched.Load(), int32(20), "the rest was cancelled")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = transfer.RunChunks(ctx, transfer.Chunks([]vhd.Range{{Offset: 0, Length: size}}, size), transfer.ChunkRun{
		Fetch: func(context.Context, int64, []byte) error { return nil },
	})
	assert.ErrorIs(t, err, context.Canceled)
}

func BenchmarkSparseDigestDense(b *testing.B) {
	content := randomBytes(256 << 20)
	b.SetBytes(int64(len(content)))
	for b.Loop() {
		if _, err := transfer.SparseDigest(context.Background(), bytes.NewReader(content), int64(len(content)), nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSparseDigest30GiBSparse(b *testing.B) {
	const size = 30 << 30
	ranges := []vhd.Range{{Offset: 0, Length: 64 << 20}, {Offset: 10 << 30, Length: 64 << 20}}
	r := zeroReaderAt{}
	for b.Loop() {
		if _, err := transfer.SparseDigest(context.Background(), r, size, ranges); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkChunks(b *testing.B) {
	// A fragmented 30 GiB disk: 100,000 ranges of 64 KiB every 300 KiB.
	var ranges []vhd.Range
	for i := range int64(100000) {
		ranges = append(ranges, vhd.Range{Offset: i * 300 << 10, Length: 64 << 10})
	}
	for b.Loop() {
		n := 0
		for range transfer.Chunks(ranges, 30<<30) {
			n++
		}
	}
}

type zeroReaderAt struct{}

func (zeroReaderAt) ReadAt(p []byte, _ int64) (int, error) {
	clear(p)
	p[0] = 1
	return len(p), nil
}

// A chunk's Buf holds zeros before its Data and ends with it, whether its
// buffer is new or reused from a chunk that was full of data (the Azure
// target hashes the whole Buf for Content-MD5): a chunk with one sector of
// data near its start does not hold 4 MiB.
func TestRunChunksBufIsZerosAroundTheData(t *testing.T) {
	const size = 3 * transfer.ChunkSize
	content := bytes.Repeat([]byte{0xff}, size)
	ranges := []vhd.Range{{Offset: 0, Length: transfer.ChunkSize}, {Offset: transfer.ChunkSize + 4096, Length: 512}, {Offset: 3*transfer.ChunkSize - 512, Length: 512}}
	var checked int
	err := transfer.RunChunks(context.Background(), transfer.Chunks(ranges, size), transfer.ChunkRun{
		Parallel: 1, Buffers: 1, // one buffer, reused by every chunk
		Fetch: func(_ context.Context, off int64, buf []byte) error {
			copy(buf, content[off:])
			return nil
		},
		InOrder: func(j *transfer.ChunkJob) {
			lo, hi := j.Data.Offset-j.Offset, j.Data.Offset+j.Data.Length-j.Offset
			assert.True(t, vhd.IsZero(j.Buf[:lo]), "chunk at %d: zeros before its data", j.Offset)
			assert.Len(t, j.Buf, int(hi), "chunk at %d: Buf ends with its data", j.Offset)
			assert.Equal(t, content[j.Data.Offset:j.Data.Offset+j.Data.Length], j.Buf[lo:hi])
			checked++
		},
	})
	require.NoError(t, err)
	assert.Equal(t, 3, checked)
}
