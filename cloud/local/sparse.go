package local

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"os"
	"slices"

	"github.com/imgflow/imgflow/cloud"
)

// chunkSize is the unit of sparse copying: Azure's maximum Put Page size,
// and the granularity at which all-zero data is left as a hole.
const chunkSize = 4 << 20

// zeros is a read-only chunk of zeros, to detect zero chunks and to hash
// gaps without reading them.
var zeros = make([]byte, chunkSize)

func isZero(b []byte) bool { return bytes.Equal(b, zeros[:len(b)]) }

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
// in chunks, leaving all-zero chunks as holes. With withMD5 it returns the
// hex MD5 of the whole content, hashing the gaps from a zero buffer rather
// than reading holes back from disk.
func copySparse(ctx context.Context, dst *os.File, r io.ReaderAt, ranges []cloud.ByteRange, size int64, withMD5 bool) (string, error) {
	var h hash.Hash
	if withMD5 {
		h = md5.New()
	}
	buf := make([]byte, chunkSize)
	pos := int64(0)
	for _, rg := range ranges {
		hashZeros(h, rg.Offset-pos)
		end := rg.Offset + rg.Length
		for off := rg.Offset; off < end; {
			if err := ctx.Err(); err != nil {
				return "", err
			}
			b := buf[:min(int64(chunkSize), end-off)]
			if err := readFull(r, b, off); err != nil {
				return "", fmt.Errorf("read source at %d: %w", off, err)
			}
			if h != nil {
				h.Write(b)
			}
			if !isZero(b) {
				if _, err := dst.WriteAt(b, off); err != nil {
					return "", err
				}
			}
			off += int64(len(b))
		}
		pos = end
	}
	if h == nil {
		return "", nil
	}
	hashZeros(h, size-pos)
	return hex.EncodeToString(h.Sum(nil)), nil
}

func hashZeros(h hash.Hash, n int64) {
	if h == nil {
		return
	}
	for n > 0 {
		k := min(n, int64(len(zeros)))
		h.Write(zeros[:k])
		n -= k
	}
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
