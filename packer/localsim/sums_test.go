//go:build unix

package localsim

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud/guest"
	"github.com/imgflow/imgflow/internal/cachetrim"
	"github.com/imgflow/imgflow/packer"
)

// A large staged file is hashed once per identity: a second tree with the
// same file (a hard link, as builds stage the build tools) takes the
// remembered sum; a file rewritten since is hashed again; small files,
// whose text the guest record keeps, are always read.
func TestSumCacheHashesALargeStagedFileOnce(t *testing.T) {
	src := filepath.Join(t.TempDir(), "tool")
	big := bytes.Repeat([]byte("x"), guest.MaxGuestText+1)
	require.NoError(t, os.WriteFile(src, big, 0o755))
	stage := func() string {
		dir := t.TempDir()
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "opt"), 0o755))
		require.NoError(t, os.Link(src, filepath.Join(dir, "opt", "tool")))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "opt", "small"), []byte("text"), 0o644))
		return dir
	}
	sums := packer.NewSumCache()
	first, err := readStaged(stage(), sums)
	require.NoError(t, err)
	want := sha256.Sum256(big)
	assert.Equal(t, hex.EncodeToString(want[:]), first.files["/opt/tool"].SHA256)
	toolInfo, err := os.Stat(src)
	require.NoError(t, err)
	_, known := sums.Lookup(toolInfo)
	assert.True(t, known, "the large file is remembered")
	smallInfo, err := os.Stat(filepath.Join(first.files["/opt/small"].abs))
	require.NoError(t, err)
	_, known = sums.Lookup(smallInfo)
	assert.False(t, known, "a small file is read for its text anyway")

	// What the cache says is what the second tree records: it was not read.
	sums.Store(toolInfo, [32]byte{1})
	second, err := readStaged(stage(), sums)
	require.NoError(t, err)
	assert.Equal(t, hex.EncodeToString([]byte{1})+"00", second.files["/opt/tool"].SHA256[:4])
	assert.Equal(t, "text", second.files["/opt/small"].text)

	// Rewritten (another size and time): read again.
	changed := append(big, 'y')
	require.NoError(t, os.WriteFile(src, changed, 0o755))
	require.NoError(t, os.Chtimes(src, time.Now(), time.Now().Add(time.Hour)))
	third, err := readStaged(stage(), sums)
	require.NoError(t, err)
	want = sha256.Sum256(changed)
	assert.Equal(t, hex.EncodeToString(want[:]), third.files["/opt/tool"].SHA256)

	// No cache: always read.
	none, err := readStaged(stage(), nil)
	require.NoError(t, err)
	assert.Equal(t, third.digest, none.digest)
}

// Opened on a directory, the cache keeps a large file's sum for the next
// process: a new cache on the same directory answers without reading the
// file (its answer is what the directory says), until the file changes.
func TestSumCacheKeepsSumsForTheNextProcess(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sums")
	tool := filepath.Join(t.TempDir(), "tool")
	big := bytes.Repeat([]byte("x"), guest.MaxGuestText+1)
	require.NoError(t, os.WriteFile(tool, big, 0o755))
	stage := linkedTool(t, tool)

	first, err := readStaged(stage(), packer.OpenSumCache(dir))
	require.NoError(t, err)
	want := sha256.Sum256(big)
	assert.Equal(t, hex.EncodeToString(want[:]), first.files["/tool"].SHA256)
	kept, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, kept, 1, "one sum, and no temporary file left")

	// The next process takes the kept sum: it did not read the file.
	marked := [32]byte{0xab}
	require.NoError(t, os.WriteFile(filepath.Join(dir, kept[0].Name()), marked[:], 0o600))
	next, err := readStaged(stage(), packer.OpenSumCache(dir))
	require.NoError(t, err)
	assert.Equal(t, hex.EncodeToString(marked[:]), next.files["/tool"].SHA256)

	// Rewritten since: another identity, hashed again.
	changed := append(big, 'y')
	require.NoError(t, os.WriteFile(tool, changed, 0o755))
	later, err := readStaged(stage(), packer.OpenSumCache(dir))
	require.NoError(t, err)
	want = sha256.Sum256(changed)
	assert.Equal(t, hex.EncodeToString(want[:]), later.files["/tool"].SHA256)

	// A cache directory that cannot be written only costs the hashing.
	blocked := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(blocked, nil, 0o600))
	plain, err := readStaged(stage(), packer.OpenSumCache(filepath.Join(blocked, "sums")))
	require.NoError(t, err)
	assert.Equal(t, hex.EncodeToString(want[:]), plain.files["/tool"].SHA256)
}

// A large staged file (a build tool) is hashed as it is read, not read
// whole into memory: a plan staging megabytes allocates kilobytes.
func TestStagedFileOfHashesALargeFileWithoutReadingItWhole(t *testing.T) {
	data := bytes.Repeat([]byte("lister binary "), 300_000) // 4 MiB
	file := filepath.Join(t.TempDir(), "lister")
	require.NoError(t, os.WriteFile(file, data, 0o755))
	info, err := os.Stat(file)
	require.NoError(t, err)

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f, err := stagedFileOf(file, info, nil)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	sum := sha256.Sum256(data)
	assert.Equal(t, hex.EncodeToString(sum[:]), f.SHA256)
	assert.Equal(t, int64(len(data)), f.Size)
	assert.Empty(t, f.text, "only small files keep their text")
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(len(data)/8), "bytes allocated")
}

// A kept sum that a process reads is marked used, so that the cache's
// daily trim (cachetrim) keeps it while plans still read it.
func TestSumCacheMarksTheSumsItReadsUsed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sums")
	tool := filepath.Join(t.TempDir(), "tool")
	require.NoError(t, os.WriteFile(tool, bytes.Repeat([]byte("x"), guest.MaxGuestText+1), 0o755))
	stage := linkedTool(t, tool)
	_, err := readStaged(stage(), packer.OpenSumCache(dir))
	require.NoError(t, err)
	kept, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, kept, 1)
	sum := filepath.Join(dir, kept[0].Name())
	long := time.Now().Add(-cachetrim.MaxAge)
	require.NoError(t, os.Chtimes(sum, long, long))

	_, err = readStaged(stage(), packer.OpenSumCache(dir))
	require.NoError(t, err)
	info, err := os.Stat(sum)
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now(), info.ModTime(), time.Minute)
}

// linkedTool returns what stages tool as a build does: each call a new
// directory with a hard link to it, so every staging has tool's identity.
func linkedTool(t *testing.T, tool string) func() string {
	return func() string {
		staged := t.TempDir()
		require.NoError(t, os.Link(tool, filepath.Join(staged, "tool")))
		return staged
	}
}
