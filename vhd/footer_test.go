package vhd

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var testID = [16]byte{0: 0xde, 1: 0xad, 2: 0xbe, 3: 0xef, 15: 0x01}

func TestFooterRoundTrip(t *testing.T) {
	now := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	f := NewFooter(30*MiB, testID, now)

	b, err := f.MarshalBinary()
	require.NoError(t, err)
	require.Len(t, b, FooterSize)

	got, err := ParseFooter(b)
	require.NoError(t, err)
	assert.Equal(t, f, got)
	assert.Equal(t, now, got.Time())
	assert.Equal(t, "imgf", got.CreatorAppString())
	assert.Equal(t, DiskTypeFixed, got.DiskType)
	assert.Equal(t, uint64(30*MiB), got.CurrentSize)
	assert.Equal(t, uint64(30*MiB), got.OriginalSize)
	assert.Equal(t, FixedDataOffset, got.DataOffset)
	assert.Equal(t, testID, got.UniqueID)

	again, err := got.MarshalBinary()
	require.NoError(t, err)
	assert.Equal(t, b, again, "parse+marshal must reproduce the bytes")
}

func TestFooterLayout(t *testing.T) {
	f := NewFooter(2*MiB, testID, time.Date(2000, 1, 1, 0, 1, 0, 0, time.UTC))
	b, err := f.MarshalBinary()
	require.NoError(t, err)
	be := binary.BigEndian

	assert.Equal(t, "conectix", string(b[0:8]))
	assert.Equal(t, uint32(2), be.Uint32(b[8:]))
	assert.Equal(t, uint32(0x00010000), be.Uint32(b[12:]))
	assert.Equal(t, uint64(0xFFFFFFFFFFFFFFFF), be.Uint64(b[16:]))
	assert.Equal(t, uint32(60), be.Uint32(b[24:]))
	assert.Equal(t, "imgf", string(b[28:32]))
	assert.Equal(t, "Wi2k", string(b[36:40]))
	assert.Equal(t, uint64(2*MiB), be.Uint64(b[40:]))
	assert.Equal(t, uint64(2*MiB), be.Uint64(b[48:]))
	assert.Equal(t, uint32(2), be.Uint32(b[60:]))
	assert.Equal(t, testID[:], b[68:84])
	assert.True(t, IsZero(b[84:]), "saved state and reserved bytes are zero")

	// Checksum: one's complement of the byte sum without the field.
	var sum uint32
	for i, c := range b {
		if i < 64 || i >= 68 {
			sum += uint32(c)
		}
	}
	assert.Equal(t, ^sum, be.Uint32(b[64:]))
	assert.Equal(t, ^sum, f.Checksum)
}

func TestMarshalRecomputesChecksum(t *testing.T) {
	f := NewFooter(4*MiB, testID, time.Now())
	f.CurrentSize = 8 * MiB // stale f.Checksum
	b, err := f.MarshalBinary()
	require.NoError(t, err)
	got, err := ParseFooter(b)
	require.NoError(t, err)
	assert.Equal(t, uint64(8*MiB), got.CurrentSize)
	assert.NotEqual(t, f.Checksum, got.Checksum)
}

func TestParseFooterCorruptByte(t *testing.T) {
	b, err := NewFooter(2*MiB, testID, time.Now()).MarshalBinary()
	require.NoError(t, err)

	// Every byte but the cookie is covered by the checksum.
	for _, off := range []int{8, 24, 48, 59, 60, 70, 84, 300, 511} {
		c := bytes.Clone(b)
		c[off] ^= 0x40
		_, err := ParseFooter(c)
		assert.ErrorIs(t, err, ErrChecksum, "byte %d", off)
	}
	c := bytes.Clone(b)
	c[64] ^= 0x01 // the checksum itself
	_, err = ParseFooter(c)
	assert.ErrorIs(t, err, ErrChecksum)
}

func TestParseFooterRejects(t *testing.T) {
	_, err := ParseFooter(make([]byte, 100))
	assert.Error(t, err)

	_, err = ParseFooter(make([]byte, FooterSize))
	assert.ErrorIs(t, err, ErrNotVHD)

	b, _ := NewFooter(2*MiB, testID, time.Now()).MarshalBinary()
	copy(b, "vhdxfile")
	_, err = ParseFooter(b)
	assert.ErrorIs(t, err, ErrNotVHD)
	assert.False(t, errors.Is(err, ErrChecksum))
}

func TestReadFooter(t *testing.T) {
	b, _ := NewFooter(MiB, testID, time.Now()).MarshalBinary()
	file := append(make([]byte, MiB), b...)

	f, err := ReadFooter(bytes.NewReader(file), int64(len(file)))
	require.NoError(t, err)
	assert.Equal(t, uint64(MiB), f.CurrentSize)

	_, err = ReadFooter(bytes.NewReader(file[:100]), 100)
	assert.ErrorIs(t, err, ErrNotVHD)

	// A size larger than the data is a read error, not a panic.
	_, err = ReadFooter(bytes.NewReader(file), int64(len(file))+10)
	assert.Error(t, err)
}

func TestFooterTime(t *testing.T) {
	var f Footer
	f.SetTime(time.Date(1999, 1, 1, 0, 0, 0, 0, time.UTC))
	assert.Equal(t, uint32(0), f.Timestamp)
	f.SetTime(time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC))
	assert.Equal(t, ^uint32(0), f.Timestamp)
	ts := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	f.SetTime(ts)
	assert.Equal(t, ts, f.Time())
}

func TestDiskTypeString(t *testing.T) {
	assert.Equal(t, "Fixed", DiskTypeFixed.String())
	assert.Equal(t, "Dynamic", DiskTypeDynamic.String())
	assert.Equal(t, "Differencing", DiskTypeDifferencing.String())
	assert.Equal(t, "DiskType(7)", DiskType(7).String())
}

func TestGeometry(t *testing.T) {
	cases := []struct {
		size    int64
		c       uint16
		h, s    uint8
		comment string
	}{
		// Values qemu-img writes without force_size (it rounds the size up
		// to the geometry first): see testdata/vhd.
		{3168256, 91, 4, 17, "qemu 3M"},
		{2123776, 61, 4, 17, "qemu 2M"},
		{31473664, 904, 4, 17, "qemu 30M"},
		{0, 0, 4, 17, "empty"},
		{0xf0010e000, 30841, 16, 255, "qemu 60G"},
		{0xa0015e000, 20561, 16, 255, "qemu 40G"},
		{1 << 40, 65535, 16, 255, "capped"},
	}
	for _, tc := range cases {
		c, h, s := Geometry(tc.size)
		assert.Equal(t, []int{int(tc.c), int(tc.h), int(tc.s)}, []int{int(c), int(h), int(s)}, tc.comment)
	}
}

func TestNewFooterGeometry(t *testing.T) {
	// CHS cannot describe 30 MiB exactly: use the max-geometry marker so
	// geometry-trusting readers (qemu) use CurrentSize.
	f := NewFooter(30*MiB, testID, time.Now())
	assert.Equal(t, []int{65535, 16, 255}, []int{int(f.Cylinders), int(f.Heads), int(f.SectorsPerTrack)})

	// A size the geometry describes exactly keeps the standard geometry.
	exact := int64(91 * 4 * 17 * 512)
	f = NewFooter(exact, testID, time.Now())
	assert.Equal(t, []int{91, 4, 17}, []int{int(f.Cylinders), int(f.Heads), int(f.SectorsPerTrack)})

	f = NewFooter(-5, testID, time.Now())
	assert.Equal(t, uint64(0), f.CurrentSize)
}

// FuzzFooter checks that no input panics ParseFooter or Validate, and that
// every footer ParseFooter accepts re-encodes to the same bytes.
func FuzzFooter(f *testing.F) {
	good, _ := NewFooter(2*MiB, testID, time.Unix(1e9, 0)).MarshalBinary()
	f.Add(good)
	f.Add(make([]byte, FooterSize))
	f.Add([]byte("conectix"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == FooterSize {
			// Give the fuzzer valid checksums to get past the check.
			be := binary.BigEndian
			fixed := bytes.Clone(b)
			copy(fixed, Cookie)
			clear(fixed[offSavedState+1:]) // reserved: not kept by Footer
			be.PutUint32(fixed[offChecksum:], Checksum(fixed))
			ft, err := ParseFooter(fixed)
			if err != nil {
				t.Fatalf("valid checksum and cookie rejected: %v", err)
			}
			out, _ := ft.MarshalBinary()
			if !bytes.Equal(out, fixed) {
				t.Fatal("round trip changed the footer")
			}
		}
		_, _ = ParseFooter(b)
		_, _ = Validate(bytes.NewReader(b), int64(len(b)))
		_, _ = Validate(bytes.NewReader(b), int64(len(b))+1000)
	})
}

func TestDecodeFooterSkipsChecksum(t *testing.T) {
	f := NewFooter(2*MiB, [16]byte{1}, time.Unix(1e9, 0))
	b, err := f.MarshalBinary()
	require.NoError(t, err)
	b[offChecksum] ^= 0xff
	_, err = ParseFooter(b)
	require.ErrorIs(t, err, ErrChecksum)
	got, err := DecodeFooter(b)
	require.NoError(t, err, "DecodeFooter does not verify the checksum")
	assert.Equal(t, uint64(2*MiB), got.CurrentSize)
	assert.Equal(t, DiskTypeFixed, got.DiskType)

	_, err = DecodeFooter(make([]byte, FooterSize))
	require.ErrorIs(t, err, ErrNotVHD)
	_, err = DecodeFooter([]byte(Cookie))
	require.ErrorIs(t, err, ErrNotVHD, "a short footer is not a VHD")
}
