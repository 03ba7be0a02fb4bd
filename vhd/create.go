package vhd

import (
	"crypto/rand"
	"fmt"
	"os"
	"time"
)

// Geometry returns the CHS geometry the VHD specification's algorithm
// assigns to a disk of size bytes, capped at 65535/16/255. BIOS-era
// consumers (Virtual PC, qemu for most creator apps) derive the disk size
// from it, and it rarely equals the exact size: see NewFooter.
func Geometry(size int64) (cylinders uint16, heads, sectorsPerTrack uint8) {
	const maxSectors = MaxCylinders * MaxHeads * MaxSectorsPerTrack
	total := max(size/512, 0)
	total = min(total, maxSectors)

	var spt, h, cylTimesHeads int64
	if total >= MaxCylinders*MaxHeads*63 {
		spt, h = 255, 16
		cylTimesHeads = total / spt
	} else {
		spt = 17
		cylTimesHeads = total / spt
		h = max((cylTimesHeads+1023)/1024, 4)
		if cylTimesHeads >= h*1024 || h > 16 {
			spt, h = 31, 16
			cylTimesHeads = total / spt
		}
		if cylTimesHeads >= h*1024 {
			spt, h = 63, 16
			cylTimesHeads = total / spt
		}
	}
	return uint16(cylTimesHeads / h), uint8(h), uint8(spt)
}

// NewFooter returns the footer of a fixed disk of virtualSize bytes, stamped
// with now and uniqueID and carrying a valid checksum. It does not check
// virtualSize (a negative one is treated as 0); CreateFixed and Validate do.
//
// The geometry is the specification's (see Geometry) when it describes
// virtualSize exactly. Otherwise the footer carries the maximum geometry
// 65535/16/255, as qemu's force_size=on does, because that is the marker
// that makes geometry-trusting readers use CurrentSize: qemu would
// otherwise see a disk a few sectors short and silently drop its tail in
// `qemu-img convert`.
func NewFooter(virtualSize int64, uniqueID [16]byte, now time.Time) *Footer {
	size := uint64(max(virtualSize, 0))
	f := &Footer{
		Features:       FeatureReserved,
		FormatVersion:  FormatVersion1,
		DataOffset:     FixedDataOffset,
		CreatorVersion: CreatorVersion,
		OriginalSize:   size,
		CurrentSize:    size,
		DiskType:       DiskTypeFixed,
		UniqueID:       uniqueID,
	}
	copy(f.Cookie[:], Cookie)
	copy(f.CreatorApp[:], CreatorApp)
	copy(f.CreatorOS[:], CreatorOSWindows)
	f.SetTime(now)
	c, h, s := Geometry(int64(size))
	if uint64(c)*uint64(h)*uint64(s)*512 != size {
		c, h, s = MaxCylinders, MaxHeads, MaxSectorsPerTrack
	}
	f.Cylinders, f.Heads, f.SectorsPerTrack = c, h, s
	f.Checksum = f.ComputeChecksum()
	return f
}

// NewUniqueID returns a random RFC 4122 version 4 UUID for Footer.UniqueID,
// which VHD consumers use to tell disks apart.
func NewUniqueID() [16]byte {
	var id [16]byte
	_, _ = rand.Read(id[:]) // crypto/rand.Read never fails (Go ≥ 1.24).
	id[6] = id[6]&0x0f | 0x40
	id[8] = id[8]&0x3f | 0x80
	return id
}

// CreateFixed creates an empty fixed VHD at path whose virtual size is
// virtualSize bytes, which must be a positive multiple of MiB so that Azure
// accepts the result. The data area is a hole, so the file takes almost no
// space until written. An existing file is an error unless overwrite is set.
func CreateFixed(path string, virtualSize int64, overwrite bool) (*Info, error) {
	if err := checkCreateSize(virtualSize); err != nil {
		return nil, fmt.Errorf("create fixed vhd %s: %w", path, err)
	}
	return CreateFixedWithFooter(path, NewFooter(virtualSize, NewUniqueID(), time.Now()), overwrite)
}

// CreateFixedWithFooter is CreateFixed with a caller-built footer, for
// callers that need a fixed UniqueID or timestamp (reproducible builds,
// tests). The footer must be of type fixed with a CurrentSize that is a
// positive multiple of MiB; its stored checksum is ignored and recomputed.
func CreateFixedWithFooter(path string, footer *Footer, overwrite bool) (info *Info, err error) {
	if footer == nil {
		return nil, fmt.Errorf("create fixed vhd %s: nil footer", path)
	}
	if footer.DiskType != DiskTypeFixed {
		return nil, fmt.Errorf("create fixed vhd %s: footer disk type is %s, want %s: %w",
			path, footer.DiskType, DiskTypeFixed, ErrDynamic)
	}
	if footer.CurrentSize > uint64(maxVirtualSize) {
		return nil, fmt.Errorf("create fixed vhd %s: virtual size %d is too large", path, footer.CurrentSize)
	}
	virtualSize := int64(footer.CurrentSize)
	if err := checkCreateSize(virtualSize); err != nil {
		return nil, fmt.Errorf("create fixed vhd %s: %w", path, err)
	}
	b, err := footer.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("create fixed vhd %s: encode footer: %w", path, err)
	}

	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if overwrite {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	file, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create fixed vhd: %w", err)
	}
	defer func() {
		if cerr := file.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("create fixed vhd: %w", cerr)
		}
		if err != nil {
			// A half-written VHD would pass for a valid disk of garbage
			// size later; never leave one behind.
			_ = os.Remove(path)
			info = nil
		}
	}()

	// Truncate first so the data area is one hole; only the footer is
	// written.
	fileSize := virtualSize + FooterSize
	if err := file.Truncate(fileSize); err != nil {
		return nil, fmt.Errorf("create fixed vhd: %w", err)
	}
	if _, err := file.WriteAt(b, virtualSize); err != nil {
		return nil, fmt.Errorf("create fixed vhd: write footer: %w", err)
	}
	if err := file.Sync(); err != nil {
		return nil, fmt.Errorf("create fixed vhd: %w", err)
	}
	written, err := ParseFooter(b)
	if err != nil {
		return nil, fmt.Errorf("create fixed vhd %s: %w", path, err)
	}
	return &Info{VirtualSize: virtualSize, FileSize: fileSize, Footer: written}, nil
}

// maxVirtualSize keeps VirtualSize+FooterSize representable as a file size.
const maxVirtualSize = 1<<63 - 1 - FooterSize

// checkCreateSize enforces Azure's size rule before anything is written.
func checkCreateSize(virtualSize int64) error {
	switch {
	case virtualSize <= 0:
		return fmt.Errorf("virtual size %d must be positive: %w", virtualSize, ErrNotAligned)
	case virtualSize%MiB != 0:
		return fmt.Errorf("virtual size %d is not a whole number of MiB (next is %d): %w",
			virtualSize, roundUpMiB(uint64(virtualSize)), ErrNotAligned)
	}
	return nil
}
