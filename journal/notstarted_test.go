package journal

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A journal whose only record, the header, is torn (a SIGKILL during the
// run's first write) is a run that had not started: listed as such,
// resume says to run the workflow again, and it can be discarded. A
// header with a bad checksum is still corruption, never taken for this.
func TestATornHeaderIsARunThatHadNotStarted(t *testing.T) {
	dir := t.TempDir()
	line, err := encode(Record{Type: TypeRun, RunID: "r1", Workflow: "flows/x.star"})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(Path(dir, "r1"), line[:len(line)/2], 0o600))

	runs, err := List(dir)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	assert.Equal(t, StatusNotStarted, runs[0].Status)
	assert.False(t, runs[0].Resumable)
	assert.Contains(t, runs[0].Error, "run the workflow again")

	_, err = Open(dir, "r1")
	require.Error(t, err)
	assert.True(t, IsNotStarted(err), "%v", err)
	assert.False(t, IsCorrupt(err))
	assert.Contains(t, err.Error(), "run r1 had not started")
	assert.Contains(t, err.Error(), "run the workflow again")

	require.NoError(t, Dir(dir).DiscardNotStarted(context.Background(), "r1"))
	assert.NoFileExists(t, Path(dir, "r1"))

	// A complete header whose checksum fails is corrupt, not "not started".
	bad := append([]byte(nil), line...)
	bad[10] ^= 1
	require.NoError(t, os.WriteFile(Path(dir, "r2"), bad, 0o600))
	_, err = Open(dir, "r2")
	assert.True(t, IsCorrupt(err), "%v", err)
	assert.False(t, IsNotStarted(err))
	assert.Error(t, Dir(dir).DiscardNotStarted(context.Background(), "r2"))
	assert.FileExists(t, Path(dir, "r2"))
}

// A journal is never visible with a torn header: the header is written in
// a temporary file linked to the journal's name once it is complete, and
// a temporary file a crash left behind is swept.
func TestCreateNeverShowsATornHeader(t *testing.T) {
	dir := t.TempDir()
	j, err := Create(dir, header("r1"))
	require.NoError(t, err)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file left beside the journal")
	assert.Equal(t, "r1.jsonl", entries[0].Name())
	require.NoError(t, j.Append(step("a")))
	require.NoError(t, j.Close())
	recs, err := Read(Path(dir, "r1"))
	require.NoError(t, err)
	assert.Len(t, recs, 2, "the records appended after the link are in the journal")

	_, err = Create(dir, header("r1"))
	assert.ErrorIs(t, err, os.ErrExist, "a run id is never taken twice")

	// What a crash between the temporary file and the link leaves: gc
	// right after the kill removes it (its content says its creator had
	// locked it, and nobody holds it now), while an empty one, maybe
	// between CreateTemp and lock, waits a minute.
	half := filepath.Join(dir, ".r2.123"+halfMadeSuffix)
	require.NoError(t, os.WriteFile(half, []byte(`{"type":"ru`), 0o600))
	empty := filepath.Join(dir, ".r3.456"+halfMadeSuffix)
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	runs, err := List(dir)
	require.NoError(t, err)
	assert.Len(t, runs, 1, "a half-made journal is no run")
	removed, err := SweepHalfMade(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{".r2.123" + halfMadeSuffix}, removed)
	assert.NoFileExists(t, half)
	assert.FileExists(t, empty, "an empty one may be being created")
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(empty, old, old))
	removed, err = SweepHalfMade(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{".r3.456" + halfMadeSuffix}, removed)
}
