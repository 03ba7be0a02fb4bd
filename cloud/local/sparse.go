package local

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"

	"github.com/imgflow/imgflow/cloud"
)

// dataRanges returns the source's data ranges sorted, merged and checked
// against its size; nil Ranges mean the whole blob.
func dataRanges(src cloud.PageSource, ref cloud.BlobRef) ([]cloud.ByteRange, error) {
	if src.Ranges == nil {
		if src.Size == 0 {
			return nil, nil
		}
		if src.Reader == nil {
			return nil, invalidParameter(ref.URL(), "page source of %d bytes has no reader", src.Size)
		}
		return []cloud.ByteRange{{Offset: 0, Length: src.Size}}, nil
	}
	rs := slices.Clone(src.Ranges)
	slices.SortFunc(rs, func(a, b cloud.ByteRange) int { return cmpInt64(a.Offset, b.Offset) })
	var out []cloud.ByteRange
	for _, r := range rs {
		if r.Offset < 0 || r.Length < 0 || r.Offset+r.Length > src.Size {
			return nil, invalidParameter(ref.URL(), "page range [%d, +%d) is outside the blob of %d bytes", r.Offset, r.Length, src.Size)
		}
		if r.Length == 0 {
			continue
		}
		if n := len(out); n > 0 && r.Offset <= out[n-1].Offset+out[n-1].Length {
			last := &out[n-1]
			last.Length = max(last.Offset+last.Length, r.Offset+r.Length) - last.Offset
			continue
		}
		out = append(out, r)
	}
	if len(out) > 0 && src.Reader == nil {
		return nil, invalidParameter(ref.URL(), "page source with data ranges has no reader")
	}
	return out, nil
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// copySparse copies the ranges of r into dst (already truncated to size)
// chunk by chunk (cloud.RunChunks, a few chunks at once), writing only
// each chunk's non-zero span, so holes and zero chunks stay holes. It
// returns the sparse digest of the content, computed from what it read.
func copySparse(ctx context.Context, dst *os.File, r io.ReaderAt, ranges []cloud.ByteRange, size int64) (string, error) {
	d := cloud.NewDigester(size)
	par := min(runtime.GOMAXPROCS(0), 4)
	err := cloud.RunChunks(ctx, cloud.Chunks(ranges, size), cloud.ChunkRun{
		Parallel: par,
		Buffers:  2 * par,
		Fetch: func(_ context.Context, off int64, buf []byte) error {
			if err := readFull(r, buf, off); err != nil {
				return fmt.Errorf("read source at %d: %w", off, err)
			}
			return nil
		},
		Process: func(_ context.Context, j *cloud.ChunkJob) error {
			span := cloud.TrimZeros(j)
			_, err := dst.WriteAt(j.Buf[span.Offset-j.Offset:][:span.Length], span.Offset)
			return err
		},
		InOrder: d.AddJob,
	})
	if err != nil {
		return "", err
	}
	return d.Digest()
}

// readFull reads len(b) bytes at off; a source ending early is an error
// (io.ReaderAt may return io.EOF together with a full read).
func readFull(r io.ReaderAt, b []byte, off int64) error {
	n, err := r.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}
