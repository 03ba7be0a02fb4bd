package transfer_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud/transfer"
	"github.com/imgflow/imgflow/vhd"
)

func piece(off, n int64) transfer.Chunk {
	return transfer.Chunk{Offset: off, Length: n, Data: vhd.Range{Offset: off, Length: n}}
}

func TestPiecesFollowTheDataNotTheChunkGrid(t *testing.T) {
	const c = transfer.ChunkSize
	const size = 8 * c
	got := slices.Collect(transfer.Pieces([]vhd.Range{
		{Offset: c - 4096, Length: c},               // one request, though it crosses a chunk boundary
		{Offset: 3 * c, Length: 512},                // ...
		{Offset: 3*c + 512 + 8192, Length: 1024},    // 8 KiB away: merged with the one before
		{Offset: 5 * c, Length: 2*c + 4096},         // cut into 4 MiB pieces
		{Offset: 7*c + 8192 + 100<<10, Length: 512}, // 100 KiB away: a request of its own
		{Offset: size - 512, Length: 4096},          // clipped at size
	}, size, 64<<10))
	assert.Equal(t, []transfer.Chunk{
		piece(c-4096, c),
		piece(3*c, 512+8192+1024),
		piece(5*c, c), piece(6*c, c), piece(7*c, 4096),
		piece(7*c+8192+100<<10, 512),
		piece(size-512, 512),
	}, got)
	assert.Equal(t, int64(c+512+8192+1024+2*c+4096+512+512), transfer.DataBytes(transfer.Pieces([]vhd.Range{
		{Offset: c - 4096, Length: c}, {Offset: 3 * c, Length: 512}, {Offset: 3*c + 512 + 8192, Length: 1024},
		{Offset: 5 * c, Length: 2*c + 4096}, {Offset: 7*c + 8192 + 100<<10, Length: 512}, {Offset: size - 512, Length: 4096},
	}, size, 64<<10)))
	assert.Empty(t, slices.Collect(transfer.Pieces(nil, size, 64<<10)))
}

// The digest assembled from pieces in order (Digester.Write) is the
// digest computed chunk by chunk, for random extents, pieces and zeros.
// Blobs of up to six chunks, extents of up to three: extents start,
// end and span chunk boundaries. One buffer for every round: under the
// race detector each fresh 48 MiB allocation cost seconds of page
// faults (its shadow memory included).
func TestDigesterWriteOfPiecesEqualsSparseDigest(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 6*transfer.ChunkSize)
	for round := range 20 {
		size := int64(r.IntN(6*transfer.ChunkSize)/512*512 + 512)
		content := buf[:size]
		clear(content)
		var ranges []vhd.Range
		for range r.IntN(12) {
			off := r.Int64N(size) / 512 * 512
			n := min(size-off, (r.Int64N(3*transfer.ChunkSize)/512+1)*512)
			for i := off; i < off+n; i += 1 + r.Int64N(4096) {
				content[i] = byte(r.IntN(255) + 1)
			}
			if r.IntN(4) == 0 {
				clear(content[off : off+n]) // written zeros
			}
			ranges = append(ranges, vhd.Range{Offset: off, Length: n})
		}
		d := transfer.NewDigester(size)
		for p := range transfer.Pieces(ranges, size, int64(r.IntN(2))*transfer.MergeGap) {
			d.Write(p.Offset, content[p.Offset:p.Offset+p.Length])
		}
		got, err := d.Digest()
		require.NoError(t, err)
		assert.Equal(t, digestOf(t, content, nil), got, "round %d: size %d, ranges %v", round, size, ranges)
	}
}

func TestDigesterWriteRejectsPiecesOutOfOrder(t *testing.T) {
	d := transfer.NewDigester(3 * transfer.ChunkSize)
	d.Write(transfer.ChunkSize, []byte{1})
	d.Write(512, []byte{1})
	_, err := d.Digest()
	require.ErrorContains(t, err, "out of order")

	d = transfer.NewDigester(transfer.ChunkSize)
	d.Write(transfer.ChunkSize-1, []byte{1, 2})
	_, err = d.Digest()
	require.ErrorContains(t, err, "past the end")
}

// A transfer's pieces reach the digest through RunChunks with NoSums:
// the pieces are fetched and checked for data, never summed.
func TestRunChunksWithoutSums(t *testing.T) {
	const size = 3 * transfer.ChunkSize
	content := make([]byte, size)
	content[transfer.ChunkSize+5] = 7
	var seen []transfer.ChunkJob
	err := transfer.RunChunks(context.Background(), transfer.Pieces([]vhd.Range{{Offset: 0, Length: 2 * transfer.ChunkSize}}, size, 0), transfer.ChunkRun{
		Parallel: 2,
		NoSums:   true,
		Fetch: func(_ context.Context, off int64, buf []byte) error {
			copy(buf, content[off:])
			return nil
		},
		InOrder: func(j *transfer.ChunkJob) {
			seen = append(seen, transfer.ChunkJob{Chunk: j.Chunk, Span: j.Span, Sum: j.Sum})
		},
	})
	require.NoError(t, err)
	assert.Equal(t, []transfer.ChunkJob{
		{Chunk: piece(0, transfer.ChunkSize)},
		{Chunk: piece(transfer.ChunkSize, transfer.ChunkSize), Span: vhd.Range{Offset: transfer.ChunkSize, Length: 512}},
	}, seen)
}
