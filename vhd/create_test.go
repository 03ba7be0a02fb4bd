package vhd

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCreateFixed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "disk.vhd")
	info, err := CreateFixed(path, 4*MiB, false)
	require.NoError(t, err)
	assert.Equal(t, int64(4*MiB), info.VirtualSize)
	assert.Equal(t, int64(4*MiB+FooterSize), info.FileSize)
	assert.Equal(t, "imgf", info.Footer.CreatorAppString())
	assert.WithinDuration(t, time.Now(), info.Footer.Time(), time.Minute)
	id := info.Footer.UniqueID
	assert.Equal(t, byte(0x40), id[6]&0xf0, "UUID version 4")
	assert.Equal(t, byte(0x80), id[8]&0xc0, "UUID RFC 4122 variant")

	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, int64(4*MiB+FooterSize), st.Size())

	got, err := ValidateFile(path)
	require.NoError(t, err)
	assert.Equal(t, info, got)

	// Existing file: refused unless overwrite, which writes a new disk.
	_, err = CreateFixed(path, 2*MiB, false)
	assert.ErrorIs(t, err, os.ErrExist)
	again, err := ValidateFile(path)
	require.NoError(t, err)
	assert.Equal(t, int64(4*MiB), again.VirtualSize, "refused create must not touch the file")

	info2, err := CreateFixed(path, 2*MiB, true)
	require.NoError(t, err)
	assert.NotEqual(t, id, info2.Footer.UniqueID)
	got, err = ValidateFile(path)
	require.NoError(t, err)
	assert.Equal(t, int64(2*MiB), got.VirtualSize)
}

func TestCreateFixedRejectsSizes(t *testing.T) {
	dir := t.TempDir()
	for _, size := range []int64{0, -MiB, 1, MiB + 512, 3*MiB - 1} {
		path := filepath.Join(dir, "bad.vhd")
		_, err := CreateFixed(path, size, false)
		assert.ErrorIs(t, err, ErrNotAligned, "size %d", size)
		assert.NoFileExists(t, path)
	}
}

func TestCreateFixedWithFooter(t *testing.T) {
	dir := t.TempDir()
	when := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	f := NewFooter(MiB, testID, when)
	f.Checksum = 0 // ignored: recomputed on write

	path := filepath.Join(dir, "fixed.vhd")
	info, err := CreateFixedWithFooter(path, f, false)
	require.NoError(t, err)
	assert.Equal(t, testID, info.Footer.UniqueID)
	assert.Equal(t, when, info.Footer.Time())
	_, err = ValidateFile(path)
	require.NoError(t, err)

	dyn := NewFooter(MiB, testID, when)
	dyn.DiskType = DiskTypeDynamic
	_, err = CreateFixedWithFooter(filepath.Join(dir, "dyn.vhd"), dyn, false)
	assert.ErrorIs(t, err, ErrDynamic)
	assert.NoFileExists(t, filepath.Join(dir, "dyn.vhd"))

	huge := NewFooter(MiB, testID, when)
	huge.CurrentSize = 1 << 63
	_, err = CreateFixedWithFooter(filepath.Join(dir, "huge.vhd"), huge, false)
	assert.Error(t, err)

	_, err = CreateFixedWithFooter(filepath.Join(dir, "nil.vhd"), nil, false)
	assert.Error(t, err)

	_, err = CreateFixed(filepath.Join(dir, "no", "such", "dir.vhd"), MiB, false)
	assert.ErrorIs(t, err, os.ErrNotExist)
}
