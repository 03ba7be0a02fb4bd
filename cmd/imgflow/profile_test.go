package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
)

// Both developer profiles are written, as pprof files (gzip), when their
// variables name files.
func TestProfilesAreWrittenWhereTheEnvironmentSays(t *testing.T) {
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu.out"), filepath.Join(dir, "mem.out")
	t.Setenv(cpuProfileEnv, cpu)
	t.Setenv(memProfileEnv, mem)
	stop := startProfile()
	_ = bytes.Repeat([]byte("x"), 1<<20) // something to sample
	stop()
	for _, path := range []string{cpu, mem} {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.True(t, bytes.HasPrefix(data, []byte{0x1f, 0x8b}), "%s is a gzipped pprof profile", path)
	}
}

// pprof scales an allocation profile's samples by the sampling rate in
// force when the profile is written, and records it as the profile's
// period: the rate must still be the profile's own then, or every figure
// is inflated by 512 KiB / 4 KiB.
func TestAllocationProfileIsScaledByItsOwnRate(t *testing.T) {
	mem := filepath.Join(t.TempDir(), "mem.out")
	t.Setenv(memProfileEnv, mem)
	before := runtime.MemProfileRate
	stop := startMemProfile()
	_ = bytes.Repeat([]byte("x"), 1<<20)
	stop()
	assert.Equal(t, before, runtime.MemProfileRate, "the rate is restored")

	f, err := os.Open(mem)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	data, err := io.ReadAll(zr)
	require.NoError(t, err)
	assert.Equal(t, int64(memProfileRate), profilePeriod(t, data))
}

// profilePeriod reads the period (field 12) of a pprof Profile message.
func profilePeriod(t *testing.T, data []byte) int64 {
	const periodField = 12
	for len(data) > 0 {
		num, typ, n := protowire.ConsumeTag(data)
		require.GreaterOrEqual(t, n, 0, "a valid profile")
		data = data[n:]
		if num == periodField && typ == protowire.VarintType {
			v, _ := protowire.ConsumeVarint(data)
			return int64(v)
		}
		n = protowire.ConsumeFieldValue(num, typ, data)
		require.GreaterOrEqual(t, n, 0, "a valid profile")
		data = data[n:]
	}
	t.Fatal("the profile has no period")
	return 0
}
