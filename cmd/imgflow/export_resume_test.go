package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/faults"
	"github.com/imgflow/imgflow/cloud/local"
	"github.com/imgflow/imgflow/cloud/overlay"
	"github.com/imgflow/imgflow/internal/testharness"
	"github.com/imgflow/imgflow/interp"
	"github.com/imgflow/imgflow/journal"
)

var exportRef = cloud.BlobRef{Account: "gcstore", Container: "vhds", Name: "disk-1.0.0.vhd"}

func blobIn(t *testing.T, dir string) *cloud.Blob {
	t.Helper()
	p, err := local.Open(dir, local.Options{})
	require.NoError(t, err)
	defer p.Close()
	b, err := p.GetBlob(context.Background(), exportRef)
	if cloud.IsNotFound(err) {
		return nil
	}
	require.NoError(t, err)
	return b
}

func resumeExport(t *testing.T, dir, runID string) {
	t.Helper()
	res := imgflow(t, "run", "--root", repoRoot(t), "--state", dir, "--resume", runID)
	require.Equal(t, 0, res.code, res.String())
	b := blobIn(t, dir)
	require.NotNil(t, b)
	assert.NotEmpty(t, b.Metadata["imgflowsource"], "the resumed export is marked")
	assert.Empty(t, disksIn(t, dir))
}

// Killed after the copy, before the blob is marked as the version's export:
// gc deletes the disk and the unmarked copy (it is journaled from before
// its first byte), and the run resumes.
func TestAnExportKilledBeforeItsMarkResumesAfterGC(t *testing.T) {
	dir := t.TempDir()
	crashedExportAt(t, dir, "CopyBlob")
	require.NotNil(t, blobIn(t, dir), "the crash leaves the unmarked copy")

	gc := imgflow(t, "gc", "--root", repoRoot(t), "--state", dir, "--older-than", "0s")
	require.Equal(t, 0, gc.code, gc.String())
	assert.Contains(t, gc.stdout, "delete unfinished export")
	assert.Nil(t, blobIn(t, dir), "gc deletes the unmarked copy")
	resumeExport(t, dir, "crashed")
}

// Without gc in between, the resume recognises its own unfinished copy.
func TestAnExportKilledBeforeItsMarkResumes(t *testing.T) {
	dir := t.TempDir()
	crashedExportAt(t, dir, "CopyBlob")
	resumeExport(t, dir, "crashed")
}

// A run whose export fails (or is cancelled) during the verification runs
// its cleanups; the unmarked copy goes with the disk, and a resume exports
// again.
func TestAnExportThatFailedInItsVerificationResumes(t *testing.T) {
	dir := t.TempDir()
	h := testharness.New(t, repoRoot(t), "failed")
	h.Info.Time = time.Now().UTC()
	p, err := local.Open(dir, local.Options{})
	require.NoError(t, err)
	j, err := journal.Create(filepath.Join(dir, "runs"), journal.Record{RunID: "failed", RunTime: &h.Info.Time, Workflow: "testdata/gc/export.star", Target: "local"})
	require.NoError(t, err)
	set := faults.NewFaults(map[string]faults.Fault{"ReadBlob": {StatusCode: 500, Code: "InternalError", Message: "injected"}})
	cfg := h.Config(nil)
	cfg.Journal = j
	res := interp.Run(context.Background(), "//testdata/gc/export.star", cfg, interp.Target{Apply: faults.WithFaults(p, set), Validate: overlay.New(p)})
	require.Error(t, res.Err)
	require.False(t, res.Crashed)
	require.NoError(t, j.Append(journal.Record{Type: journal.TypeEnd, Status: journal.StatusFailed, Error: res.Err.Error()}))
	require.NoError(t, j.Close())
	require.NoError(t, p.Close())
	assert.Nil(t, blobIn(t, dir), "the failed export's cleanups delete its unmarked copy")
	resumeExport(t, dir, "failed")
}
