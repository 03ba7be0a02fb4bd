package journal

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func header(id string) Record {
	t := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	return Record{RunID: id, RunTime: &t, Workflow: "workflows/flatcar.star", Target: "local", Vars: map[string]any{"version": "4152.2.3"}}
}

func step(key string) Record {
	return Record{Type: TypeStep, Step: &Step{Key: key, Builtin: "gallery", Result: json.RawMessage(`{"name":"` + key + `"}`)}}
}

func TestAppendedRecordsSurviveReopen(t *testing.T) {
	dir := t.TempDir()
	j, err := Create(dir, header("r1"))
	require.NoError(t, err)
	require.NoError(t, j.Append(step("a")))
	require.NoError(t, j.Close())

	j, err = Open(dir, "r1")
	require.NoError(t, err)
	defer j.Close()
	recs := j.Records()
	require.Len(t, recs, 2)
	assert.Equal(t, TypeRun, recs[0].Type)
	assert.Equal(t, "4152.2.3", recs[0].Vars["version"])
	assert.Equal(t, "a", recs[1].Step.Key)
}

// A scratch directory's journals are the same files as a Dir's, locked
// while open and resumable (the fsync per record they skip is not observable
// here; BENCHMARKS.md measures what it saves).
func TestScratchDirJournalsAreDirJournals(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	scratch := ScratchDir(dir)
	j, err := scratch.Create(ctx, header("r1"))
	require.NoError(t, err)
	require.NoError(t, j.Append(step("a")))
	_, err = scratch.Open(ctx, "r1")
	assert.ErrorContains(t, err, "in use by another imgflow process")
	require.NoError(t, j.Close())

	j, err = Dir(dir).Open(ctx, "r1")
	require.NoError(t, err, "a Dir reads a scratch journal")
	require.Len(t, j.Records(), 2)
	require.NoError(t, j.Close())
	j, err = scratch.Open(ctx, "r1")
	require.NoError(t, err)
	require.NoError(t, j.Append(step("b")))
	require.NoError(t, j.Close())
	runs, err := scratch.List(ctx)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	assert.Equal(t, "r1", runs[0].RunID)
	recs, err := Read(Path(dir, "r1"))
	require.NoError(t, err)
	assert.Equal(t, "b", recs[2].Step.Key)
}

func TestATornLastRecordIsIgnoredAndOverwritten(t *testing.T) {
	dir := t.TempDir()
	j, err := Create(dir, header("r1"))
	require.NoError(t, err)
	require.NoError(t, j.Append(step("a")))
	require.NoError(t, j.Close())
	f, err := os.OpenFile(Path(dir, "r1"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"type":"step","step":{"key":"b","buil`) // the process died mid-write
	require.NoError(t, err)
	require.NoError(t, f.Close())

	j, err = Open(dir, "r1")
	require.NoError(t, err)
	assert.Len(t, j.Records(), 2, "the torn record is not read")
	require.NoError(t, j.Append(step("c")))
	require.NoError(t, j.Close())

	recs, err := Read(Path(dir, "r1"))
	require.NoError(t, err)
	require.Len(t, recs, 3)
	assert.Equal(t, "c", recs[2].Step.Key, "the next record starts on a clean line")
}

func TestASecondOpenOfAJournalInUseIsRefused(t *testing.T) {
	dir := t.TempDir()
	j, err := Create(dir, header("r1"))
	require.NoError(t, err)
	defer j.Close()
	_, err = Open(dir, "r1")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "in use by another imgflow process")

	runs, err := List(dir)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	assert.Equal(t, StatusRunning, runs[0].Status)
}

func TestOpenOfAnUnknownRunSaysHowToListRuns(t *testing.T) {
	_, err := Open(t.TempDir(), "nope")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "imgflow runs")
}

func TestListReportsStatusAndResumability(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		id     string
		end    *Record
		status string
	}{
		{"ok", &Record{Type: TypeEnd, Status: StatusSucceeded}, StatusSucceeded},
		{"bad", &Record{Type: TypeEnd, Status: StatusFailed, Error: "boom"}, StatusFailed},
		{"died", nil, StatusInterrupted},
	} {
		j, err := Create(dir, header(c.id))
		require.NoError(t, err)
		require.NoError(t, j.Append(step("a")))
		if c.end != nil {
			require.NoError(t, j.Append(*c.end))
		}
		require.NoError(t, j.Close())
	}
	runs, err := List(dir)
	require.NoError(t, err)
	byID := map[string]Summary{}
	for _, r := range runs {
		byID[r.RunID] = r
	}
	assert.Equal(t, StatusSucceeded, byID["ok"].Status)
	assert.False(t, byID["ok"].Resumable)
	assert.Equal(t, StatusFailed, byID["bad"].Status)
	assert.Equal(t, "boom", byID["bad"].Error)
	assert.True(t, byID["bad"].Resumable)
	assert.Equal(t, StatusInterrupted, byID["died"].Status)
	assert.True(t, byID["died"].Resumable)
	assert.Equal(t, 1, byID["ok"].Steps)
}

func TestReplayerServesStepsThenDivergesOnAChangedCall(t *testing.T) {
	recs := []Record{header("r"), step("a"), step("b"), step("c")}
	recs[0].Type = TypeRun
	r := NewReplayer(recs, nil)
	s, ok := r.Lookup("a")
	require.True(t, ok)
	assert.Equal(t, "a", s.Key)
	_, ok = r.Lookup("x") // the workflow changed here
	assert.False(t, ok)
	_, ok = r.Lookup("b")
	assert.False(t, ok, "after a divergence every call runs live")
}

func TestReplayerRunsLiveAfterTheJournalEnds(t *testing.T) {
	recs := []Record{header("r"), step("a")}
	recs[0].Type = TypeRun
	r := NewReplayer(recs, nil)
	_, ok := r.Lookup("a")
	require.True(t, ok)
	_, ok = r.Lookup("b")
	assert.False(t, ok)
	_, ok = r.Lookup("a")
	assert.False(t, ok, "a journaled step is served once")
}

func TestReplayerRemembersCleanupsDone(t *testing.T) {
	dir := t.TempDir()
	j, err := Create(dir, header("r1"))
	require.NoError(t, err)
	r := NewReplayer(j.Records(), j)
	require.NoError(t, r.RecordCleanupDone("disk#0"))
	require.NoError(t, j.Close())

	j, err = Open(dir, "r1")
	require.NoError(t, err)
	defer j.Close()
	r = NewReplayer(j.Records(), nil)
	assert.True(t, r.CleanupDone("disk#0"))
	assert.False(t, r.CleanupDone("disk#1"))
}

// A run refused by validation has nothing to resume; a journal with no
// complete record (torn during its first write) or one that cannot be read
// is listed with the reason rather than silently left out.
func TestListReportsInvalidAndUnreadableRuns(t *testing.T) {
	dir := t.TempDir()
	j, err := Create(dir, header("refused"))
	require.NoError(t, err)
	require.NoError(t, j.Append(Record{Type: TypeEnd, Status: StatusInvalid, Error: "flows/x.star:3:5: invalid gallery name"}))
	require.NoError(t, j.Close())
	j, err = Create(dir, header("retried"))
	require.NoError(t, err)
	require.NoError(t, j.Append(step("a")))
	require.NoError(t, j.Append(Record{Type: TypeEnd, Status: StatusInvalid, Error: "bad --var"}))
	require.NoError(t, j.Close())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "torn.jsonl"), []byte(`{"type":"run","run_id":"to`), 0o600))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "odd.jsonl"), 0o700)) // not a file: skipped as before

	runs, err := List(dir)
	require.NoError(t, err)
	byID := map[string]Summary{}
	for _, r := range runs {
		byID[r.RunID] = r
	}
	require.Len(t, byID, 3)
	assert.Equal(t, StatusInvalid, byID["refused"].Status)
	assert.False(t, byID["refused"].Resumable, "nothing was changed: fix the input and run again")
	assert.Equal(t, StatusFailed, byID["retried"].Status, "earlier attempts made steps: resumable with corrected input")
	assert.True(t, byID["retried"].Resumable)
	assert.Equal(t, StatusNotStarted, byID["torn"].Status)
	assert.Contains(t, byID["torn"].Error, "no complete record")
	assert.False(t, byID["torn"].Resumable)
}

func TestACopyOfAReopenedJournalIsTheJournal(t *testing.T) {
	dir := t.TempDir()
	j, err := Create(dir, header("r1"))
	require.NoError(t, err)
	require.NoError(t, j.Append(step("a")))
	require.NoError(t, j.Close())
	j, err = Open(dir, "r1")
	require.NoError(t, err)
	defer j.Close()
	require.NoError(t, j.Append(Record{Type: TypeResume, Workflow: "workflows/flatcar.star"}))

	copied, err := j.WriteCopy(filepath.Join(t.TempDir(), "job", "journal"))
	require.NoError(t, err)
	assert.Equal(t, "r1.jsonl", filepath.Base(copied))
	want, err := os.ReadFile(Path(dir, "r1"))
	require.NoError(t, err)
	got, err := os.ReadFile(copied)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got), "the records read back and those appended since, byte for byte")
	recs, err := Read(copied)
	require.NoError(t, err)
	assert.Len(t, recs, 3)
}
