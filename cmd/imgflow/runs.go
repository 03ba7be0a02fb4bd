package main

import (
	"context"
	"fmt"
	"path/filepath"
	"text/tabwriter"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/journal"
)

func cmdRuns(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet("runs", e)
	var shared sharedFlags
	shared.addRoot(fs)
	shared.addState(fs)
	shared.addJournal(fs)
	shared.addOutput(fs, true)
	releaseFile := fs.String("release", "", "summarize the jobs of this release `file` (releases/aks.star): the latest run of each job under JOURNAL/RELEASE/JOB_ID, with its outputs and failure; exits 1 unless every job succeeded")
	junit := fs.String("junit", "", "with --release, also write the jobs as JUnit XML to `file` (one test case per job)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return flagError(err)
	}
	if len(pos) > 0 {
		return fmt.Errorf("runs takes no argument, got %q: a release goes after --release", pos[0])
	}
	asJSON, err := shared.jsonOutput(e)
	if err != nil {
		return err
	}
	if *junit != "" && *releaseFile == "" {
		return fmt.Errorf("--junit needs --release: it reports a release's jobs")
	}
	location := shared.journal
	if location == "" {
		dir, err := stateDirOf(shared.root, shared.target.stateDir)
		if err != nil {
			return err
		}
		location = filepath.Join(dir, "runs")
	}
	if *releaseFile != "" {
		return releaseRuns(ctx, e, shared.root, *releaseFile, location, asJSON, *junit)
	}
	runs, err := journal.List(location)
	if err != nil {
		return err
	}
	if asJSON {
		if runs == nil {
			runs = []journal.Summary{}
		}
		return writeJSON(e.stdout, runs)
	}
	if len(runs) == 0 {
		fmt.Fprintln(e.stdout, "no runs yet")
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tWORKFLOW\tSTATUS\tSTEPS\tSTARTED\tERROR")
	for _, r := range runs {
		status := r.Status
		if r.Resumable {
			status += " (resumable)"
		}
		started, workflow := "-", r.Workflow
		if !r.Started.IsZero() {
			started = r.Started.Format("2006-01-02 15:04:05")
		}
		if workflow == "" {
			workflow = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", r.RunID, workflow, status, r.Steps, started, r.Error)
	}
	return tw.Flush()
}

// releaseRuns prints the summary of a release's jobs read from their
// journals under base; it fails unless every job succeeded.
func releaseRuns(ctx context.Context, e *env, root, file, base string, asJSON bool, junit string) error {
	ws, err := builtins.NewWorkspace(root)
	if err != nil {
		return err
	}
	rel, err := releaseArg(ctx, ws, []string{file}, nil)
	if err != nil {
		return err
	}
	if rel == nil {
		return fmt.Errorf("--release %s is not a release file (one that calls job())", file)
	}
	sum, err := summarizeRelease(ctx, rel, base)
	if err != nil {
		return err
	}
	if junit != "" {
		if err := writeReleaseJUnit(junit, sum); err != nil {
			return err
		}
	}
	if asJSON {
		if err := writeJSON(e.stdout, sum); err != nil {
			return err
		}
	} else {
		writeReleaseSummary(e.stdout, sum)
	}
	if sum.Succeeded < len(sum.Jobs) {
		return exitCode(1)
	}
	return nil
}
