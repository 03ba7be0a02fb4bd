package vhd

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// Sentinel errors, one per Azure rule, so callers can branch with errors.Is
// on the *ValidationError returned by Validate (or on the wrapped errors of
// ParseFooter, ReadFooter and CreateFixed).
var (
	// ErrNotVHD: no "conectix" footer at the end of the file (a raw image,
	// a VHDX or qcow2 file, or a truncated VHD).
	ErrNotVHD = errors.New("not a VHD file")
	// ErrChecksum: the footer checksum does not match its contents, so the
	// footer is corrupt.
	ErrChecksum = errors.New("vhd footer checksum mismatch")
	// ErrDynamic: a dynamic or differencing disk; Azure accepts only fixed.
	ErrDynamic = errors.New("vhd is not of fixed type")
	// ErrDiskType: a disk type the VHD specification does not define.
	ErrDiskType = errors.New("vhd has an unknown disk type")
	// ErrNotAligned: the virtual size is zero or not a whole number of MiB.
	ErrNotAligned = errors.New("vhd virtual size is not a whole number of MiB")
	// ErrSizeMismatch: the file is not exactly virtual size + FooterSize.
	ErrSizeMismatch = errors.New("vhd file size does not match its virtual size")
)

// Info is what a caller needs after validation: the sizes to create the
// page blob with and the footer for display.
type Info struct {
	// VirtualSize is the disk size seen by the VM (Footer.CurrentSize).
	VirtualSize int64
	// FileSize is the size of the file, and of the page blob to upload.
	FileSize int64
	// Footer is the footer read from the end of the file.
	Footer *Footer
}

// Problem is one violated Azure rule: what is wrong and how to fix it.
type Problem struct {
	// Err is the sentinel error of the rule (ErrNotVHD, ErrDynamic, ...).
	Err error
	// Detail says what was found, with the numbers involved.
	Detail string
	// Fix says what to do, usually a qemu-img command line.
	Fix string
}

// Error returns the detail followed by the fix.
func (p Problem) Error() string {
	if p.Fix == "" {
		return p.Detail
	}
	return p.Detail + ": " + p.Fix
}

// Unwrap returns the rule's sentinel error.
func (p Problem) Unwrap() error { return p.Err }

// ValidationError lists every Azure rule a file violates, so a user fixes
// them all in one go instead of one upload attempt per rule.
type ValidationError struct {
	Problems []Problem
}

// Error lists the problems, one per line when there are several.
func (e *ValidationError) Error() string {
	if len(e.Problems) == 1 {
		return "vhd not accepted by Azure: " + e.Problems[0].Error()
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "vhd not accepted by Azure (%d problems):", len(e.Problems))
	for _, p := range e.Problems {
		sb.WriteString("\n  - ")
		sb.WriteString(p.Error())
	}
	return sb.String()
}

// Unwrap returns the sentinel errors of all problems, so errors.Is matches
// any of them.
func (e *ValidationError) Unwrap() []error {
	errs := make([]error, len(e.Problems))
	for i, p := range e.Problems {
		errs[i] = p.Err
	}
	return errs
}

// ValidateFile is Validate on the file at path. Fix commands in the error
// name the file itself.
func ValidateFile(path string) (*Info, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("validate vhd: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("validate vhd: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("validate vhd %s: not a regular file", path)
	}
	info, err := validate(f, st.Size(), path)
	if err != nil {
		return info, fmt.Errorf("validate vhd %s: %w", path, err)
	}
	return info, nil
}

// Validate checks the VHD of the given size in r against every rule Azure
// applies to page-blob disk uploads and returns a *ValidationError listing
// all violations, each with a fix. Read failures are returned as plain
// wrapped errors.
//
// When the footer was found (it has the "conectix" cookie) Info is returned
// even alongside a *ValidationError, so callers can show what the file is.
func Validate(r io.ReaderAt, size int64) (*Info, error) {
	return validate(r, size, "")
}

// validate implements Validate; name is the file name used in fix commands
// ("" for placeholders).
func validate(r io.ReaderAt, size int64, name string) (*Info, error) {
	rawIn := name
	if rawIn == "" {
		rawIn = "in.vhd"
	}
	out := shellQuote(outputName(rawIn))
	if size < FooterSize {
		return nil, &ValidationError{Problems: []Problem{notVHD(r, size, name)}}
	}
	b, err := readFooterBytes(r, size)
	if err != nil {
		return nil, err
	}
	f := decodeFooter(b)
	if !f.HasCookie() {
		return nil, &ValidationError{Problems: []Problem{notVHD(r, size, name)}}
	}

	info := &Info{FileSize: size, Footer: f}
	if f.CurrentSize <= uint64(maxVirtualSize) {
		info.VirtualSize = int64(f.CurrentSize)
	}
	src := qemuSource(f, rawIn)

	var problems []Problem
	if want := Checksum(b); f.Checksum != want {
		problems = append(problems, Problem{
			Err:    ErrChecksum,
			Detail: fmt.Sprintf("footer checksum is %#08x but its contents sum to %#08x, so the footer is corrupt", f.Checksum, want),
			Fix:    "re-copy the file from its source, or rebuild it from the source disk image",
		})
	}

	switch f.DiskType {
	case DiskTypeFixed:
	case DiskTypeDynamic, DiskTypeDifferencing:
		fix := fmt.Sprintf("convert it with `qemu-img convert %s -O vpc -o subformat=fixed,force_size=on %s`", src, out)
		if f.DiskType == DiskTypeDifferencing {
			fix += " (this merges the parent chain, which must be next to the file)"
		}
		problems = append(problems, Problem{
			Err:    ErrDynamic,
			Detail: fmt.Sprintf("disk type is %s; Azure accepts only fixed VHDs (it fails the upload with \"is of Dynamic VHD type. Please retry with fixed VHD type\")", f.DiskType),
			Fix:    fix,
		})
	default:
		problems = append(problems, Problem{
			Err:    ErrDiskType,
			Detail: fmt.Sprintf("disk type is %d, which the VHD format does not define; Azure accepts only fixed (2)", uint32(f.DiskType)),
			Fix:    "the footer is damaged or the file was not written by a VHD tool: rebuild it from the source disk image",
		})
	}

	if f.CurrentSize == 0 || f.CurrentSize%MiB != 0 {
		next := roundUpMiB(f.CurrentSize)
		problems = append(problems, Problem{
			Err: ErrNotAligned,
			Detail: fmt.Sprintf("virtual size %d is not a whole number of MiB (Azure requires it; the next is %d = %d MiB)",
				f.CurrentSize, next, next/MiB),
			Fix: fmt.Sprintf("grow the disk through a raw image: `qemu-img convert %s -O raw disk.raw && qemu-img resize -f raw disk.raw %d && qemu-img convert -f raw -O vpc -o subformat=fixed,force_size=on disk.raw %s`",
				src, next, out),
		})
	}

	// A dynamic disk's file size is unrelated to its virtual size, and for
	// an unknown type nothing can be said; the type problem covers both.
	if f.DiskType == DiskTypeFixed && f.CurrentSize <= uint64(maxVirtualSize) && size != int64(f.CurrentSize)+FooterSize {
		want := int64(f.CurrentSize) + FooterSize
		how := "truncated"
		if size > want {
			how = "padded"
		}
		problems = append(problems, Problem{
			Err: ErrSizeMismatch,
			Detail: fmt.Sprintf("file is %d bytes but a fixed VHD of virtual size %d must be %d bytes (virtual size + %d-byte footer); it looks %s by %d bytes",
				size, f.CurrentSize, want, FooterSize, how, abs(size-want)),
			Fix: "re-copy or re-download the file completely, or rebuild it from the source disk image",
		})
	} else if f.DiskType == DiskTypeFixed && f.CurrentSize > uint64(maxVirtualSize) {
		problems = append(problems, Problem{
			Err:    ErrSizeMismatch,
			Detail: fmt.Sprintf("virtual size %d is larger than any file can be, so the footer is damaged", f.CurrentSize),
			Fix:    "rebuild the VHD from the source disk image",
		})
	}

	if len(problems) > 0 {
		return info, &ValidationError{Problems: problems}
	}
	return info, nil
}

// notVHD describes a file without a footer, recognising the formats people
// most often upload by mistake so the fix names the right qemu-img input
// format.
func notVHD(r io.ReaderAt, size int64, name string) Problem {
	if name == "" {
		name = "disk.img"
	}
	in, out := shellQuote(name), shellQuote(outputName(name))
	p := Problem{Err: ErrNotVHD}
	convert := func(format string) string {
		return fmt.Sprintf("convert it with `qemu-img convert -f %s -O vpc -o subformat=fixed,force_size=on %s %s` (its virtual size, shown by `qemu-img info`, must be a whole number of MiB)", format, in, out)
	}

	var head [8]byte
	n, _ := r.ReadAt(head[:], 0)
	magic := string(head[:n])
	switch {
	case size < FooterSize:
		p.Detail = fmt.Sprintf("file is %d bytes, too small to hold the %d-byte VHD footer", size, FooterSize)
		p.Fix = "check that the right file was given and that it was copied completely"
	case magic == "vhdxfile":
		p.Detail = "file is a VHDX, but Azure accepts only VHD"
		p.Fix = convert("vhdx")
	case strings.HasPrefix(magic, "QFI\xfb"):
		p.Detail = "file is a qcow2 image, but Azure accepts only VHD"
		p.Fix = convert("qcow2")
	case magic == Cookie:
		p.Detail = fmt.Sprintf("file starts with a VHD footer copy but has no footer (cookie %q) in its last %d bytes, so it is truncated", Cookie, FooterSize)
		p.Fix = "re-copy or re-download the file completely"
	default:
		p.Detail = fmt.Sprintf("no VHD footer (cookie %q) in the last %d bytes; the file looks like a raw disk image (or a truncated VHD)", Cookie, FooterSize)
		if size%MiB == 0 {
			p.Fix = fmt.Sprintf("if it is a raw image, convert it with `qemu-img convert -f raw -O vpc -o subformat=fixed,force_size=on %s %s`", in, out)
		} else {
			next := roundUpMiB(uint64(size))
			p.Fix = fmt.Sprintf("if it is a raw image, grow it to a whole number of MiB and convert it: `qemu-img resize -f raw %s %d && qemu-img convert -f raw -O vpc -o subformat=fixed,force_size=on %s %s`", in, next, in, out)
		}
	}
	return p
}

// qemuSource returns the qemu-img input arguments that read the disk at its
// true size. qemu derives a VHD's size from the CHS geometry unless the
// creator app is one it knows to use CurrentSize or the geometry is the
// maximum; when that CHS size differs from CurrentSize, a plain `-f vpc`
// would convert a disk of the wrong size, so the current-size override is
// spelled out.
func qemuSource(f *Footer, name string) string {
	plain := "-f vpc " + shellQuote(name)
	switch string(f.CreatorApp[:]) {
	case "win ", "qem2", "d2v ", "CTXS", "tap\x00":
		return plain
	}
	chs := uint64(f.Cylinders) * uint64(f.Heads) * uint64(f.SectorsPerTrack)
	if chs == MaxCylinders*MaxHeads*MaxSectorsPerTrack || chs*512 == f.CurrentSize {
		return plain
	}
	// Commas separate image options, so qemu wants them doubled in values.
	return "--image-opts " + shellQuote("driver=vpc,force_size_calc=current_size,file.filename="+strings.ReplaceAll(name, ",", ",,"))
}

// outputName suggests where a fix command writes the converted disk:
// disk.img becomes disk.vhd and disk.vhd becomes disk-fixed.vhd, never
// overwriting the input.
func outputName(name string) string {
	base := strings.TrimSuffix(name, filepath.Ext(name))
	if filepath.Ext(name) == ".vhd" || base == "" {
		return base + "-fixed.vhd"
	}
	return base + ".vhd"
}

// roundUpMiB returns the smallest positive multiple of MiB that is >= n.
func roundUpMiB(n uint64) uint64 {
	switch {
	case n == 0:
		return MiB
	case n > math.MaxUint64-MiB:
		// Only a damaged footer gets here; avoid wrapping around.
		return n &^ (MiB - 1)
	}
	return (n + MiB - 1) / MiB * MiB
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// shellQuote quotes s for a POSIX shell when it holds anything but plainly
// safe characters, so fix commands can be pasted as they are.
func shellQuote(s string) string {
	safe := s != ""
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_./+=:,@%", c)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
