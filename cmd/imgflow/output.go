package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/interp"
	"github.com/imgflow/imgflow/interp/startest"
)

// The JSON documents of --output json. docs/output-schemas.md describes
// them field by field; fields are only ever added, never renamed or
// removed, and their meaning does not change.

// RunReport is what `imgflow run --output json` prints.
type RunReport struct {
	Workflow string `json:"workflow"`
	Target   string `json:"target"`
	RunID    string `json:"run_id"`
	// Status is succeeded, failed or cancelled.
	Status string `json:"status"`
	// Pass is the pass the result comes from: validate (nothing was
	// changed) or apply.
	Pass    string         `json:"pass"`
	Steps   []RunStep      `json:"steps"`
	Outputs map[string]any `json:"outputs"`
	// Artifacts are the files artifact() wrote, in order.
	Artifacts []builtins.Artifact `json:"artifacts"`
	// Error is the first error, null on success; Errors are all of them
	// (a failed step and failed cleanups).
	Error  *ErrorReport  `json:"error"`
	Errors []ErrorReport `json:"errors"`
}

// RunStep is one call that changes the cloud.
type RunStep struct {
	// Step numbers the steps 1, 2, 3… as the text report does.
	Step int `json:"step"`
	// Index is the call's index among all builtin calls of the pass.
	Index   int    `json:"index"`
	Builtin string `json:"builtin"`
	// Outcome is created, exists, updated or failed.
	Outcome    string         `json:"outcome"`
	Summary    string         `json:"summary"`
	Pos        string         `json:"pos"`
	Args       map[string]any `json:"args"`
	Result     any            `json:"result"`
	DurationMS int64          `json:"duration_ms"`
	Error      string         `json:"error,omitempty"`
}

// ErrorReport is an error with the workflow position that caused it.
type ErrorReport struct {
	// Pos is file:line:col, "" when the error has no position (e.g. an
	// unknown --var); File, Line and Col are its parts.
	Pos       string `json:"pos"`
	File      string `json:"file"`
	Line      int    `json:"line"`
	Col       int    `json:"col"`
	Message   string `json:"message"`
	Source    string `json:"source,omitempty"`
	Backtrace string `json:"backtrace,omitempty"`
}

// makeRunReport turns a run's result into its JSON report.
func makeRunReport(ctx context.Context, file, target, runID string, res *interp.Result) RunReport {
	r := RunReport{Workflow: file, Target: target, RunID: runID, Status: "succeeded", Pass: res.Pass,
		Steps: []RunStep{}, Outputs: map[string]any{}, Artifacts: []builtins.Artifact{}, Errors: []ErrorReport{}}
	r.Artifacts = append(r.Artifacts, res.Artifacts...)
	for _, s := range res.Steps {
		if s.Effect != builtins.Changes {
			continue
		}
		step := RunStep{Step: len(r.Steps) + 1, Index: s.Index, Builtin: s.Builtin, Outcome: string(s.Outcome), Summary: s.Summary, Pos: stepPos(s),
			Args: s.Args, Result: builtins.RedactSecrets(s.Result), DurationMS: s.Duration.Milliseconds()}
		if s.Err != nil {
			step.Outcome, step.Error = "failed", firstLine(s.Err.Error())
		}
		r.Steps = append(r.Steps, step)
	}
	for _, o := range res.Outputs {
		r.Outputs[o.Name] = o.Value
	}
	if res.Err != nil {
		r.Status = "failed"
		if cancelledBy(ctx) != nil {
			r.Status = "cancelled"
		}
		r.Errors = errorReports(res.Err)
		r.Error = &r.Errors[0]
	}
	return r
}

// errorReports splits a (joined) error into reports with positions.
func errorReports(err error) []ErrorReport {
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	out := make([]ErrorReport, 0, len(errs))
	for _, err := range errs {
		rep := ErrorReport{Message: err.Error()}
		var ie *interp.Error
		if errors.As(err, &ie) {
			rep.Pos = ie.Pos
			if m := posRE().FindStringSubmatch(ie.Pos); m != nil {
				rep.File = m[1]
				rep.Line, _ = strconv.Atoi(m[2])
				rep.Col, _ = strconv.Atoi(m[3])
			}
			rep.Source, rep.Backtrace = ie.Source, ie.Backtrace
			if err == error(ie) {
				rep.Message = ie.Msg
			}
		}
		out = append(out, rep)
	}
	return out
}

// TestReport is what `imgflow test --output json` prints.
type TestReport struct {
	Passed int          `json:"passed"`
	Failed int          `json:"failed"`
	Tests  []TestResult `json:"tests"`
}

// TestResult is one test_* function (or "<load>" when the file failed to
// load).
type TestResult struct {
	File       string   `json:"file"`
	Name       string   `json:"name"`
	Passed     bool     `json:"passed"`
	Failures   []string `json:"failures"`
	DurationMS int64    `json:"duration_ms"`
}

func makeTestReport(results []startest.Result) TestReport {
	r := TestReport{Tests: []TestResult{}}
	for _, res := range results {
		t := TestResult{File: res.File, Name: res.Name, Passed: res.Passed(), Failures: res.Failures, DurationMS: res.Duration.Milliseconds()}
		if t.Failures == nil {
			t.Failures = []string{}
		}
		if t.Passed {
			r.Passed++
		} else {
			r.Failed++
		}
		r.Tests = append(r.Tests, t)
	}
	return r
}

// checkOutputFlag validates --output.
func checkOutputFlag(output string) error {
	if output != "text" && output != "json" {
		return fmt.Errorf("--output %q: use text or json", output)
	}
	return nil
}

// writeJSON prints v indented, without HTML escaping.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// printReporter is the reporter of --output json: steps are in the
// report, the workflow's print() goes to stderr so stdout stays one JSON
// document.
type printReporter struct {
	mu sync.Mutex
	w  io.Writer
}

func (r *printReporter) StepStarted(*builtins.Step)  {}
func (r *printReporter) StepFinished(*builtins.Step) {}
func (r *printReporter) Print(pos, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(r.w, "%s: %s\n", pos, msg)
}

// CommandOutput sends a command() step's output to stderr, as packer's:
// stdout holds the JSON document.
func (r *printReporter) CommandOutput(_, line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintln(r.w, line)
}
