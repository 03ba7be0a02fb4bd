package builtins

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A simulated build's staged files are links to the workspace's (it reads
// them as it starts); packer's are copies, which a later edit of the
// workspace does not change. Both mirror the destinations with the
// sources' modes.
func TestStageUploadsLinksForTheSimulationAndCopiesForPacker(t *testing.T) {
	src := filepath.Join(t.TempDir(), "tool")
	require.NoError(t, os.WriteFile(src, []byte("v1"), 0o755))
	uploads := []upload{{src: "tool", abs: src, dest: "/opt/bin/tool"}}
	srcInfo, err := os.Stat(src)
	require.NoError(t, err)

	for _, link := range []bool{true, false} {
		dir := filepath.Join(t.TempDir(), "files")
		require.NoError(t, stageUploads(dir, uploads, link))
		staged := filepath.Join(dir, "opt", "bin", "tool")
		info, err := os.Stat(staged)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o755), info.Mode().Perm(), "link=%v", link)
		assert.Equal(t, link, os.SameFile(srcInfo, info), "link=%v: a link is the workspace's file, a copy is not", link)
		data, err := os.ReadFile(staged)
		require.NoError(t, err)
		assert.Equal(t, "v1", string(data))
	}

	copied := filepath.Join(t.TempDir(), "files")
	require.NoError(t, stageUploads(copied, uploads, false))
	require.NoError(t, os.WriteFile(src, []byte("v2"), 0o755))
	data, err := os.ReadFile(filepath.Join(copied, "opt", "bin", "tool"))
	require.NoError(t, err)
	assert.Equal(t, "v1", string(data), "packer uploads what was staged")
}
