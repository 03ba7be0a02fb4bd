package vhd

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// covered reports whether [off, off+n) lies inside one of ranges.
func covered(ranges []Range, off, n int64) bool {
	for _, r := range ranges {
		if off >= r.Offset && off+n <= r.End() {
			return true
		}
	}
	return false
}

// overlaps reports whether any range touches [off, off+n).
func overlaps(ranges []Range, off, n int64) bool {
	for _, r := range ranges {
		if r.Offset < off+n && off < r.End() {
			return true
		}
	}
	return false
}

func requireCanonical(t *testing.T, ranges []Range, size int64) {
	t.Helper()
	for i, r := range ranges {
		require.Positive(t, r.Length, "range %d", i)
		require.GreaterOrEqual(t, r.Offset, int64(0))
		require.LessOrEqual(t, r.End(), size)
		if i > 0 {
			require.Greater(t, r.Offset, ranges[i-1].End(), "sorted, non-overlapping, merged: %v", ranges)
		}
	}
}

func TestDataRangesSparse(t *testing.T) {
	const size = 16 * MiB
	path := filepath.Join(t.TempDir(), "sparse.vhd")
	_, err := CreateFixed(path, size, false)
	require.NoError(t, err)

	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	data := bytes.Repeat([]byte{0xab}, 5000)
	_, err = f.WriteAt(data, MiB)
	require.NoError(t, err)
	_, err = f.Seek(123, io.SeekStart)
	require.NoError(t, err)

	ranges, err := DataRanges(f)
	require.NoError(t, err)
	fileSize := int64(size + FooterSize)
	requireCanonical(t, ranges, fileSize)
	t.Logf("ranges: %v", ranges)

	assert.True(t, covered(ranges, MiB, int64(len(data))), "written data is reported")
	assert.True(t, covered(ranges, size, FooterSize), "footer is reported")

	pos, err := f.Seek(0, io.SeekCurrent)
	require.NoError(t, err)
	assert.Equal(t, int64(123), pos, "file offset restored")

	if len(ranges) == 1 && ranges[0] == (Range{0, fileSize}) {
		t.Log("filesystem does not report holes; fell back to the whole file")
		return
	}
	var total int64
	for _, r := range ranges {
		total += r.Length
	}
	assert.Less(t, total, fileSize/16, "holes are not reported")
	assert.False(t, overlaps(ranges, 0, 512*1024), "leading hole not reported")
	assert.False(t, overlaps(ranges, 4*MiB, 8*MiB), "middle hole not reported")
}

func TestDataRangesDenseAndEmpty(t *testing.T) {
	dir := t.TempDir()
	dense := filepath.Join(dir, "dense")
	require.NoError(t, os.WriteFile(dense, bytes.Repeat([]byte{1}, 300000), 0o644))
	f, err := os.Open(dense)
	require.NoError(t, err)
	defer f.Close()
	ranges, err := DataRanges(f)
	require.NoError(t, err)
	assert.Equal(t, []Range{{0, 300000}}, ranges)

	empty := filepath.Join(dir, "empty")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	e, err := os.Open(empty)
	require.NoError(t, err)
	defer e.Close()
	ranges, err = DataRanges(e)
	require.NoError(t, err)
	assert.Empty(t, ranges)
	assert.NotNil(t, ranges, "no data is an empty slice; nil would mean all of it to cloud.PageSource")

	closed, err := os.Open(dense)
	require.NoError(t, err)
	require.NoError(t, closed.Close())
	_, err = DataRanges(closed)
	assert.Error(t, err)
}

func TestAppendRange(t *testing.T) {
	var rs []Range
	rs = appendRange(rs, Range{0, 10})
	rs = appendRange(rs, Range{10, 5}) // adjacent: merged
	rs = appendRange(rs, Range{12, 2}) // inside: merged
	rs = appendRange(rs, Range{20, 0}) // empty: dropped
	rs = appendRange(rs, Range{30, 5})
	assert.Equal(t, []Range{{0, 15}, {30, 5}}, rs)
	assert.Equal(t, int64(35), rs[1].End())
}

func TestIsZero(t *testing.T) {
	assert.True(t, IsZero(nil))
	for n := 0; n <= 100; n++ {
		b := make([]byte, n)
		require.True(t, IsZero(b), "len %d", n)
		for i := range n {
			b[i] = 1
			require.False(t, IsZero(b), "len %d, non-zero at %d", n, i)
			b[i] = 0
		}
	}
	big := make([]byte, 1<<20+3)
	assert.True(t, IsZero(big))
	big[len(big)-1] = 0x80
	assert.False(t, IsZero(big))
	// Unaligned start.
	assert.True(t, IsZero(make([]byte, 77)[3:]))
}

func BenchmarkIsZero(b *testing.B) {
	buf := make([]byte, 4<<20)
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		if !IsZero(buf) {
			b.Fatal("not zero")
		}
	}
}
