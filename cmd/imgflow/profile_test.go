package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
