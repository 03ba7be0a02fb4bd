package main

import (
	"fmt"
	"path/filepath"
	"text/tabwriter"

	"github.com/imgflow/imgflow/journal"
)

func cmdRuns(e *env, args []string) error {
	fs := newFlagSet("runs", e)
	var shared sharedFlags
	shared.addRoot(fs)
	shared.addState(fs)
	shared.addJournal(fs)
	shared.addOutput(fs, true)
	if _, err := parseFlags(fs, args); err != nil {
		return flagError(err)
	}
	asJSON, err := shared.jsonOutput(e)
	if err != nil {
		return err
	}
	location := shared.journal
	if location == "" {
		dir, err := stateDirOf(shared.root, shared.target.stateDir)
		if err != nil {
			return err
		}
		location = filepath.Join(dir, "runs")
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
