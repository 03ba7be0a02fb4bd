//go:build unix

package packer

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The var-file holding packer's secrets is a named pipe: every open reads
// the values, no file on disk holds them, and stop leaves nothing behind.
func TestTheVarFileIsAPipeThatHoldsNoSecretOnDisk(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	vf, stop, err := writeVarFile(map[string]string{"ua_token": secret}, "")
	require.NoError(t, err)
	info, err := os.Lstat(vf)
	require.NoError(t, err)
	assert.Equal(t, fs.ModeNamedPipe, info.Mode().Type(), "a regular file would keep the secret after a kill")
	assert.Equal(t, fs.FileMode(0o600), info.Mode().Perm())
	data, err := os.ReadFile(vf)
	require.NoError(t, err)
	assert.Contains(t, string(data), secret)
	require.NoError(t, filepath.WalkDir(os.TempDir(), func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			data, rerr := os.ReadFile(path)
			require.NoError(t, rerr)
			assert.NotContains(t, string(data), secret, "%s holds the secret", path)
		}
		return err
	}))
	stop()
	entries, err := os.ReadDir(os.TempDir())
	require.NoError(t, err)
	assert.Empty(t, entries, "stop removes the pipe and its directory")
}

// Stopping a pipe nobody opened returns.
func TestAnUnreadVarFileStops(t *testing.T) {
	_, stop, err := writeVarFile(map[string]string{"a": "b"}, "")
	require.NoError(t, err)
	stop()
}
