package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"go.starlark.net/starlark"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/internal/redact"
	"github.com/imgflow/imgflow/interp"
	"github.com/imgflow/imgflow/journal"
	"github.com/imgflow/imgflow/release"
)

// A release file (releases/aks.star) lists jobs; run, plan, ci and runs
// take one where they take a workflow. Each job keeps its runs in a
// journal location of its own, JOURNAL/RELEASE/JOB_ID, the same on this
// machine and on every CI agent, so any agent continues any job.

// releaseArg loads the release file named by the only positional
// argument, or returns nil when the argument is a workflow. The --var
// values, if any, override the jobs' vars (release.Override): what
// differs between machines, such as where a checkout is.
func releaseArg(ctx context.Context, ws *builtins.Workspace, pos []string, values map[string]starlark.Value) (*release.Release, error) {
	if len(pos) != 1 || !release.IsReleaseFile(pos[0]) {
		return nil, nil
	}
	file, err := workspacePath(ws, pos[0])
	if err != nil {
		return nil, err
	}
	overrides := make(map[string]string, len(values))
	for name, v := range values {
		s, err := release.VarString(v)
		if err != nil {
			return nil, fmt.Errorf("--var %s: %w", name, err)
		}
		overrides[name] = s
	}
	rel, err := release.LoadVars(ctx, ws, "//"+file, overrides)
	if err != nil {
		return nil, err
	}
	if err := rel.Override(overrides); err != nil {
		return nil, err
	}
	return rel, nil
}

// jobJournal is where a release job's runs are journaled: base/RELEASE/ID,
// base a directory or a container URL (whose SAS query stays at its end).
func jobJournal(base, releaseName, id string) string {
	if !journal.IsURL(base) {
		return filepath.Join(base, releaseName, id)
	}
	u, query, _ := strings.Cut(base, "?")
	loc := strings.TrimRight(u, "/") + "/" + releaseName + "/" + id
	if query != "" {
		loc += "?" + query
	}
	return loc
}

// continuedRun is the run `imgflow run --continue` continues in location:
// the newest one, whatever its state (a succeeded run replays every step
// and changes nothing), unless validation refused it or its journal cannot
// be read: then "" (a new run starts). Runs of another workflow there are
// an error: each job has a journal location of its own.
func continuedRun(ctx context.Context, store journal.Store, workflow string) (string, error) {
	runs, err := store.List(ctx)
	if err != nil {
		return "", err
	}
	for _, r := range runs {
		if r.Status == journal.StatusCorrupt {
			// Its run may be the newest: continuing another, or a new
			// run, could redo what it published.
			return "", fmt.Errorf("--continue: %s\nthe latest run in %s is not known while this journal is damaged: check the resources of its run by hand, then move the journal aside", r.Error, store)
		}
	}
	if len(runs) == 0 {
		return "", nil
	}
	r := runs[0]
	switch {
	case r.Status == journal.StatusInvalid || r.Status == journal.StatusUnreadable || r.Status == journal.StatusNotStarted:
		return "", nil
	case r.Workflow != workflow:
		return "", fmt.Errorf("--continue: the journal %s holds runs of %s, not %s: give each job a --journal of its own", store, r.Workflow, workflow)
	}
	return r.RunID, nil
}

// runRelease runs the jobs of a release side by side (at most jobs at
// once) on one target, each continuing the latest run of its journal
// location, then prints the release's summary. It fails when a job fails.
func runRelease(ctx context.Context, e *env, ws *builtins.Workspace, tgt *target, rel *release.Release, jobs int, maxSteps uint64, stopAt string) error {
	if jobs < 1 {
		jobs = 1
	}
	e = e.synchronized()
	// Every job is planned before any runs: a bad var in one job stops
	// the release before anything changes.
	var invalid bool
	for i, res := range planJobs(ctx, ws, tgt, rel, &printReporter{w: e.stderr}, nil) {
		if res.Err != nil {
			invalid = true
			e.errorf("%s: job %s: %v", rel.Jobs[i].Pos, rel.Jobs[i].ID, res.Err)
		}
	}
	if invalid {
		e.errorf("the release's jobs were planned before running any: nothing was changed; fix the jobs above (imgflow plan %s checks them)", rel.File)
		return exitCode(1)
	}
	fmt.Fprintf(e.stdout, "imgflow run %s: %d jobs, %d at once (target %s, journals in %s)\n", rel.File, len(rel.Jobs), jobs, tgt.name, redact.URL(jobJournal(tgt.runsDir, rel.Name, "…")))
	reg := builtins.NewRegistry()
	var wg sync.WaitGroup
	sem := make(chan struct{}, jobs)
	for _, j := range rel.Jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			defer func() { <-sem }()
			if err := runJob(ctx, e, ws, tgt, reg, rel, j, maxSteps, stopAt); err != nil {
				e.errorf("[%s] %v", j.ID, err)
			}
		}()
	}
	wg.Wait()
	sum, err := summarizeRelease(ctx, rel, tgt.runsDir, tgt.journalsAt)
	if err != nil {
		return err
	}
	writeReleaseSummary(e.stdout, sum)
	if sum.Failed > 0 {
		return exitCode(1)
	}
	return nil
}

// runJob runs one job of a release in its journal location: the run a
// journal already holds continues (its finished steps replay), else a new
// one starts.
func runJob(ctx context.Context, e *env, ws *builtins.Workspace, tgt *target, reg *builtins.Registry, rel *release.Release, j *release.Job, maxSteps uint64, stopAt string) error {
	store, err := tgt.journalsAt(jobJournal(tgt.runsDir, rel.Name, j.ID))
	if err != nil {
		return err
	}
	resume, err := continuedRun(ctx, store, j.Workflow)
	if err != nil {
		return err
	}
	vars := j.StarlarkVars()
	jf, info, file, err := openJournal(ctx, ws, store, resume, []string{filepath.Join(ws.Root, j.Workflow)}, vars, tgt.name)
	if err != nil {
		return err
	}
	defer jf.Close()
	rep := newConsoleReporter(e)
	rep.prefix = "[" + j.ID + "] "
	verb := "imgflow run"
	if resume != "" {
		verb = "imgflow run --continue"
	}
	fmt.Fprintf(e.stdout, "%s%s %s %s\n", rep.prefix, verb, file, rep.dim(fmt.Sprintf("(run %s)", info.ID)))
	// What a killed job left there, imgflow gc removes.
	defer os.RemoveAll(builtins.RunTempDir(info.ID))
	res := interp.Run(ctx, "//"+file, interp.Config{
		Workspace: ws, Registry: reg, Vars: vars, Info: info, MaxSteps: maxSteps, Reporter: rep, Journal: jf, Packer: tgt.packer, StopAt: stopAt,
		TempDir: builtins.RunTempDir(info.ID), Subscriptions: tgt.subscriptions(),
	}, interp.Target{Apply: tgt.provider, Validate: tgt.dryRun()})
	if err := endJournal(ctx, jf, res); err != nil {
		return err
	}
	if res.Err != nil {
		return fmt.Errorf("%s: job %s: %w", j.Pos, j.ID, res.Err)
	}
	if res.Stopped != "" {
		fmt.Fprintf(e.stdout, "%sstopped at gate %s: run the release again without --stop-at to go past it\n", rep.prefix, res.Stopped)
	}
	for _, o := range res.Outputs {
		fmt.Fprintf(e.stdout, "%s%s = %s\n", rep.prefix, o.Name, jsonText(o.Value))
	}
	return nil
}
