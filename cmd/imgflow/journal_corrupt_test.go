package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/journal"
)

// damageLine rewrites line n (1-based) of a journal.
func damageLine(t *testing.T, path string, n int, damage func([]byte) []byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	ls := bytes.SplitAfter(data, []byte("\n"))
	ls[n-1] = damage(ls[n-1])
	require.NoError(t, os.WriteFile(path, bytes.Join(ls, nil), 0o600))
}

// lineOf is the 1-based line of the first journal record containing s.
func lineOf(t *testing.T, path, s string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	for i, l := range bytes.Split(data, []byte("\n")) {
		if bytes.Contains(l, []byte(s)) {
			return i + 1
		}
	}
	t.Fatalf("no %q in %s", s, path)
	return 0
}

// A damaged line registering a cleanup: gc must neither report success nor
// run part of the run's cleanups; runs, --resume and gc name the file and
// line.
func TestADamagedJournalIsReportedNotMisread(t *testing.T) {
	dir := t.TempDir()
	crashedExport(t, dir)
	path := filepath.Join(dir, "runs", "crashed.jsonl")
	n := lineOf(t, path, `"type":"cleanup"`)
	damageLine(t, path, n, func(l []byte) []byte { return bytes.Replace(l, []byte(`"kind":"`), []byte(`"kind":"x`), 1) })
	where := path + ":" + itoa(n)

	runs := imgflow(t, "runs", "--state", dir)
	require.Equal(t, 0, runs.code, runs.String())
	assert.Regexp(t, `crashed\s+-\s+corrupt\s+0`, runs.stdout)
	assert.Contains(t, runs.stdout, where)
	assert.NotContains(t, runs.stdout, "resumable")

	gc := imgflow(t, "gc", "--root", repoRoot(t), "--state", dir, "--older-than", "0s")
	assert.Equal(t, 1, gc.code, gc.String())
	assert.Contains(t, gc.stderr, where)
	assert.Contains(t, gc.stdout, "1 journal(s) unreadable")
	assert.Len(t, disksIn(t, dir), 1, "no cleanup of a run whose cleanups are not all known")

	res := imgflow(t, "run", "--root", repoRoot(t), "--state", dir, "--resume", "crashed")
	assert.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stderr, where)
	assert.Contains(t, res.stderr, "checksum mismatch")
}

// A header deleted, or replaced by null: the run is corrupt, not an
// interrupted run with no id.
func TestAJournalWithoutItsHeaderIsCorrupt(t *testing.T) {
	for name, damage := range map[string]func([]byte) []byte{
		"deleted": func([]byte) []byte { return nil },
		"null":    func([]byte) []byte { return []byte("null\n") },
		"a list":  func([]byte) []byte { return []byte("[]\n") },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			crashedExport(t, dir)
			path := filepath.Join(dir, "runs", "crashed.jsonl")
			damageLine(t, path, 1, damage)
			runs := imgflow(t, "runs", "--state", dir)
			assert.Regexp(t, `crashed\s+-\s+corrupt\s+0`, runs.stdout)
			assert.Contains(t, runs.stdout, path+":1")
			gc := imgflow(t, "gc", "--root", repoRoot(t), "--state", dir, "--older-than", "0s")
			assert.Equal(t, 1, gc.code, gc.String())
			assert.NotContains(t, gc.stdout, "gc: cleaned 0 resource(s), 0 failed\n")
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// --continue picks the newest run of a journal location: with a damaged
// journal there, which one that is cannot be known, so it refuses, naming
// the file and line (it said "holds runs of , not X").
func TestContinueRefusesADamagedJournal(t *testing.T) {
	dir := t.TempDir()
	crashedExport(t, dir)
	runsDir := filepath.Join(dir, "runs")
	path := filepath.Join(runsDir, "crashed.jsonl")
	damageLine(t, path, 1, func([]byte) []byte { return []byte("null\n") })
	_, err := continuedRun(context.Background(), journal.Dir(runsDir), "testdata/gc/export.star")
	require.Error(t, err)
	assert.Contains(t, err.Error(), path+":1")
	assert.NotContains(t, err.Error(), "holds runs of")
}
