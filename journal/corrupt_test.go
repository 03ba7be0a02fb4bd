package journal

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeRun journals a run with a step and a cleanup and returns its file.
func writeRun(t *testing.T, dir, id string) string {
	t.Helper()
	j, err := Create(dir, header(id))
	require.NoError(t, err)
	require.NoError(t, j.Append(step("PackerSigGalleryEastUS")))
	require.NoError(t, j.Append(Record{Type: TypeCleanup, Cleanup: &Cleanup{ID: "image#1", Kind: "image", Name: "delete image x"}}))
	require.NoError(t, j.Close())
	return Path(dir, id)
}

func lines(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return bytes.SplitAfter(data, []byte("\n"))
}

func rewrite(t *testing.T, path string, ls [][]byte) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, bytes.Join(ls, nil), 0o600))
}

// Every kind of damage other than a torn last line is a CorruptError with
// the file and line, from Read, Open and List alike; nothing of the
// journal is served.
func TestDamagedJournalsAreReportedWithFileAndLine(t *testing.T) {
	cases := map[string]struct {
		damage func(ls [][]byte) [][]byte
		line   int
		reason string
	}{
		"a flipped bit in a step result": {func(ls [][]byte) [][]byte {
			ls[1] = bytes.Replace(ls[1], []byte("GalleryEast"), []byte("Galler\xefEast"), 1)
			return ls
		}, 2, "checksum mismatch"},
		"an unparseable line": {func(ls [][]byte) [][]byte {
			ls[2] = []byte("{\"type\":\"cleanup\",garbage\n")
			return ls
		}, 3, "not a journal record"},
		"a deleted header": {func(ls [][]byte) [][]byte { return ls[1:] }, 1, "not the run's header"},
		"a null header": {func(ls [][]byte) [][]byte {
			ls[0] = []byte("null\n")
			return ls
		}, 1, "not a JSON object"},
		"a header of the wrong type": {func(ls [][]byte) [][]byte {
			ls[0] = []byte("[1,2]\n")
			return ls
		}, 1, "not a JSON object"},
		"a record without a checksum after checksummed ones": {func(ls [][]byte) [][]byte {
			ls[2] = []byte(`{"type":"cleanup","cleanup":{"id":"x","kind":"image","name":"n"}}` + "\n")
			return ls
		}, 3, "no checksum"},
		"a checksummed record of another run's header": {func(ls [][]byte) [][]byte {
			other, err := encode(Record{Type: TypeRun, RunID: "other"})
			require.NoError(t, err)
			ls[0] = other
			return ls
		}, 1, `names run "other"`},
		"an empty line": {func(ls [][]byte) [][]byte {
			ls[1] = []byte("\n")
			return ls
		}, 2, "not a JSON object"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := writeRun(t, dir, "r1")
			rewrite(t, path, c.damage(lines(t, path)))

			_, err := Read(path)
			var ce *CorruptError
			require.ErrorAs(t, err, &ce)
			assert.Equal(t, c.line, ce.Line)
			assert.Contains(t, ce.Reason, c.reason)
			assert.Contains(t, err.Error(), path+":"+itoa(c.line))

			_, err = Open(dir, "r1")
			require.ErrorAs(t, err, &ce, "a damaged journal is never resumed")
			assert.Equal(t, c.line, ce.Line)

			runs, err := List(dir)
			require.NoError(t, err)
			require.Len(t, runs, 1)
			assert.Equal(t, StatusCorrupt, runs[0].Status)
			assert.Equal(t, "r1", runs[0].RunID, "named after its file, whatever its header says")
			assert.False(t, runs[0].Resumable)
			assert.Contains(t, runs[0].Error, path+":"+itoa(c.line))
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// A crash mid-write still only tears the last line: it is dropped, and a
// complete journal before it reads as it was.
func TestATornLastLineIsStillNotCorruption(t *testing.T) {
	dir := t.TempDir()
	path := writeRun(t, dir, "r1")
	ls := lines(t, path)
	last := ls[len(ls)-2]
	ls[len(ls)-1] = last[:len(last)/2] // half of a copy of the last record, no newline
	rewrite(t, path, ls)
	recs, err := Read(path)
	require.NoError(t, err)
	assert.Len(t, recs, 3)
	j, err := Open(dir, "r1")
	require.NoError(t, err)
	require.NoError(t, j.Close())
}

// Journals from before checksums are read as they are, flagged, and a
// resumed run appends checksummed records after them.
func TestAJournalWithoutChecksumsIsReadWithAWarning(t *testing.T) {
	dir := t.TempDir()
	path := Path(dir, "old")
	legacy := `{"type":"run","time":"2026-12-01T10:00:00Z","run_id":"old","workflow":"workflows/flatcar.star"}` + "\n" +
		`{"type":"cleanup","time":"2026-12-01T10:01:00Z","cleanup":{"id":"image#1","kind":"image","name":"delete image x","pos":"","args":null}}` + "\n"
	require.NoError(t, os.WriteFile(path, []byte(legacy), 0o600))

	runs, err := List(dir)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	assert.Equal(t, StatusInterrupted, runs[0].Status)
	assert.Equal(t, UnverifiedWarning, runs[0].Warning)

	j, err := Open(dir, "old")
	require.NoError(t, err)
	assert.True(t, j.Unverified())
	require.NoError(t, j.Append(Record{Type: TypeCleanupDone, CleanupID: "image#1"}))
	require.NoError(t, j.Close())
	recs, err := Read(path)
	require.NoError(t, err)
	assert.Len(t, recs, 3)
	assert.Empty(t, PendingCleanups(recs))
	assert.Contains(t, string(lines(t, path)[2]), `"crc":"`)
}

func TestChecksummedRecordsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := writeRun(t, dir, "r1")
	for _, l := range lines(t, path) {
		if len(l) > 0 {
			assert.Contains(t, string(l), `,"crc":"`)
		}
	}
	j, err := Open(dir, "r1")
	require.NoError(t, err)
	defer j.Close()
	assert.False(t, j.Unverified())
	assert.Equal(t, "PackerSigGalleryEastUS", j.Records()[1].Step.Key)
	assert.Equal(t, filepath.Base(path), "r1.jsonl")
}
