package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/journal"
)

// cmdGC finishes the cleanups of runs that will not finish them
// themselves: succeeded or cancelled runs whose cleanups failed, and failed
// or interrupted runs older than --older-than (no longer worth resuming).
// A running run, or a resumable one younger than that, is never touched.
// What is cleaned comes from the journals: exactly the temporary resources
// imgflow's builtins registered (disks, export access, temporary images),
// not guesses from tags.
func cmdGC(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet("gc", e)
	var shared sharedFlags
	shared.addRoot(fs)
	shared.addState(fs)
	shared.addTarget(fs)
	shared.addJournal(fs)
	olderThan := fs.Duration("older-than", 4*time.Hour, "a failed or interrupted run older than this is abandoned")
	dryRun := fs.Bool("dry-run", false, "list what would be cleaned; change nothing")
	if _, err := parseFlags(fs, args); err != nil {
		return flagError(err)
	}
	ws, err := newWorkspace(shared.root)
	if err != nil {
		return err
	}
	tgt, err := openTarget(ctx, e, ws, shared.target)
	if err != nil {
		return err
	}
	defer tgt.close()
	if shared.journal != "" {
		tgt.runsDir = shared.journal
	}
	stores, err := journalStores(ctx, tgt)
	if err != nil {
		return err
	}
	g := gcPass{e: e, tgt: tgt, reg: builtins.NewRegistry(), now: time.Now(), olderThan: *olderThan, dryRun: *dryRun}
	for _, store := range stores {
		if err := g.sweep(ctx, store); err != nil {
			return err
		}
	}
	cleaned, failed, unread := g.cleaned, g.failed, g.unread
	if !*dryRun {
		for _, dir := range sweepPlanTempDirs(*olderThan) {
			fmt.Fprintf(e.stdout, "removed %s (a plan that did not finish)\n", dir)
		}
	}
	for _, store := range stores {
		if d, ok := store.(journal.Dir); ok && !*dryRun {
			// Journals a crash left half-made, before their header was in
			// place: no run, nothing to clean.
			if _, err := journal.SweepHalfMade(string(d)); err != nil {
				e.warnf("%v", err)
			}
		}
	}
	verb := "cleaned"
	if *dryRun {
		verb = "would clean"
	}
	if unread > 0 {
		fmt.Fprintf(e.stdout, "gc: %s %d resource(s), %d failed, %d journal(s) unreadable\n", verb, cleaned, failed, unread)
		return exitCode(1)
	}
	fmt.Fprintf(e.stdout, "gc: %s %d resource(s), %d failed\n", verb, cleaned, failed)
	if failed > 0 {
		return exitCode(1)
	}
	return nil
}

// journalStores are the journal locations gc sweeps: the target's, and
// below it each release job's folder (RELEASE/JOB, see jobJournal), whose
// abandoned runs leave temporaries as any run does.
func journalStores(ctx context.Context, tgt *target) ([]journal.Store, error) {
	base, err := tgt.journals()
	if err != nil {
		return nil, err
	}
	stores := []journal.Store{base}
	nested, ok := base.(journal.JobFolders)
	if !ok {
		return stores, nil
	}
	folders, err := nested.JobFolders(ctx)
	if err != nil {
		return nil, err
	}
	for _, f := range folders {
		rel, job, _ := strings.Cut(f, "/")
		s, err := tgt.journalsAt(jobJournal(tgt.runsDir, rel, job))
		if err != nil {
			return nil, err
		}
		stores = append(stores, s)
	}
	return stores, nil
}

// gcPass is one gc over the stores, counting what it did.
type gcPass struct {
	e                       *env
	tgt                     *target
	reg                     *builtins.Registry
	now                     time.Time
	olderThan               time.Duration
	dryRun                  bool
	cleaned, failed, unread int
}

// sweep cleans up after the abandoned runs of one store.
func (g *gcPass) sweep(ctx context.Context, store journal.Store) error {
	e := g.e
	runs, err := store.List(ctx)
	if err != nil {
		return err
	}
	for _, r := range runs {
		switch {
		case r.Status == journal.StatusCorrupt:
			e.errorf("run %s: %s\nits cleanups are not all known, so none is run: check the resources of run %s by hand, then move the journal aside", r.RunID, r.Error, r.RunID)
			g.unread++
			continue
		case r.Status == journal.StatusNotStarted:
			// Torn in its first write: the header comes before any
			// change, so there is nothing to clean but the journal.
			discardNotStarted(ctx, e, store, r.RunID, g.dryRun)
			continue
		case r.Status == journal.StatusUnreadable:
			e.errorf("run %s: journal unreadable (%s): its cleanups, if any, are not known; check its resources by hand", r.RunID, r.Error)
			g.unread++
			continue
		}
		if reason := keep(r, g.now, g.olderThan); reason != "" {
			continue
		}
		if r.Warning != "" {
			e.warnf("run %s: %s", r.RunID, r.Warning)
		}
		removeRunTempDir(e, r.RunID, g.dryRun)
		n, errs := collectRun(ctx, e, g.tgt, g.reg, store, r, g.dryRun)
		g.cleaned += n
		g.failed += len(errs)
		for _, err := range errs {
			e.errorf("%v", err)
		}
	}
	return nil
}

// discardNotStarted removes the journal of a run that had not started
// (its header torn) and its temporary files, saying so.
func discardNotStarted(ctx context.Context, e *env, store journal.Store, runID string, dryRun bool) {
	d, ok := store.(journal.Discarder)
	if !ok {
		e.warnf("run %s had not started: its journal holds no complete record and no cleanup; remove it by hand", runID)
		return
	}
	removeRunTempDir(e, runID, dryRun)
	if dryRun {
		fmt.Fprintf(e.stdout, "would remove the journal of run %s, which had not started\n", runID)
		return
	}
	if err := d.DiscardNotStarted(ctx, runID); err != nil {
		e.warnf("run %s had not started: %v", runID, err)
		return
	}
	fmt.Fprintf(e.stdout, "removed the journal of run %s, which had not started (its header was torn by a crash)\n", runID)
}

// keep says why a run's leftovers must stay ("" when they may go).
func keep(r journal.Summary, now time.Time, olderThan time.Duration) string {
	switch {
	case r.Status == journal.StatusRunning:
		return "running"
	case r.Resumable && r.Status != journal.StatusCancelled && now.Sub(r.Updated) < olderThan:
		return "resumable"
	}
	return ""
}

// removeRunTempDir removes what a run that ended without removing it (a
// killed imgflow) left in its temporary place on this machine: a packer
// build's working directory, staged uploads.
func removeRunTempDir(e *env, runID string, dryRun bool) {
	dir := builtins.RunTempDir(runID)
	if _, err := os.Stat(dir); err != nil {
		return
	}
	if dryRun {
		fmt.Fprintf(e.stdout, "would remove %s (run %s)\n", dir, runID)
		return
	}
	if err := os.RemoveAll(dir); err != nil {
		e.warnf("run %s: remove its temporary files: %v", runID, err)
		return
	}
	fmt.Fprintf(e.stdout, "removed %s (run %s)\n", dir, runID)
}

// collectRun runs the pending cleanups of one run, journaling each.
func collectRun(ctx context.Context, e *env, tgt *target, reg *builtins.Registry, store journal.Store, r journal.Summary, dryRun bool) (int, []error) {
	j, err := store.Open(ctx, r.RunID)
	if journal.IsCorrupt(err) {
		return 0, []error{err} // damaged since it was listed
	}
	if err != nil {
		return 0, nil // taken by a run that started meanwhile: leave it
	}
	defer j.Close()
	pending := journal.PendingCleanups(j.Records())
	slices.Reverse(pending) // newest first, as the run itself would have
	var errs []error
	n := 0
	for _, c := range pending {
		if dryRun {
			fmt.Fprintf(e.stdout, "would %s (run %s, %s)\n", c.Name, r.RunID, r.Status)
			n++
			continue
		}
		if err := reg.RunCleanupIn(ctx, tgt.provider, tgt.subs, c); err != nil {
			errs = append(errs, fmt.Errorf("run %s: %s: %w", r.RunID, c.Name, err))
			continue
		}
		if err := j.Append(journal.Record{Type: journal.TypeCleanupDone, CleanupID: c.ID}); err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(e.stdout, "%s (run %s, %s)\n", c.Name, r.RunID, r.Status)
		n++
	}
	return n, errs
}
