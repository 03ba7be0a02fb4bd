package main

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/imgflow/imgflow/internal/redact"
	"github.com/imgflow/imgflow/journal"
	"github.com/imgflow/imgflow/release"
)

// jobNotRun is the status of a release job whose journal holds no run.
const jobNotRun = "not run"

// ReleaseSummary is the state of every job of a release, read from the
// jobs' journals (`imgflow runs --release RELEASE --output json`): the
// fan-in of a release run on several agents. Fields are only ever added.
type ReleaseSummary struct {
	Release string       `json:"release"`
	File    string       `json:"file"`
	Jobs    []JobSummary `json:"jobs"`
	// Succeeded, Failed, NotRun and Stopped count the jobs; Failed
	// counts every job that ran and did not succeed (failed, cancelled,
	// interrupted, invalid, running); Stopped those waiting at their
	// --stop-at gate (an approval).
	Succeeded int `json:"succeeded"`
	Failed    int `json:"failed"`
	NotRun    int `json:"not_run"`
	Stopped   int `json:"stopped"`
}

// JobSummary is one job of a ReleaseSummary: the latest run in its
// journal location.
type JobSummary struct {
	ID       string            `json:"id"`
	Workflow string            `json:"workflow"`
	Vars     map[string]string `json:"vars"`
	// Pos is the job() call's file:line:col in the release file.
	Pos string `json:"pos"`
	// Journal is the job's journal location (no SAS).
	Journal string `json:"journal"`
	// Status is the run's (see imgflow runs), or "not run". DurationMS
	// is how long its attempts took, without the time between them.
	Status     string         `json:"status"`
	RunID      string         `json:"run_id"`
	Attempts   int            `json:"attempts"`
	Started    *time.Time     `json:"started"`
	Updated    *time.Time     `json:"updated"`
	DurationMS int64          `json:"duration_ms"`
	Steps      int            `json:"steps"`
	Outputs    map[string]any `json:"outputs"`
	// Artifacts are the files the run wrote with artifact(): on a CI
	// agent, under --artifacts, which the pipeline publishes.
	Artifacts []journal.Artifact `json:"artifacts"`
	// Error is the first line of the run's error, starting with the
	// workflow's file:line:col when it has one.
	Error string `json:"error,omitempty"`
}

// summarizeRelease reads the latest run of each job of rel under base (a
// directory or a container URL), each job's journals opened with open.
func summarizeRelease(ctx context.Context, rel *release.Release, base string, open func(location string) (journal.Store, error)) (*ReleaseSummary, error) {
	sum := &ReleaseSummary{Release: rel.Name, File: rel.File, Jobs: make([]JobSummary, len(rel.Jobs))}
	errs := make([]error, len(rel.Jobs))
	sem := make(chan struct{}, 8) // journals are read over the network on Azure
	done := make(chan struct{})
	for i, j := range rel.Jobs {
		go func() {
			defer func() { done <- struct{}{} }()
			sem <- struct{}{}
			defer func() { <-sem }()
			sum.Jobs[i], errs[i] = summarizeJob(ctx, j, jobJournal(base, rel.Name, j.ID), open)
		}()
	}
	for range rel.Jobs {
		<-done
	}
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("job %s: %w", rel.Jobs[i].ID, err)
		}
	}
	for _, j := range sum.Jobs {
		switch j.Status {
		case journal.StatusSucceeded:
			sum.Succeeded++
		case jobNotRun:
			sum.NotRun++
		case journal.StatusStopped:
			sum.Stopped++
		default:
			sum.Failed++
		}
	}
	return sum, nil
}

func summarizeJob(ctx context.Context, j *release.Job, location string, open func(string) (journal.Store, error)) (JobSummary, error) {
	js := JobSummary{ID: j.ID, Workflow: j.Workflow, Vars: j.Vars, Pos: j.Pos, Journal: redact.URL(location), Status: jobNotRun, Outputs: map[string]any{}, Artifacts: []journal.Artifact{}}
	s, err := open(location)
	if err != nil {
		return js, err
	}
	runs, err := s.List(ctx)
	if err != nil || len(runs) == 0 {
		return js, err
	}
	r := runs[0]
	js.Status, js.RunID, js.Attempts, js.Steps, js.Error = r.Status, r.RunID, r.Attempts, r.Steps, r.Error
	if !r.Started.IsZero() {
		started, updated := r.Started, r.Updated
		js.Started, js.Updated = &started, &updated
		js.DurationMS = r.DurationMS
	}
	for k, v := range r.Outputs {
		js.Outputs[k] = v
	}
	js.Artifacts = append(js.Artifacts, r.Artifacts...)
	return js, nil
}

// writeReleaseSummary prints the summary as text: a table of the jobs,
// then each job's outputs and each failure.
func writeReleaseSummary(w io.Writer, sum *ReleaseSummary) {
	fmt.Fprintf(w, "release %s (%s): %d succeeded, %d failed, %d not run", sum.Release, sum.File, sum.Succeeded, sum.Failed, sum.NotRun)
	if sum.Stopped > 0 {
		fmt.Fprintf(w, ", %d stopped at their gate", sum.Stopped)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tSTATUS\tATTEMPTS\tDURATION\tSTEPS\tRUN")
	for _, j := range sum.Jobs {
		run, duration := "-", "-"
		if j.RunID != "" {
			run, duration = j.RunID, (time.Duration(j.DurationMS) * time.Millisecond).String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%s\n", j.ID, j.Status, j.Attempts, duration, j.Steps, run)
	}
	_ = tw.Flush()
	for _, j := range sum.Jobs {
		if len(j.Outputs) == 0 && len(j.Artifacts) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s outputs:\n", j.ID)
		names := make([]string, 0, len(j.Outputs))
		for k := range j.Outputs {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			fmt.Fprintf(w, "  %s = %s\n", k, jsonText(j.Outputs[k]))
		}
		for _, a := range j.Artifacts {
			fmt.Fprintf(w, "  artifact %s (%d bytes, sha256 %s)\n", a.Path, a.Size, a.SHA256)
		}
	}
	for _, j := range sum.Jobs {
		switch {
		case j.Error != "":
			fmt.Fprintf(w, "\n%s %s (job at %s): %s\n", j.ID, j.Status, j.Pos, j.Error)
		case j.Status != journal.StatusSucceeded:
			fmt.Fprintf(w, "\n%s %s (job at %s, journal %s)\n", j.ID, j.Status, j.Pos, j.Journal)
		}
	}
}

// writeReleaseJUnit writes the summary as JUnit XML (the schema of
// imgflow test --junit): one suite for the release, one test case per
// job, a <failure> for each job that did not succeed.
func writeReleaseJUnit(path string, sum *ReleaseSummary) error {
	suite := junitSuite{Name: sum.File, Timestamp: time.Now().UTC().Format("2006-01-02T15:04:05")}
	var total time.Duration
	for _, j := range sum.Jobs {
		d := time.Duration(j.DurationMS) * time.Millisecond
		c := junitCase{Name: j.ID, Classname: junitClassname(sum.File), Time: seconds(d)}
		if j.Status != journal.StatusSucceeded {
			msg := j.Error
			if msg == "" {
				msg = "job " + j.Status
			}
			c.Failure = &junitProblem{Message: msg, Type: j.Status,
				Text: fmt.Sprintf("%s: %s\njob at %s, journal %s, run %s", j.Status, msg, j.Pos, j.Journal, j.RunID)}
			suite.Failures++
		}
		suite.Tests++
		total += d
		suite.Cases = append(suite.Cases, c)
	}
	suite.Time = seconds(total)
	doc := junitSuites{Name: "imgflow release " + sum.Release, Tests: suite.Tests, Failures: suite.Failures, Time: suite.Time, Suites: []junitSuite{suite}}
	out, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	data := append([]byte(xml.Header), append(out, '\n')...)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("--junit: %w", err)
	}
	return nil
}
