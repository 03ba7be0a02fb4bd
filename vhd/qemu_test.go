package vhd

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/imgflow/imgflow/internal/testtool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// requireQemuImg returns the qemu-img path. Without qemu-img the test is
// skipped locally but fails in CI (CI=true), where `make deps` installs it,
// so the interoperability tests cannot silently stop running.
func requireQemuImg(t *testing.T) string {
	t.Helper()
	return testtool.Require(t, "qemu-img", "install qemu-utils (`make deps`, or apt-get install -y qemu-utils)")
}

func qemuImg(t *testing.T, args ...string) []byte {
	t.Helper()
	out, err := exec.Command("qemu-img", args...).CombinedOutput()
	require.NoError(t, err, "qemu-img %v: %s", args, out)
	return out
}

// qemuInfo is the part of `qemu-img info --output=json` the tests use.
type qemuInfo struct {
	VirtualSize int64  `json:"virtual-size"`
	Format      string `json:"format"`
}

func qemuImgInfo(t *testing.T, format, path string) qemuInfo {
	t.Helper()
	var info qemuInfo
	require.NoError(t, json.Unmarshal(qemuImg(t, "info", "-f", format, "--output=json", path), &info))
	return info
}

// runFix runs the shell command a Problem suggests (the text between
// backticks), proving the advice works rather than just reading well.
func runFix(t *testing.T, dir string, p Problem) {
	t.Helper()
	m := regexp.MustCompile("`([^`]+)`").FindStringSubmatch(p.Fix)
	require.NotNil(t, m, "fix has a command: %s", p.Fix)
	cmd := exec.Command("sh", "-c", m[1])
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s: %s", m[1], out)
}

func onlyProblem(t *testing.T, err error, want error) Problem {
	t.Helper()
	var ve *ValidationError
	require.ErrorAs(t, err, &ve)
	require.Len(t, ve.Problems, 1, "%v", err)
	require.ErrorIs(t, ve.Problems[0].Err, want)
	return ve.Problems[0]
}

func TestQemuImgInterop(t *testing.T) {
	requireQemuImg(t)
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }

	t.Run("fixed force_size is valid", func(t *testing.T) {
		qemuImg(t, "create", "-q", "-f", "vpc", "-o", "subformat=fixed,force_size=on", p("ok.vhd"), "30M")
		info, err := ValidateFile(p("ok.vhd"))
		require.NoError(t, err)
		assert.Equal(t, int64(31457280), info.VirtualSize)
		assert.Equal(t, int64(31457792), info.FileSize)
		assert.Equal(t, "qem2", info.Footer.CreatorAppString())
	})

	t.Run("fixed without force_size is unaligned and the fix works", func(t *testing.T) {
		qemuImg(t, "create", "-q", "-f", "vpc", "-o", "subformat=fixed", p("chs.vhd"), "30M")
		info, err := ValidateFile(p("chs.vhd"))
		assert.Equal(t, int64(31473664), info.VirtualSize)
		runFix(t, dir, onlyProblem(t, err, ErrNotAligned))
		fixed, err := ValidateFile(p("chs-fixed.vhd"))
		require.NoError(t, err)
		assert.Equal(t, int64(31*MiB), fixed.VirtualSize)
	})

	t.Run("dynamic is rejected and the fix works", func(t *testing.T) {
		// force_size keeps the dynamic disk MiB aligned, so only the type
		// is wrong.
		qemuImg(t, "create", "-q", "-f", "vpc", "-o", "force_size=on", p("dyn.vhd"), "8M")
		_, err := ValidateFile(p("dyn.vhd"))
		runFix(t, dir, onlyProblem(t, err, ErrDynamic))
		fixed, err := ValidateFile(p("dyn-fixed.vhd"))
		require.NoError(t, err)
		assert.Equal(t, int64(8*MiB), fixed.VirtualSize)
	})

	t.Run("raw is not a VHD and the fix works", func(t *testing.T) {
		qemuImg(t, "create", "-q", "-f", "raw", p("raw.img"), "3M")
		require.NoError(t, os.Truncate(p("raw.img"), 3*MiB+4096)) // unaligned
		_, err := ValidateFile(p("raw.img"))
		runFix(t, dir, onlyProblem(t, err, ErrNotVHD))
		fixed, err := ValidateFile(p("raw.vhd"))
		require.NoError(t, err)
		assert.Equal(t, int64(4*MiB), fixed.VirtualSize)
	})

	t.Run("vhdx and qcow2 are recognised and the fix works", func(t *testing.T) {
		for format, name := range map[string]string{"vhdx": "v.vhdx", "qcow2": "q.qcow2"} {
			qemuImg(t, "create", "-q", "-f", format, p(name), "2M")
			_, err := ValidateFile(p(name))
			prob := onlyProblem(t, err, ErrNotVHD)
			assert.Contains(t, prob.Fix, "-f "+format)
			runFix(t, dir, prob)
			out := p(name[:len(name)-len(filepath.Ext(name))] + ".vhd")
			_, err = ValidateFile(out)
			require.NoError(t, err, format)
		}
	})

	t.Run("CreateFixed output reads back in qemu-img", func(t *testing.T) {
		// 30 MiB has no exact CHS geometry: the case where a standard
		// geometry would make qemu see a smaller disk.
		path := p("ours.vhd")
		_, err := CreateFixed(path, 30*MiB, false)
		require.NoError(t, err)
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		require.NoError(t, err)
		last := bytes.Repeat([]byte{0x5a}, 4096)
		_, err = f.WriteAt(last, 30*MiB-4096)
		require.NoError(t, err)
		require.NoError(t, f.Close())

		info := qemuImgInfo(t, "vpc", path)
		assert.Equal(t, int64(30*MiB), info.VirtualSize)
		assert.Equal(t, "vpc", info.Format)

		// qemu reads the data up to the last byte.
		qemuImg(t, "convert", "-f", "vpc", "-O", "raw", path, p("ours.raw"))
		raw, err := os.ReadFile(p("ours.raw"))
		require.NoError(t, err)
		require.Len(t, raw, 30*MiB)
		assert.Equal(t, last, raw[30*MiB-4096:])
		assert.True(t, IsZero(raw[:30*MiB-4096]))
	})

	t.Run("fix keeps the tail of a disk qemu would size by CHS", func(t *testing.T) {
		// Virtual PC style: creator "vpc " and standard geometry, which is
		// shorter than CurrentSize. Plain `-f vpc` would drop the tail.
		size := int64(30*MiB + 4096)
		f := NewFooter(size, testID, time.Now())
		copy(f.CreatorApp[:], "vpc ")
		f.Cylinders, f.Heads, f.SectorsPerTrack = Geometry(size)
		footer, err := f.MarshalBinary()
		require.NoError(t, err)
		tail := bytes.Repeat([]byte{0x77}, 512)
		path := p("vpc,old.vhd") // a comma, which qemu options must escape
		require.NoError(t, os.WriteFile(path, nil, 0o644))
		file, err := os.OpenFile(path, os.O_RDWR, 0)
		require.NoError(t, err)
		_, err = file.WriteAt(tail, size-512)
		require.NoError(t, err)
		_, err = file.WriteAt(footer, size)
		require.NoError(t, err)
		require.NoError(t, file.Close())
		require.Less(t, qemuImgInfo(t, "vpc", path).VirtualSize, size, "qemu sizes this disk by CHS")

		_, err = ValidateFile(path)
		prob := onlyProblem(t, err, ErrNotAligned)
		assert.Contains(t, prob.Fix, "force_size_calc=current_size")
		runFix(t, dir, prob)
		fixed, err := ValidateFile(p("vpc,old-fixed.vhd"))
		require.NoError(t, err)
		assert.Equal(t, int64(31*MiB), fixed.VirtualSize)
		out, err := os.ReadFile(p("vpc,old-fixed.vhd"))
		require.NoError(t, err)
		assert.Equal(t, tail, out[size-512:size], "tail survived the conversion")
	})

	t.Run("fixtures still match qemu-img", func(t *testing.T) {
		info := qemuImgInfo(t, "vpc", fixture("fixed-2m.vhd"))
		assert.Equal(t, int64(2*MiB), info.VirtualSize)
		_, err := ValidateFile(fixture("fixed-2m.vhd"))
		assert.False(t, errors.Is(err, ErrNotAligned))
	})
}
