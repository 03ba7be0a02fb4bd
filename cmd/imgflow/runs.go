package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

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
		return releaseRuns(ctx, e, shared, *releaseFile, location, asJSON, *junit)
	}
	store, err := runsStore(ctx, e, shared, location)
	if err != nil {
		return err
	}
	runs, err := store.List(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		if runs == nil {
			runs = []journal.Summary{}
		}
		return writeJSON(e.stdout, runsReport{Journal: store.String(), Runs: runs})
	}
	for _, r := range runs {
		if r.Warning != "" {
			e.warnf("run %s: %s", r.RunID, r.Warning)
		}
	}
	releases := releaseFolders(location)
	if len(runs) == 0 {
		fmt.Fprintln(e.stdout, "no runs yet")
		printReleaseFolders(e, shared.root, releases)
		return nil
	}
	defer printReleaseFolders(e, shared.root, releases)
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

// runsReport is `imgflow runs --output json`: an object, as every other
// command's document, so fields can be added beside the runs.
type runsReport struct {
	// Journal is where the runs were read: a directory, or a container
	// URL without its SAS.
	Journal string            `json:"journal"`
	Runs    []journal.Summary `json:"runs"`
}

// releaseFolder is a release whose jobs' runs a journal directory holds
// (DIR/RELEASE/JOB_ID, see jobJournal).
type releaseFolder struct {
	name string
	jobs int
}

// releaseFolders finds the releases with job runs in a journal directory;
// a container URL is not searched.
func releaseFolders(dir string) []releaseFolder {
	if journal.IsURL(dir) {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []releaseFolder
	for _, rel := range entries {
		if !rel.IsDir() {
			continue
		}
		jobs, _ := filepath.Glob(filepath.Join(dir, rel.Name(), "*", "*.jsonl"))
		seen := map[string]bool{}
		for _, j := range jobs {
			seen[filepath.Base(filepath.Dir(j))] = true
		}
		if len(seen) > 0 {
			out = append(out, releaseFolder{name: rel.Name(), jobs: len(seen)})
		}
	}
	return out
}

// printReleaseFolders says where the releases' runs are, and the command
// that summarises each.
func printReleaseFolders(e *env, root string, releases []releaseFolder) {
	for _, r := range releases {
		file := filepath.Join("releases", r.name+".star")
		if _, err := os.Stat(filepath.Join(root, file)); err != nil {
			file = "RELEASE_FILE"
		}
		jobs := fmt.Sprintf("%d jobs", r.jobs)
		if r.jobs == 1 {
			jobs = "1 job"
		}
		fmt.Fprintf(e.stdout, "release %s: runs of %s, summarised by: imgflow runs --release %s\n", r.name, jobs, file)
	}
}

// releaseRuns prints the summary of a release's jobs read from their
// journals under base; it fails unless every job succeeded.
func releaseRuns(ctx context.Context, e *env, shared sharedFlags, file, base string, asJSON bool, junit string) error {
	ws, err := newWorkspace(shared.root)
	if err != nil {
		return err
	}
	rel, err := releaseArg(ctx, ws, []string{file}, nil)
	if err != nil {
		return err
	}
	if rel == nil {
		return notARelease(file, "runs --release")
	}
	sum, err := summarizeRelease(ctx, rel, base, func(location string) (journal.Store, error) {
		return runsStore(ctx, e, shared, location)
	})
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

// runsStore is the journals' store at location. A container URL without a
// SAS is read as the Azure target reads blobs: its credential and
// $IMGFLOW_AZURE_STORAGE_AUTH, on $AZURE_SUBSCRIPTION_ID.
func runsStore(ctx context.Context, e *env, shared sharedFlags, location string) (journal.Store, error) {
	if !journal.IsURL(location) || strings.Contains(strings.ToLower(location), "sig=") {
		return journal.OpenStore(location)
	}
	ws, err := newWorkspace(shared.root)
	if err != nil {
		return nil, err
	}
	flags := shared.target
	flags.name, flags.storageAuth, flags.credential, flags.cloud = "azure", os.Getenv(envStorageAuth), os.Getenv(envCredential), os.Getenv(envCloud)
	tgt, err := openTarget(ctx, e, ws, flags)
	if err != nil {
		return nil, fmt.Errorf("journal %s: %w", location, err)
	}
	tgt.runsDir = location
	return tgt.journals()
}
