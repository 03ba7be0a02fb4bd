package packer

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// File remembers a sum under the identity it was given only when the
// file it read is still that size: a file that grew between its stat and
// its read has content the identity does not describe.
func TestSumCacheFileKeepsOnlyWhatItsStatDescribes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tool")
	require.NoError(t, os.WriteFile(path, []byte("first"), 0o644))
	stale, err := os.Stat(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, []byte("first and more"), 0o644))

	c := NewSumCache()
	sum, n, err := c.File(path, stale)
	require.NoError(t, err)
	assert.Equal(t, sha256.Sum256([]byte("first and more")), sum)
	assert.EqualValues(t, len("first and more"), n)
	_, known := c.Lookup(stale)
	assert.False(t, known, "the grown file's sum is not the stale stat's")

	fresh, err := os.Stat(path)
	require.NoError(t, err)
	_, _, err = c.File(path, fresh)
	require.NoError(t, err)
	got, known := c.Lookup(fresh)
	assert.True(t, known)
	assert.Equal(t, sum, got)

	var none *SumCache
	sum, _, err = none.File(path, fresh)
	require.NoError(t, err)
	assert.Equal(t, got, sum, "a nil cache hashes")
}
