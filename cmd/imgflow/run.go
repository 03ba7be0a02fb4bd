package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.starlark.net/starlark"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/internal/redact"
	"github.com/imgflow/imgflow/interp"
	"github.com/imgflow/imgflow/journal"
	"github.com/imgflow/imgflow/packer"
)

func cmdRun(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet("run", e)
	var shared sharedFlags
	shared.addVars(fs)
	shared.addRoot(fs)
	shared.addState(fs)
	shared.addTarget(fs)
	shared.addJournal(fs)
	shared.addOutput(fs, false)
	outputs := fs.String("outputs", "", "write the workflow outputs as JSON to `file`")
	artifacts := fs.String("artifacts", "", "write the workflow's artifact() files into `dir` (default .imgflow/artifacts/RUN_ID)")
	resume := fs.String("resume", "", "resume the run with this `id` (see imgflow runs): journaled steps are not redone")
	maxSteps := fs.Uint64("max-steps", interp.DefaultMaxSteps, "Starlark step limit per thread")
	maxMemory := addMaxMemory(fs)
	jobs := fs.Int("j", 1, "with several workflow files, how many run at once")
	exportOutputs := fs.Bool("export-outputs", false, "set the outputs as pipeline variables (Azure Pipelines, GitHub Actions)")
	stopAt := fs.String("stop-at", "", "stop the run at the workflow's gate(name = `NAME`), e.g. promote: what comes after it waits for --resume/--continue without --stop-at (a CI job's approval)")
	journalCopy := fs.String("journal-copy", "", "when the run ends, however it ends, also write its journal to `dir`/RUN_ID.jsonl (imgflow runs --journal DIR reads it): a CI job keeps it with its artifacts")
	continueRun := fs.Bool("continue", false, "continue the latest run in --journal (its finished steps replay, nothing is redone) or start one when there is none: the command of a CI job that may be retried on another agent")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return flagError(err)
	}
	asJSON, err := shared.jsonOutput(e)
	if err != nil {
		return err
	}
	ci, logCI := detectCI(), detectCI()
	if *exportOutputs {
		if err := ci.canExport(); err != nil {
			return err
		}
	}
	if asJSON {
		logCI = ciNone // stdout is one JSON document
		if *exportOutputs && ci == ciAzure {
			return errors.New("--export-outputs with --output json: Azure Pipelines reads variables from logging commands on stdout, which holds the JSON report; use --output text there")
		}
	}
	if len(pos) == 0 && *resume == "" {
		return fmt.Errorf("run takes a workflow file: imgflow run workflows/flatcar.star --var name=value (or --resume RUN_ID)")
	}
	if len(pos) > 1 && (*resume != "" || *continueRun || asJSON || *outputs != "" || *exportOutputs || *artifacts != "" || *journalCopy != "") {
		return fmt.Errorf("several workflows run with text output only: --resume, --continue, --output json, --outputs, --artifacts, --journal-copy and --export-outputs take one workflow")
	}
	if *resume != "" && *continueRun {
		return fmt.Errorf("--resume RUN_ID and --continue: give one (--continue picks the latest run of --journal)")
	}
	ctx, stopWatch, err := watchMemory(ctx, *maxMemory)
	if err != nil {
		return err
	}
	defer stopWatch()
	values, err := shared.loadVars()
	if err != nil {
		return err
	}
	ws, err := newWorkspace(shared.root)
	if err != nil {
		return err
	}
	rel, err := releaseArg(ctx, ws, pos, values)
	if err != nil {
		return err
	}
	if rel != nil && (*resume != "" || asJSON || *outputs != "" || *exportOutputs || *journalCopy != "") {
		return fmt.Errorf("%s is a release: each job continues its own journal; --resume, --output json, --outputs, --journal-copy and --export-outputs take a workflow", rel.File)
	}
	if rel == nil && len(pos) == 1 && *resume == "" {
		if err := checkVarNames(ws, pos[0], values); err != nil {
			return err
		}
	}
	tgt, err := openTarget(ctx, e, ws, shared.target)
	if err != nil {
		return err
	}
	defer tgt.close()
	if shared.journal != "" {
		tgt.runsDir = shared.journal // a directory or a container URL (journal.OpenStore)
	}
	if rel != nil {
		return runRelease(ctx, e, ws, tgt, rel, *jobs, *maxSteps, *stopAt)
	}
	if len(pos) > 1 {
		return runMany(ctx, e, ws, tgt, pos, values, *jobs, *maxSteps)
	}
	store, err := tgt.journals()
	if err != nil {
		return err
	}
	if *continueRun {
		file, err := workspacePath(ws, pos[0])
		if err != nil {
			return err
		}
		if *resume, err = continuedRun(ctx, store, file); err != nil {
			return err
		}
	}
	j, info, file, err := openJournal(ctx, ws, store, *resume, pos, values, tgt.name)
	if err != nil {
		return err
	}
	defer j.Close()
	if j.Unverified() {
		e.warnf("run %s: journal %s has %s", info.ID, j.Path(), journal.UnverifiedWarning)
	}

	rep := newConsoleReporter(e)
	verb := "imgflow run"
	switch {
	case *continueRun && *resume != "":
		verb = "imgflow run --continue"
	case *resume != "":
		verb = "imgflow run --resume"
	}
	var reporter builtins.Reporter = rep
	if asJSON {
		reporter = &printReporter{w: e.stderr}
		if r, ok := tgt.packer.(*packer.Runner); ok {
			r.Stdout = e.stderr // stdout holds the JSON report
		}
	} else {
		fmt.Fprintf(e.stdout, "%s%s %s %s\n", logCI.groupStart(), verb, file, rep.dim(fmt.Sprintf("(target %s, run %s)", tgt.name, info.ID)))
	}
	artifactsDir, err := artifactsDirOf(*artifacts, tgt.stateDir, info.ID)
	if err != nil {
		return err
	}
	// What a killed run left there, imgflow gc removes.
	defer os.RemoveAll(builtins.RunTempDir(info.ID))
	res := interp.Run(ctx, "//"+file, interp.Config{
		Workspace: ws, Registry: builtins.NewRegistry(), Vars: values, Info: info, MaxSteps: *maxSteps, Reporter: reporter, Journal: j, Packer: tgt.packer,
		ArtifactsDir: artifactsDir, TempDir: builtins.RunTempDir(info.ID), StopAt: *stopAt, Subscriptions: tgt.subscriptions(),
	}, interp.Target{Apply: tgt.provider, Validate: tgt.dryRun()})
	logCI.endGroup(e.stdout)
	if err := endJournal(ctx, j, res); err != nil {
		return err
	}
	if *journalCopy != "" {
		if _, err := j.WriteCopy(*journalCopy); err != nil {
			return err
		}
	}
	if asJSON {
		if err := writeJSON(e.stdout, makeRunReport(ctx, file, tgt.name, info.ID, res)); err != nil {
			return err
		}
	}
	if res.Err != nil {
		logCI.annotateError(e.stdout, res.Err)
		sig := cancelledBy(ctx)
		switch {
		case sig != nil && res.Pass == "validate" && !hasSteps(j):
			e.errorf("%v\n%s", res.Err, fmt.Sprintf("run %s was cancelled (%s) before any change: nothing to resume", info.ID, sig))
		case sig != nil:
			e.errorf("%v\n%s", res.Err, fmt.Sprintf("run %s was cancelled (%s): resume it with: imgflow run --resume %s", info.ID, sig, info.ID))
		case res.Pass == "validate":
			e.errorf("%v\n%s", res.Err, rep.dim("(found while validating the workflow: nothing was changed)"))
		default:
			e.errorf("%v\n%s", res.Err, rep.dim(fmt.Sprintf("(resume with: imgflow run --resume %s)", info.ID)))
		}
		if sig != nil {
			return exitCode(sig.exitCode())
		}
		return exitCode(1)
	}
	if res.Stopped != "" && !asJSON {
		fmt.Fprintf(e.stdout, "run %s stopped at gate %s (--stop-at): continue it past the gate with: imgflow run --resume %s\n", info.ID, res.Stopped, info.ID)
	}
	if !asJSON {
		rep.printOutputs(res.Outputs)
		rep.printArtifacts(res.Artifacts)
	}
	if *outputs != "" {
		if err := writeOutputs(*outputs, res.Outputs); err != nil {
			return err
		}
	}
	if *exportOutputs {
		return ci.exportOutputs(e.stdout, res.Outputs)
	}
	return nil
}

// openJournal starts the journal of a new run, or reopens the one of the
// run to resume: its run facts (id, time) and vars come back, and vars
// given again override them. store is the target's (target.journals).
func openJournal(ctx context.Context, ws *builtins.Workspace, store journal.Store, resume string, pos []string, values map[string]starlark.Value, target string) (*journal.File, builtins.RunInfo, string, error) {
	if resume == "" {
		file, err := workspacePath(ws, pos[0])
		if err != nil {
			return nil, builtins.RunInfo{}, "", err
		}
		if _, err := os.Stat(filepath.Join(ws.Root, file)); err != nil {
			return nil, builtins.RunInfo{}, "", fmt.Errorf("%s: no such workflow file", pos[0])
		}
		info := newRunInfo()
		j, err := store.Create(ctx, journal.Record{RunID: info.ID, RunTime: &info.Time, Workflow: file, Target: target, Vars: varsToGo(values)})
		return j, info, file, err
	}
	j, err := store.Open(ctx, resume)
	if journal.IsCorrupt(err) {
		return nil, builtins.RunInfo{}, "", fmt.Errorf("%w\nrun %s cannot be resumed: a damaged record is never replayed; `imgflow gc` lists it too. Check the resources its readable records name by hand, then move the journal aside", err, resume)
	}
	if err != nil {
		return nil, builtins.RunInfo{}, "", err
	}
	h := j.Header()
	file := h.Workflow
	if len(pos) == 1 {
		if file, err = workspacePath(ws, pos[0]); err != nil {
			j.Close()
			return nil, builtins.RunInfo{}, "", err
		}
	}
	for k, v := range lastVars(j.Records()) {
		if _, given := values[k]; given {
			continue
		}
		if s, ok := v.(string); ok && (strings.Contains(s, "?<redacted>") || strings.Contains(s, "<secret>")) {
			j.Close()
			return nil, builtins.RunInfo{}, "", fmt.Errorf("--var %s held a secret (a SAS or a secret()'s value) that the journal does not keep: pass it again with --var %s=…", k, k)
		}
		values[k] = builtins.FromGo(v)
	}
	info := builtins.RunInfo{ID: h.RunID, Time: h.Time, Version: version}
	if h.RunTime != nil {
		info.Time = *h.RunTime
	}
	if err := j.Append(journal.Record{Type: journal.TypeResume, Workflow: file, Vars: varsToGo(values)}); err != nil {
		j.Close()
		return nil, builtins.RunInfo{}, "", err
	}
	return j, info, file, nil
}

// varsToGo are the vars as the journal keeps them: a URL's query (a SAS)
// and a secret()'s value are redacted, so resuming needs them again.
func varsToGo(values map[string]starlark.Value) map[string]any {
	secrets := redact.SecretValues(os.Environ())
	out := make(map[string]any, len(values))
	for k, v := range values {
		g, err := builtins.ToGo(v)
		if err != nil {
			g = v.String()
		}
		g = builtins.RedactSecrets(g)
		if s, ok := g.(string); ok {
			g = redact.Values(s, secrets)
		}
		out[k] = g
	}
	return out
}

// lastVars are the vars of the latest attempt of a run.
func lastVars(records []journal.Record) map[string]any {
	var vars map[string]any
	for _, r := range records {
		if r.Type == journal.TypeRun || r.Type == journal.TypeResume {
			vars = r.Vars
		}
	}
	return vars
}

// endJournal records how the run ended (a simulated crash records nothing,
// like a dead process). Only a signal cancels a run: one stopped by the
// memory budget failed, and one that ended before the signal came ended.
func endJournal(ctx context.Context, j *journal.File, res *interp.Result) error {
	if res.Crashed {
		return nil
	}
	rec := journal.Record{Type: journal.TypeEnd, Status: journal.StatusSucceeded, Pass: res.Pass, Outputs: map[string]any{}}
	// The outputs (a SAS in a URL is not kept) and artifacts, so `imgflow
	// runs` can point a pipeline's fan-in at what each run published.
	for _, o := range res.Outputs {
		rec.Outputs[o.Name] = builtins.RedactSecrets(o.Value)
	}
	for _, a := range res.Artifacts {
		rec.Artifacts = append(rec.Artifacts, journal.Artifact{Name: a.Name, Path: a.Path, Size: a.Size, SHA256: a.SHA256})
	}
	switch sig := cancelledBy(ctx); {
	case res.Err == nil && res.Stopped != "":
		rec.Status, rec.Error = journal.StatusStopped, "stopped at gate "+res.Stopped+" (--stop-at)"
	case res.Err != nil && sig != nil:
		rec.Status, rec.Error = journal.StatusCancelled, sig.Error()
	case res.Err != nil && res.Pass == "validate":
		rec.Status, rec.Error = journal.StatusInvalid, firstLine(res.Err.Error())
	case res.Err != nil:
		rec.Status, rec.Error = journal.StatusFailed, firstLine(res.Err.Error())
	}
	return j.Append(rec)
}

// hasSteps reports whether the journal holds steps, made by this attempt
// or by an earlier one of the run, which a resume would not redo.
func hasSteps(j *journal.File) bool {
	for _, r := range j.Records() {
		if r.Type == journal.TypeStep {
			return true
		}
	}
	return false
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// workspacePath makes a command-line path workspace-relative.
func workspacePath(ws *builtins.Workspace, path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	rel := ws.Rel(abs)
	if filepath.IsAbs(rel) {
		return "", fmt.Errorf("%s is outside the workspace %s: run imgflow from the workspace, or pass --root", path, ws.Root)
	}
	return rel, nil
}

func newRunInfo() builtins.RunInfo {
	now := time.Now().UTC().Truncate(time.Second)
	var b [3]byte
	_, _ = rand.Read(b[:])
	return builtins.RunInfo{ID: now.Format("20060102-150405") + "-" + hex.EncodeToString(b[:]), Time: now, Version: version}
}

// newPlanInfo is the RunInfo of a plan, which is no run: the time is now,
// the ID the day's "YYYYMMDD-plan". Names a workflow derives from the ID
// (the <n> of a captured version) then stay the same all day, so the
// packer validate cache finds the plan's builds again; a run gets its own
// ID anyway.
func newPlanInfo() builtins.RunInfo {
	now := time.Now().UTC().Truncate(time.Second)
	return builtins.RunInfo{ID: now.Format("20060102") + "-plan", Time: now}
}

// artifactsDirOf is the absolute directory artifact() writes to: flag
// (--artifacts), or the run's own directory under the state directory.
func artifactsDirOf(flag, stateDir, runID string) (string, error) {
	dir := flag
	if dir == "" {
		dir = filepath.Join(stateDir, "artifacts", runID)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("--artifacts: %w", err)
	}
	if st, err := os.Stat(abs); err == nil && !st.IsDir() {
		return "", fmt.Errorf("--artifacts %s is a file: pass a directory (it is created when missing)", flag)
	}
	return abs, nil
}

func writeOutputs(path string, outputs []builtins.Output) error {
	m := map[string]any{}
	for _, o := range outputs {
		m[o.Name] = o.Value
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write outputs: %w", err)
	}
	return nil
}

// checkVarNames refuses, before anything prints or validates, a --var the
// workflow at path declares no param for (interp.CheckVars).
func checkVarNames(ws *builtins.Workspace, path string, values map[string]starlark.Value) error {
	file, err := workspacePath(ws, path)
	if err != nil {
		return nil // the run reports it
	}
	return interp.CheckVars(interp.Config{Workspace: ws, Registry: builtins.NewRegistry(), Vars: values}, "//"+file)
}
