package vhd

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Fixtures made by scripts/make-vhd-fixtures.sh with qemu-img.
const fixtureDir = "../testdata/vhd"

func fixture(name string) string { return filepath.Join(fixtureDir, name) }

// problemErrs returns the sentinel errors in err's *ValidationError.
func problemErrs(t *testing.T, err error) []error {
	t.Helper()
	var ve *ValidationError
	require.ErrorAs(t, err, &ve)
	var errs []error
	for _, p := range ve.Problems {
		assert.NotEmpty(t, p.Detail)
		assert.NotEmpty(t, p.Fix, "every problem says what to do: %s", p.Detail)
		errs = append(errs, p.Err)
	}
	return errs
}

// copyFixture copies a fixture into a temp dir so a test can damage it.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(fixture(name))
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, b, 0o644))
	return path
}

func TestValidateQemuFixed(t *testing.T) {
	info, err := ValidateFile(fixture("fixed-2m.vhd"))
	require.NoError(t, err)
	assert.Equal(t, int64(2*MiB), info.VirtualSize)
	assert.Equal(t, int64(2*MiB+FooterSize), info.FileSize)
	assert.Equal(t, "qem2", info.Footer.CreatorAppString())
	assert.Equal(t, "Wi2k", string(info.Footer.CreatorOS[:]))
	assert.Equal(t, DiskTypeFixed, info.Footer.DiskType)
	assert.Equal(t, []int{65535, 16, 255}, []int{int(info.Footer.Cylinders), int(info.Footer.Heads), int(info.Footer.SectorsPerTrack)})

	// ReadFooter agrees and the footer re-encodes byte for byte.
	raw, err := os.ReadFile(fixture("fixed-2m.vhd"))
	require.NoError(t, err)
	f, err := ReadFooter(bytes.NewReader(raw), int64(len(raw)))
	require.NoError(t, err)
	b, err := f.MarshalBinary()
	require.NoError(t, err)
	assert.Equal(t, raw[len(raw)-FooterSize:], b)
}

func TestValidateQemuUnaligned(t *testing.T) {
	info, err := ValidateFile(fixture("fixed-unaligned.vhd"))
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrNotAligned)
	assert.Equal(t, []error{ErrNotAligned}, problemErrs(t, err))
	require.NotNil(t, info, "info is returned when the footer was read")
	assert.Equal(t, int64(3168256), info.VirtualSize)
	assert.Contains(t, err.Error(), "virtual size 3168256 is not a whole number of MiB")
	assert.Contains(t, err.Error(), "qemu-img resize -f raw disk.raw 4194304")
	assert.Contains(t, err.Error(), "subformat=fixed,force_size=on")
}

func TestValidateQemuDynamic(t *testing.T) {
	info, err := ValidateFile(fixture("dynamic-2m.vhd"))
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrDynamic)
	assert.False(t, errors.Is(err, ErrSizeMismatch), "a dynamic file's size is not checked")
	// qemu rounded the 2M dynamic disk to its CHS geometry, so it is both
	// dynamic and unaligned, and both are reported.
	assert.ElementsMatch(t, []error{ErrDynamic, ErrNotAligned}, problemErrs(t, err))
	require.NotNil(t, info)
	assert.Equal(t, DiskTypeDynamic, info.Footer.DiskType)
	assert.Contains(t, err.Error(), "Dynamic VHD type")
	assert.Contains(t, err.Error(), "2 problems")
}

func TestValidateRaw(t *testing.T) {
	info, err := ValidateFile(fixture("raw-1m.img"))
	assert.Nil(t, info)
	assert.ErrorIs(t, err, ErrNotVHD)
	assert.Equal(t, []error{ErrNotVHD}, problemErrs(t, err))
	assert.Contains(t, err.Error(), "qemu-img convert -f raw -O vpc -o subformat=fixed,force_size=on")
}

func TestValidateCorruptFooter(t *testing.T) {
	path := copyFixture(t, "fixed-2m.vhd")
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	st, err := f.Stat()
	require.NoError(t, err)
	// Flip a bit of the unique ID: only the checksum catches it.
	_, err = f.WriteAt([]byte{0xff}, st.Size()-FooterSize+70)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	info, err := ValidateFile(path)
	assert.ErrorIs(t, err, ErrChecksum)
	assert.Equal(t, []error{ErrChecksum}, problemErrs(t, err))
	assert.NotNil(t, info)

	_, err = ReadFooter(bytes.NewReader(mustRead(t, path)), st.Size())
	assert.ErrorIs(t, err, ErrChecksum)
}

func TestValidateTruncated(t *testing.T) {
	for _, cut := range []int64{1, FooterSize, MiB} {
		path := copyFixture(t, "fixed-2m.vhd")
		st, err := os.Stat(path)
		require.NoError(t, err)
		require.NoError(t, os.Truncate(path, st.Size()-cut))

		_, err = ValidateFile(path)
		assert.ErrorIs(t, err, ErrNotVHD, "cut %d", cut)
	}

	// Truncated dynamic disk: the footer copy at the start gives it away.
	path := copyFixture(t, "dynamic-2m.vhd")
	require.NoError(t, os.Truncate(path, 1024))
	_, err := ValidateFile(path)
	assert.ErrorIs(t, err, ErrNotVHD)
	assert.Contains(t, err.Error(), "truncated")
}

func TestValidateSizeMismatch(t *testing.T) {
	// A fixed footer claiming 2 MiB in front of only 1 MiB of data, as
	// left by a tool that copied the start and the footer of a disk.
	b, _ := NewFooter(2*MiB, testID, time.Now()).MarshalBinary()
	file := append(make([]byte, MiB), b...)
	info, err := Validate(bytes.NewReader(file), int64(len(file)))
	assert.Equal(t, []error{ErrSizeMismatch}, problemErrs(t, err))
	assert.Contains(t, err.Error(), "truncated by 1048576 bytes")
	require.NotNil(t, info)
	assert.Equal(t, int64(2*MiB), info.VirtualSize)
}

func TestValidateAllProblems(t *testing.T) {
	f := NewFooter(MiB, testID, time.Now())
	f.DiskType = DiskTypeDifferencing
	f.CurrentSize = 1000
	b, _ := f.MarshalBinary()
	b[100] = 1 // corrupt after checksumming
	file := append(make([]byte, 512), b...)

	_, err := Validate(bytes.NewReader(file), int64(len(file)))
	assert.ElementsMatch(t, []error{ErrChecksum, ErrDynamic, ErrNotAligned}, problemErrs(t, err))
	for _, want := range []error{ErrChecksum, ErrDynamic, ErrNotAligned} {
		assert.ErrorIs(t, err, want)
	}

	f = NewFooter(MiB, testID, time.Now())
	f.DiskType = 9
	f.CurrentSize = 0
	b, _ = f.MarshalBinary()
	_, err = Validate(bytes.NewReader(b), int64(len(b)))
	assert.ElementsMatch(t, []error{ErrDiskType, ErrNotAligned}, problemErrs(t, err))
}

func TestValidateSniffsFormats(t *testing.T) {
	for magic, want := range map[string]string{
		"vhdxfile":                "-f vhdx",
		"QFI\xfb\x00\x00\x00\x03": "-f qcow2",
	} {
		file := make([]byte, 4*MiB)
		copy(file, magic)
		_, err := Validate(bytes.NewReader(file), int64(len(file)))
		assert.ErrorIs(t, err, ErrNotVHD)
		assert.Contains(t, err.Error(), want)
	}

	_, err := Validate(bytes.NewReader(nil), 0)
	assert.ErrorIs(t, err, ErrNotVHD)

	// A raw image that is not MiB aligned gets the resize step too.
	raw := make([]byte, MiB+4096)
	_, err = Validate(bytes.NewReader(raw), int64(len(raw)))
	assert.ErrorIs(t, err, ErrNotVHD)
	assert.Contains(t, err.Error(), "qemu-img resize -f raw disk.img 2097152")
}

func TestValidateFileErrors(t *testing.T) {
	_, err := ValidateFile(filepath.Join(t.TempDir(), "missing.vhd"))
	assert.ErrorIs(t, err, os.ErrNotExist)
	var ve *ValidationError
	assert.False(t, errors.As(err, &ve), "I/O errors are not validation errors")

	_, err = ValidateFile(t.TempDir())
	assert.Error(t, err)
}

func TestFixCommandsNameTheFile(t *testing.T) {
	assert.Equal(t, "disk.vhd", outputName("disk.img"))
	assert.Equal(t, "disk-fixed.vhd", outputName("disk.vhd"))
	assert.Equal(t, "plain.vhd", shellQuote("plain.vhd"))
	assert.Equal(t, `'it'\''s here.vhd'`, shellQuote("it's here.vhd"))

	_, err := ValidateFile(fixture("dynamic-2m.vhd"))
	assert.Contains(t, err.Error(), "-f vpc ../testdata/vhd/dynamic-2m.vhd")
	assert.Contains(t, err.Error(), "../testdata/vhd/dynamic-2m-fixed.vhd")
}

func TestQemuSourceOverridesCHS(t *testing.T) {
	// Standard geometry that is short of CurrentSize, from a creator qemu
	// sizes by geometry: the fix must force qemu to use CurrentSize.
	f := NewFooter(30*MiB, testID, time.Now())
	copy(f.CreatorApp[:], "vpc ")
	f.Cylinders, f.Heads, f.SectorsPerTrack = Geometry(30 * MiB)
	assert.Equal(t, "--image-opts driver=vpc,force_size_calc=current_size,file.filename=a,,b.vhd", qemuSource(f, "a,b.vhd"))

	copy(f.CreatorApp[:], "win ")
	assert.Equal(t, "-f vpc a.vhd", qemuSource(f, "a.vhd"))
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}
