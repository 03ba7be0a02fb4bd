package cachetrim

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var now = time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)

// entry writes a file whose modification time is age before now.
func entry(t *testing.T, path string, age time.Duration) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte("x"), 0o600))
	at := now.Add(-age)
	require.NoError(t, os.Chtimes(path, at, at))
	return path
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func TestTrimRemovesOnlyTheNamedCachesUnusedEntries(t *testing.T) {
	dir := t.TempDir()
	stale := entry(t, filepath.Join(dir, "sums", "old"), MaxAge+time.Hour)
	staleTemp := entry(t, filepath.Join(dir, "sums", ".sum-123"), MaxAge+time.Hour)
	fresh := entry(t, filepath.Join(dir, "sums", "new"), MaxAge-time.Hour)
	nested := entry(t, filepath.Join(dir, "sums", "sub", "old"), MaxAge+time.Hour)
	notACache := entry(t, filepath.Join(dir, "mine", "old"), MaxAge+time.Hour)
	topLevel := entry(t, filepath.Join(dir, "old"), MaxAge+time.Hour)
	outside := entry(t, filepath.Join(t.TempDir(), "target"), MaxAge+time.Hour)
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "sums", "link")))

	require.NoError(t, Trim(dir, now, "sums", "starlark"))

	assert.False(t, exists(stale), "an entry unused for MaxAge is removed")
	assert.False(t, exists(staleTemp), "a torn write's temporary file is removed")
	assert.True(t, exists(fresh), "a recently used entry stays")
	assert.True(t, exists(nested), "only files directly in a cache are entries")
	assert.True(t, exists(notACache), "a directory that is not a named cache is the user's")
	assert.True(t, exists(topLevel), "files beside the caches are the user's")
	assert.True(t, exists(filepath.Join(dir, "sums", "link")), "a link is not followed or removed")
	assert.True(t, exists(outside))
}

func TestTrimRunsOncePerInterval(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, Trim(dir, now, "sums"))
	stale := entry(t, filepath.Join(dir, "sums", "old"), MaxAge+time.Hour)

	require.NoError(t, Trim(dir, now.Add(Interval-time.Minute), "sums"))
	assert.True(t, exists(stale), "trimmed less than Interval ago: no walk")

	require.NoError(t, Trim(dir, now.Add(Interval), "sums"))
	assert.False(t, exists(stale), "trimmed Interval ago: trimmed again")
}

func TestTrimLeavesAMissingDirectoryMissing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "imgflow")
	require.NoError(t, Trim(dir, now, "sums"))
	assert.False(t, exists(dir))
}

func TestUsedKeepsAnEntryFromTheTrim(t *testing.T) {
	dir := t.TempDir()
	used := entry(t, filepath.Join(dir, "sums", "used"), MaxAge+time.Hour)
	unused := entry(t, filepath.Join(dir, "sums", "unused"), MaxAge+time.Hour)
	f, err := os.Open(used)
	require.NoError(t, err)
	Used(f, now)
	require.NoError(t, f.Close())

	require.NoError(t, Trim(dir, now, "sums"))
	assert.True(t, exists(used))
	assert.False(t, exists(unused))
}

func TestUsedWritesAtMostOnceAnHour(t *testing.T) {
	path := entry(t, filepath.Join(t.TempDir(), "e"), 30*time.Minute)
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	Used(f, now)
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.True(t, info.ModTime().Equal(now.Add(-30*time.Minute)), "used within the hour: not written again, got %v", info.ModTime())
}
