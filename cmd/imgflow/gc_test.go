package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/builtins/faulthook"
	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/faults"
	"github.com/imgflow/imgflow/cloud/local"
	"github.com/imgflow/imgflow/cloud/overlay"
	"github.com/imgflow/imgflow/internal/testharness"
	"github.com/imgflow/imgflow/interp"
	"github.com/imgflow/imgflow/journal"
)

// crashedExport runs testdata/gc/export.star on the local state in dir and
// crashes it right after the export's read access was granted, as a dead
// process would: the temporary disk and its access are left behind.
func crashedExport(t *testing.T, dir string) { crashedExportAt(t, dir, "CopyBlob") }

// crashedExportAt is crashedExport dying at the provider call op.
func crashedExportAt(t *testing.T, dir, op string) {
	t.Helper()
	crashedExportJournaledIn(t, dir, filepath.Join(dir, "runs"), op)
}

// crashedExportJournaledIn is crashedExportAt with the run's journal in
// runs (a release job's folder, say).
func crashedExportJournaledIn(t *testing.T, dir, runs, op string) {
	t.Helper()
	h := testharness.New(t, repoRoot(t), "crashed")
	h.Info.Time = time.Now().UTC()
	p, err := local.Open(dir, local.Options{})
	require.NoError(t, err)
	defer p.Close()
	j, err := journal.Create(runs, journal.Record{RunID: "crashed", RunTime: &h.Info.Time, Workflow: "testdata/gc/export.star", Target: "local"})
	require.NoError(t, err)
	defer j.Close()
	set := faults.NewFaults(map[string]faults.Fault{op: {Crash: true}})
	cfg := h.Config(nil)
	cfg.Journal = j
	res := interp.Run(context.Background(), "//testdata/gc/export.star", cfg, interp.Target{Apply: faults.WithFaults(p, set), Validate: overlay.New(p)})
	require.True(t, res.Crashed, "%v", res.Err)
	require.Len(t, disks(t, p), 1, "the crash leaves the temporary disk")
}

func disks(t *testing.T, p *local.Provider) []*cloud.Disk {
	var out []*cloud.Disk
	for _, rg := range p.Snapshot().ResourceGroups {
		for _, d := range rg.Disks {
			out = append(out, d)
		}
	}
	return out
}

func disksIn(t *testing.T, dir string) []*cloud.Disk {
	t.Helper()
	p, err := local.Open(dir, local.Options{})
	require.NoError(t, err)
	defer p.Close()
	return disks(t, p)
}

// killedRunTemp makes what a killed run "crashed" leaves in its
// temporary place (a packer build's directory), in a TMPDIR of the test's.
func killedRunTemp(t *testing.T) string {
	t.Setenv("TMPDIR", t.TempDir())
	left := filepath.Join(builtins.RunTempDir("crashed"), "imgflow-build-1", "cwd")
	require.NoError(t, os.MkdirAll(left, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(left, "image-bom.json"), []byte("{}"), 0o644))
	return builtins.RunTempDir("crashed")
}

func TestGCFinishesTheCleanupsOfAnAbandonedRun(t *testing.T) {
	dir := t.TempDir()
	crashedExport(t, dir)
	temp := killedRunTemp(t)

	// Young enough to be resumed: left alone.
	res := imgflow(t, "gc", "--root", repoRoot(t), "--state", dir)
	require.Equal(t, 0, res.code, res.String())
	assert.Contains(t, res.stdout, "gc: cleaned 0 resource(s)")
	assert.Len(t, disksIn(t, dir), 1)

	// Abandoned: a dry run lists revoke and delete, changes nothing.
	res = imgflow(t, "gc", "--root", repoRoot(t), "--state", dir, "--older-than", "0s", "--dry-run")
	require.Equal(t, 0, res.code, res.String())
	assert.Contains(t, res.stdout, "would revoke access to disk imgflow-export-")
	assert.Contains(t, res.stdout, "would delete disk imgflow-export-")
	assert.Len(t, disksIn(t, dir), 1)

	assert.Contains(t, res.stdout, "would remove "+temp+" (run crashed)")
	assert.DirExists(t, temp)

	res = imgflow(t, "gc", "--root", repoRoot(t), "--state", dir, "--older-than", "0s")
	require.Equal(t, 0, res.code, res.String())
	assert.Contains(t, res.stdout, "gc: cleaned 3 resource(s), 0 failed", "revoke, delete the disk, delete the unfinished export")
	assert.Empty(t, disksIn(t, dir), "the disk is gone")
	assert.NoDirExists(t, temp, "what the killed run left in its temporary place is gone")

	// The cleanups are journaled: a second gc finds nothing to do.
	res = imgflow(t, "gc", "--root", repoRoot(t), "--state", dir, "--older-than", "0s")
	require.Equal(t, 0, res.code, res.String())
	assert.Contains(t, res.stdout, "gc: cleaned 0 resource(s)")
}

func TestGCCleansUpAfterTheRunsOfReleaseJobs(t *testing.T) {
	dir := t.TempDir()
	// `imgflow run releases/aks.star` journals job gen2 in runs/aks/gen2.
	crashedExportJournaledIn(t, dir, filepath.Join(dir, "runs", "aks", "gen2"), "CopyBlob")
	temp := killedRunTemp(t)

	res := imgflow(t, "gc", "--root", repoRoot(t), "--state", dir, "--older-than", "0s", "--dry-run")
	require.Equal(t, 0, res.code, res.String())
	assert.Contains(t, res.stdout, "would delete disk imgflow-export-", "the job's run is found below the journal location")
	assert.Contains(t, res.stdout, "would remove "+temp+" (run crashed)")

	res = imgflow(t, "gc", "--root", repoRoot(t), "--state", dir, "--older-than", "0s")
	require.Equal(t, 0, res.code, res.String())
	assert.Contains(t, res.stdout, "gc: cleaned 3 resource(s), 0 failed")
	assert.Empty(t, disksIn(t, dir), "the job's temporary disk is gone")
	assert.NoDirExists(t, temp)

	runs, err := journal.Dir(filepath.Join(dir, "runs", "aks", "gen2")).List(context.Background())
	require.NoError(t, err)
	require.Len(t, runs, 1, "the job's journal stays where the job continues it")
}

func TestGCNeverTouchesARunningRun(t *testing.T) {
	dir := t.TempDir()
	crashedExport(t, dir)
	j, err := journal.Open(filepath.Join(dir, "runs"), "crashed") // the run resumed, still going
	require.NoError(t, err)
	defer j.Close()
	temp := killedRunTemp(t)
	res := imgflow(t, "gc", "--root", repoRoot(t), "--state", dir, "--older-than", "0s")
	require.Equal(t, 0, res.code, res.String())
	assert.Contains(t, res.stdout, "gc: cleaned 0 resource(s)")
	assert.Len(t, disksIn(t, dir), 1)
	assert.DirExists(t, temp, "a running run's temporary files stay")
}

func TestResumeFinishesTheCleanupsOfTheCrashedAttempt(t *testing.T) {
	dir := t.TempDir()
	crashedExport(t, dir) // died inside sig_to_vhd, after the disk was made
	res := imgflow(t, "run", "--root", repoRoot(t), "--state", dir, "--resume", "crashed")
	require.Equal(t, 0, res.code, res.String())
	assert.Contains(t, res.stdout, "replayed")
	assert.Empty(t, disksIn(t, dir), "the resumed run deletes the disk the crashed attempt made")
	runs := imgflow(t, "runs", "--root", repoRoot(t), "--state", dir)
	assert.Contains(t, runs.stdout, "succeeded")
}

// A temporary() resource (here an uploaded blob) of a run killed before
// its cleanups is deleted by gc: lib/temporary.star journals the deletion
// when it registers it.
func TestGCDeletesTheTemporariesOfAKilledRun(t *testing.T) {
	dir := t.TempDir()
	h := testharness.New(t, repoRoot(t), "killed")
	h.Info.Time = time.Now().UTC()
	p, err := local.Open(dir, local.Options{})
	require.NoError(t, err)
	j, err := journal.Create(filepath.Join(dir, "runs"), journal.Record{RunID: "killed", RunTime: &h.Info.Time, Workflow: "testdata/gc/temporary.star", Target: "local"})
	require.NoError(t, err)
	set := faults.NewFaults(map[string]faults.Fault{"gallery": {Crash: true}})
	cfg := h.Config(nil)
	cfg.Journal, cfg.Hooks = j, faulthook.Hooks(set)
	res := interp.Run(context.Background(), "//testdata/gc/temporary.star", cfg, interp.Target{Apply: faults.WithFaults(p, set), Validate: overlay.New(p)})
	require.True(t, res.Crashed, "%v", res.Err)
	ref := cloud.BlobRef{Account: "gcstore", Container: "uploads", Name: "disk.vhd"}
	_, err = p.GetBlob(context.Background(), ref)
	require.NoError(t, err, "the crash leaves the temporary blob")
	require.NoError(t, j.Close())
	require.NoError(t, p.Close())

	res2 := imgflow(t, "gc", "--root", repoRoot(t), "--state", dir, "--older-than", "0s", "--dry-run")
	require.Equal(t, 0, res2.code, res2.String())
	assert.Contains(t, res2.stdout, "disk.vhd")
	res2 = imgflow(t, "gc", "--root", repoRoot(t), "--state", dir, "--older-than", "0s")
	require.Equal(t, 0, res2.code, res2.String())
	assert.Contains(t, res2.stdout, "gc: cleaned 1 resource(s), 0 failed")

	p, err = local.Open(dir, local.Options{})
	require.NoError(t, err)
	defer p.Close()
	_, err = p.GetBlob(context.Background(), ref)
	assert.True(t, cloud.IsNotFound(err), "gc deleted the blob: %v", err)
}

// The temporary directory of a plan that was killed (its packer builds'
// directories) is removed by gc; a running plan's, recently written, is
// not.
func TestGCRemovesTheTemporaryDirOfAKilledPlan(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	info := newPlanInfo()
	old, _, err := planTempDir(info)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(old, "imgflow-build-1", "cwd"), 0o755))
	past := time.Now().Add(-2 * time.Hour)
	require.NoError(t, os.Chtimes(old, past, past))
	running, removeRunning, err := planTempDir(info)
	require.NoError(t, err)
	defer removeRunning()
	assert.Regexp(t, `imgflow-run-\d{8}-plan-\d+$`, old)

	gc := imgflow(t, "gc", "--root", repoRoot(t), "--state", t.TempDir(), "--older-than", "1h")
	require.Equal(t, 0, gc.code, gc.String())
	assert.Contains(t, gc.stdout, "removed "+old+" (a plan that did not finish)")
	assert.NoDirExists(t, old)
	assert.DirExists(t, running)
}
