package vhd

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"
)

// FooterSize is the size of the VHD footer, which is the last FooterSize
// bytes of every VHD file (and, for dynamic disks, also the first).
const FooterSize = 512

// MiB is one mebibyte. Azure requires the virtual size of a disk to be a
// whole number of MiB.
const MiB = 1 << 20

// Values written by this package and expected in every footer. They are
// constants from the VHD specification, not tunables.
const (
	// Cookie identifies a VHD footer ("conectix", from Connectix, the
	// original author of Virtual PC).
	Cookie = "conectix"
	// FeatureReserved is the features bit the specification says must
	// always be set.
	FeatureReserved uint32 = 0x2
	// FormatVersion1 is the only file format version in use (1.0).
	FormatVersion1 uint32 = 0x00010000
	// FixedDataOffset is the data offset of a fixed disk: fixed disks have
	// no dynamic header, which the specification marks with all ones.
	FixedDataOffset uint64 = 0xFFFFFFFFFFFFFFFF
	// CreatorApp is the creator application this package writes, so a
	// disk's origin can be traced.
	CreatorApp = "imgf"
	// CreatorVersion is the creator version this package writes
	// (major<<16 | minor).
	CreatorVersion uint32 = 0x00010000
	// CreatorOSWindows is the creator host OS that qemu and Hyper-V write
	// ("Wi2k"); this package writes it too because some tools look for it.
	CreatorOSWindows = "Wi2k"
)

// Maximum CHS geometry a footer can express. qemu writes exactly this with
// force_size=on to tell readers that the disk size is CurrentSize, not
// cylinders*heads*sectors (qemu, for one, trusts the geometry otherwise).
const (
	MaxCylinders       = 65535
	MaxHeads           = 16
	MaxSectorsPerTrack = 255
)

// Offsets of the footer fields, from the VHD specification.
const (
	offCookie         = 0
	offFeatures       = 8
	offFormatVersion  = 12
	offDataOffset     = 16
	offTimestamp      = 24
	offCreatorApp     = 28
	offCreatorVersion = 32
	offCreatorOS      = 36
	offOriginalSize   = 40
	offCurrentSize    = 48
	offCylinders      = 56
	offHeads          = 58
	offSectors        = 59
	offDiskType       = 60
	offChecksum       = 64
	offUniqueID       = 68
	offSavedState     = 84
)

// vhdEpoch is the zero of Footer.Timestamp.
var vhdEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// DiskType is the footer's disk type. Only DiskTypeFixed is accepted by
// Azure; the others are listed so errors can name what was found.
type DiskType uint32

// Disk types defined by the VHD specification.
const (
	DiskTypeNone         DiskType = 0
	DiskTypeFixed        DiskType = 2
	DiskTypeDynamic      DiskType = 3
	DiskTypeDifferencing DiskType = 4
)

// String names the disk type the way Azure's error messages do, so a
// message from this package can be matched against one from Azure.
func (t DiskType) String() string {
	switch t {
	case DiskTypeNone:
		return "None"
	case DiskTypeFixed:
		return "Fixed"
	case DiskTypeDynamic:
		return "Dynamic"
	case DiskTypeDifferencing:
		return "Differencing"
	default:
		return fmt.Sprintf("DiskType(%d)", uint32(t))
	}
}

// Footer is the decoded 512-byte VHD footer. Fields keep their on-disk
// representation (raw timestamp, raw byte arrays) so that ParseFooter
// followed by MarshalBinary reproduces the input exactly, provided its
// reserved bytes 85-511 are zero as the specification requires (Footer does
// not keep them).
type Footer struct {
	Cookie        [8]byte
	Features      uint32
	FormatVersion uint32
	// DataOffset is the offset of the dynamic header; FixedDataOffset for
	// fixed disks.
	DataOffset uint64
	// Timestamp is seconds since 2000-01-01 UTC; see Time and SetTime.
	Timestamp       uint32
	CreatorApp      [4]byte
	CreatorVersion  uint32
	CreatorOS       [4]byte
	OriginalSize    uint64
	CurrentSize     uint64
	Cylinders       uint16
	Heads           uint8
	SectorsPerTrack uint8
	DiskType        DiskType
	// Checksum is the value stored in the footer. MarshalBinary ignores it
	// and writes the computed one; see ComputeChecksum.
	Checksum   uint32
	UniqueID   [16]byte
	SavedState byte
}

// Time returns the creation time stored in the footer.
func (f *Footer) Time() time.Time {
	return vhdEpoch.Add(time.Duration(f.Timestamp) * time.Second)
}

// SetTime stores t as the footer's creation time, clamped to the range the
// 32-bit field can hold (2000-01-01 to 2136-02-07) rather than wrapping.
func (f *Footer) SetTime(t time.Time) {
	secs := int64(t.Sub(vhdEpoch) / time.Second)
	switch {
	case t.Before(vhdEpoch):
		secs = 0
	case secs > int64(^uint32(0)):
		secs = int64(^uint32(0))
	}
	f.Timestamp = uint32(secs)
}

// CreatorAppString returns the creator application with trailing spaces and
// NULs removed, for display and comparison ("qem2", "imgf"; Hyper-V's
// "win " becomes "win").
func (f *Footer) CreatorAppString() string {
	return trimField(f.CreatorApp[:])
}

// HasCookie reports whether the footer starts with the "conectix" cookie,
// i.e. whether the bytes it was decoded from are a VHD footer at all.
func (f *Footer) HasCookie() bool {
	return string(f.Cookie[:]) == Cookie
}

// ComputeChecksum returns the checksum the footer should carry: the one's
// complement of the byte sum of the encoded footer, with the checksum field
// counted as zero.
func (f *Footer) ComputeChecksum() uint32 {
	b := f.encode()
	return Checksum(b[:])
}

// MarshalBinary encodes the footer into its 512-byte on-disk form with a
// freshly computed checksum, so a modified footer is always written valid.
// It implements encoding.BinaryMarshaler and never fails.
func (f *Footer) MarshalBinary() ([]byte, error) {
	b := f.encode()
	binary.BigEndian.PutUint32(b[offChecksum:], Checksum(b[:]))
	return b[:], nil
}

// encode lays out all fields big-endian, including the stored Checksum.
func (f *Footer) encode() [FooterSize]byte {
	var b [FooterSize]byte
	be := binary.BigEndian
	copy(b[offCookie:], f.Cookie[:])
	be.PutUint32(b[offFeatures:], f.Features)
	be.PutUint32(b[offFormatVersion:], f.FormatVersion)
	be.PutUint64(b[offDataOffset:], f.DataOffset)
	be.PutUint32(b[offTimestamp:], f.Timestamp)
	copy(b[offCreatorApp:], f.CreatorApp[:])
	be.PutUint32(b[offCreatorVersion:], f.CreatorVersion)
	copy(b[offCreatorOS:], f.CreatorOS[:])
	be.PutUint64(b[offOriginalSize:], f.OriginalSize)
	be.PutUint64(b[offCurrentSize:], f.CurrentSize)
	be.PutUint16(b[offCylinders:], f.Cylinders)
	b[offHeads] = f.Heads
	b[offSectors] = f.SectorsPerTrack
	be.PutUint32(b[offDiskType:], uint32(f.DiskType))
	be.PutUint32(b[offChecksum:], f.Checksum)
	copy(b[offUniqueID:], f.UniqueID[:])
	b[offSavedState] = f.SavedState
	return b
}

// decodeFooter decodes b (FooterSize bytes) without checking anything, so
// Validate can report every problem of a damaged footer instead of stopping
// at the first.
func decodeFooter(b []byte) *Footer {
	be := binary.BigEndian
	f := &Footer{
		Features:        be.Uint32(b[offFeatures:]),
		FormatVersion:   be.Uint32(b[offFormatVersion:]),
		DataOffset:      be.Uint64(b[offDataOffset:]),
		Timestamp:       be.Uint32(b[offTimestamp:]),
		CreatorVersion:  be.Uint32(b[offCreatorVersion:]),
		OriginalSize:    be.Uint64(b[offOriginalSize:]),
		CurrentSize:     be.Uint64(b[offCurrentSize:]),
		Cylinders:       be.Uint16(b[offCylinders:]),
		Heads:           b[offHeads],
		SectorsPerTrack: b[offSectors],
		DiskType:        DiskType(be.Uint32(b[offDiskType:])),
		Checksum:        be.Uint32(b[offChecksum:]),
		SavedState:      b[offSavedState],
	}
	copy(f.Cookie[:], b[offCookie:])
	copy(f.CreatorApp[:], b[offCreatorApp:])
	copy(f.CreatorOS[:], b[offCreatorOS:])
	copy(f.UniqueID[:], b[offUniqueID:])
	return f
}

// Checksum computes the VHD footer checksum of the FooterSize bytes in b:
// the one's complement of the sum of all bytes, skipping the four bytes of
// the checksum field itself. It is exported so callers that patch footers
// in place can recompute it.
func Checksum(b []byte) uint32 {
	var sum uint32
	for i, c := range b {
		if i >= offChecksum && i < offChecksum+4 {
			continue
		}
		sum += uint32(c)
	}
	return ^sum
}

// ParseFooter decodes a footer from exactly FooterSize bytes. It fails with
// ErrNotVHD when the cookie is missing and ErrChecksum when the stored
// checksum does not match, because any other field of such a footer cannot
// be trusted.
func ParseFooter(b []byte) (*Footer, error) {
	if len(b) != FooterSize {
		return nil, fmt.Errorf("parse vhd footer: got %d bytes, want %d", len(b), FooterSize)
	}
	f := decodeFooter(b)
	if !f.HasCookie() {
		return nil, fmt.Errorf("parse vhd footer: cookie is %q, want %q: %w", trimField(f.Cookie[:]), Cookie, ErrNotVHD)
	}
	if want := Checksum(b); f.Checksum != want {
		return nil, fmt.Errorf("parse vhd footer: stored checksum %#08x, computed %#08x: %w", f.Checksum, want, ErrChecksum)
	}
	return f, nil
}

// DecodeFooter decodes a footer from exactly FooterSize bytes, failing
// with ErrNotVHD only when the cookie is missing. Unlike ParseFooter it
// does not verify the checksum: it reads a footer the way the simulated
// Azure targets do, which check only what Azure's documented refusals
// name (cookie, disk type, virtual size).
func DecodeFooter(b []byte) (*Footer, error) {
	if len(b) != FooterSize {
		return nil, fmt.Errorf("decode vhd footer: got %d bytes, want %d: %w", len(b), FooterSize, ErrNotVHD)
	}
	f := decodeFooter(b)
	if !f.HasCookie() {
		return nil, fmt.Errorf("decode vhd footer: cookie is %q, want %q: %w", trimField(f.Cookie[:]), Cookie, ErrNotVHD)
	}
	return f, nil
}

// ReadFooter reads and parses the footer in the last FooterSize bytes of a
// file of the given size, the place every VHD keeps its authoritative copy.
func ReadFooter(r io.ReaderAt, size int64) (*Footer, error) {
	b, err := readFooterBytes(r, size)
	if err != nil {
		return nil, fmt.Errorf("read vhd footer: %w", err)
	}
	f, err := ParseFooter(b)
	if err != nil {
		return nil, fmt.Errorf("read vhd footer: %w", err)
	}
	return f, nil
}

// readFooterBytes returns the last FooterSize bytes of r.
func readFooterBytes(r io.ReaderAt, size int64) ([]byte, error) {
	if size < FooterSize {
		return nil, fmt.Errorf("file is %d bytes, smaller than a %d-byte footer: %w", size, FooterSize, ErrNotVHD)
	}
	b := make([]byte, FooterSize)
	n, err := r.ReadAt(b, size-FooterSize)
	if n == FooterSize {
		// io.ReaderAt may return io.EOF together with a full read at the
		// end of the input.
		return b, nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return nil, fmt.Errorf("read last %d bytes at offset %d: %w", FooterSize, size-FooterSize, err)
}

// trimField renders a fixed-size text field for messages.
func trimField(b []byte) string {
	end := len(b)
	for end > 0 && (b[end-1] == 0 || b[end-1] == ' ') {
		end--
	}
	return string(b[:end])
}
