package builtins

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Until an artifact is complete it has no name in its directory: a kill
// while it is written leaves no temporary file beside the artifacts.
func TestAnArtifactHasNoTemporaryFileWhileWritten(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "info.json")
	var during []string
	require.NoError(t, writeArtifactFile(path, []byte("{}\n"), func() {
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range entries {
			during = append(during, e.Name())
		}
	}))
	assert.Empty(t, during, "no file in the artifacts directory before the artifact is complete")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "{}\n", string(data))
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), info.Mode().Perm())
}
