package local

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/imgflow/imgflow/cloud/azsim"
	"github.com/imgflow/imgflow/cloud/transfer"
	"github.com/imgflow/imgflow/vhd"
)

// copySparse copies the ranges of r into dst (already truncated to size)
// chunk by chunk (transfer.RunChunks, a few chunks at once), writing only
// each chunk's non-zero span, so holes and zero chunks stay holes. It
// returns the sparse digest of the content, computed from what it read.
func copySparse(ctx context.Context, dst *os.File, r io.ReaderAt, ranges []vhd.Range, size int64) (string, error) {
	d := transfer.NewDigester(size)
	par := min(runtime.GOMAXPROCS(0), 4)
	err := transfer.RunChunks(ctx, transfer.Chunks(ranges, size), transfer.ChunkRun{
		Parallel: par,
		Buffers:  2 * par,
		Fetch: func(_ context.Context, off int64, buf []byte) error {
			if err := azsim.ReadFull(r, buf, off); err != nil {
				return fmt.Errorf("read source at %d: %w", off, err)
			}
			return nil
		},
		Process: func(_ context.Context, j *transfer.ChunkJob) error {
			_, err := dst.WriteAt(j.SpanBytes(), j.Span.Offset)
			return err
		},
		InOrder: d.AddJob,
	})
	if err != nil {
		return "", err
	}
	return d.Digest()
}

// dataRanges lists the ranges of f that may hold data (vhd.DataRanges:
// SEEK_DATA/SEEK_HOLE), so copying a mostly empty VHD does not read
// gigabytes of holes. Should the filesystem fail to say, the whole of
// size is data; copySparse still skips the zero chunks.
func dataRanges(f *os.File, size int64) []vhd.Range {
	rs, err := vhd.DataRanges(f)
	if err != nil {
		return []vhd.Range{{Offset: 0, Length: size}}
	}
	return rs
}
