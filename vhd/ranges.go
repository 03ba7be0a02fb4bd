package vhd

import (
	"bytes"
	"fmt"
	"os"
)

// Range is a half-open byte range [Offset, Offset+Length) of a file or
// blob. It is the one range type of imgflow: cloud's page sources, chunks
// and digests use it too (cloud imports vhd, never the other way).
type Range struct {
	Offset int64 `json:"offset"`
	Length int64 `json:"length"`
}

// End returns the offset just past the range.
func (r Range) End() int64 { return r.Offset + r.Length }

// DataRanges lists the byte ranges of f that may hold data, so an uploader
// reads and sends only those instead of the holes that make up most of a
// sparse disk image. It asks the filesystem with SEEK_DATA/SEEK_HOLE where
// the OS has them; when the OS or filesystem does not, it returns one range
// covering the whole file, which is always correct, just not economical.
// Ranges are sorted, non-overlapping and merged when adjacent; the footer is
// included like any other data. A file without data (empty, or all hole)
// has no ranges: an empty, non-nil slice, so it can go straight into a
// cloud.PageSource, where nil means "unknown: read all of it".
//
// Reported ranges are filesystem-block granular and may contain zeros;
// combine with IsZero to skip those. DataRanges moves and then restores the
// file offset, so it must not run concurrently with Read, Write or Seek on
// f (ReadAt and WriteAt are fine).
func DataRanges(f *os.File) ([]Range, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("list data ranges: %w", err)
	}
	size := st.Size()
	if size <= 0 {
		return []Range{}, nil
	}
	ranges, supported, err := seekDataRanges(f, size)
	if err != nil {
		return nil, fmt.Errorf("list data ranges of %s: %w", f.Name(), err)
	}
	if !supported {
		return []Range{{Offset: 0, Length: size}}, nil
	}
	if ranges == nil {
		return []Range{}, nil
	}
	return ranges, nil
}

// appendRange appends r to sorted ranges, merging it into the last range
// when they touch or overlap; empty ranges are dropped.
func appendRange(ranges []Range, r Range) []Range {
	if r.Length <= 0 {
		return ranges
	}
	if n := len(ranges); n > 0 && r.Offset <= ranges[n-1].End() {
		last := &ranges[n-1]
		last.Length = max(last.End(), r.End()) - last.Offset
		return ranges
	}
	return append(ranges, r)
}

// IsZero reports whether b holds only zero bytes, so an uploader can skip
// all-zero chunks (Azure page blobs read back unwritten pages as zeros).
// b is all zeros exactly when its first byte is zero and every byte equals
// the next: bytes.Equal of b against itself shifted by one is the
// runtime's vectorised compare, several times faster than a loop in Go
// (and one memory access for the race detector instead of one per word).
func IsZero(b []byte) bool {
	if len(b) == 0 {
		return true
	}
	return b[0] == 0 && bytes.Equal(b[1:], b[:len(b)-1])
}
