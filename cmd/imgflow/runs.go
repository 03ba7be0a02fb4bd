package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"text/tabwriter"

	"github.com/imgflow/imgflow/journal"
)

func cmdRuns(e *env, args []string) error {
	fs := newFlagSet("runs", e)
	root := fs.String("root", ".", "workspace root `dir`")
	stateDir := fs.String("state", "", "local target state `dir` (default ROOT/.imgflow)")
	journalAt := fs.String("journal", "", "list the runs journaled in this Azure blob container `URL` (as given to imgflow run --journal) instead of STATE/runs")
	asJSON := fs.Bool("json", false, "print the runs as JSON")
	output := fs.String("output", "text", "text or json (json is the same as --json)")
	if _, err := parseFlags(fs, args); err != nil {
		return flagError(err)
	}
	if err := checkOutputFlag(*output); err != nil {
		return err
	}
	*asJSON = *asJSON || *output == "json"
	location := *journalAt
	if location == "" {
		dir, err := stateDirOf(*root, *stateDir)
		if err != nil {
			return err
		}
		location = filepath.Join(dir, "runs")
	}
	runs, err := journal.List(location)
	if err != nil {
		return err
	}
	if *asJSON {
		if runs == nil {
			runs = []journal.Summary{}
		}
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(runs)
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
