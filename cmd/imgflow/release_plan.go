package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/interp"
	"github.com/imgflow/imgflow/release"
)

// ReleasePlan is the plan of every job of a release (`imgflow plan
// RELEASE --output json`). Fields are only ever added.
type ReleasePlan struct {
	Release string    `json:"release"`
	File    string    `json:"file"`
	Target  string    `json:"target"`
	Jobs    []JobPlan `json:"jobs"`
	// Failed counts the jobs whose plan failed.
	Failed int `json:"failed"`
}

// JobPlan is one job's plan.
type JobPlan struct {
	ID       string            `json:"id"`
	Workflow string            `json:"workflow"`
	Vars     map[string]string `json:"vars"`
	Pos      string            `json:"pos"`
	// Journal is the job's journal location under JOURNAL/RELEASE/ID,
	// relative to the journal (--journal, default STATE/runs).
	Journal string `json:"journal"`
	Plan    Plan   `json:"plan"`
}

// unsetSecrets are the environment variables of the secrets named that
// are not set (or empty), as secret() reads them.
func unsetSecrets(names []string) []string {
	var out []string
	for _, n := range names {
		if v := builtins.SecretEnvVar(n); os.Getenv(v) == "" {
			out = append(out, v)
		}
	}
	return out
}

// planRelease plans every job of rel against its own dry-run view of the
// target, several at once, and prints one summary: a job's vars are
// checked by its workflow's params exactly as its run would check them.
func planRelease(ctx context.Context, e *env, ws *builtins.Workspace, tgt *target, rel *release.Release, asJSON bool, validator builtins.PackerValidator) error {
	results := planJobs(ctx, ws, tgt, rel, &printReporter{w: e.stderr}, validator)
	rp := ReleasePlan{Release: rel.Name, File: rel.File, Target: tgt.name, Jobs: make([]JobPlan, len(rel.Jobs))}
	for i, j := range rel.Jobs {
		rp.Jobs[i] = JobPlan{ID: j.ID, Workflow: j.Workflow, Vars: j.Vars, Pos: j.Pos, Journal: rel.Name + "/" + j.ID, Plan: MakePlan(j.Workflow, tgt.name, results[i])}
		if results[i].Err != nil {
			rp.Failed++
		}
	}
	if asJSON {
		if err := writeJSON(e.stdout, rp); err != nil {
			return err
		}
	} else {
		writeReleasePlan(e, rel, rp, results)
	}
	if unset := unsetSecrets(rel.Secrets()); len(unset) > 0 {
		e.warnf("secrets not set, planned as <secret NAME: unset>: %s; a run needs them", strings.Join(unset, ", "))
	}
	if rp.Failed > 0 {
		return exitCode(1)
	}
	return nil
}

// writeReleasePlan prints one line per job (what its run would change),
// then each failed job's error under the job() call that made it.
func writeReleasePlan(e *env, rel *release.Release, rp ReleasePlan, results []*interp.Result) {
	rep := newConsoleReporter(e)
	fmt.Fprintf(e.stdout, "imgflow plan %s %s\n", rel.File, rep.dim(fmt.Sprintf("(%d jobs, target %s: nothing will be changed)", len(rel.Jobs), rp.Target)))
	for _, jp := range rp.Jobs {
		what := fmt.Sprintf("%d steps (%s)", len(jp.Plan.Steps), outcomeCounts(jp.Plan.Steps))
		if jp.Plan.Error != nil {
			what = "FAILED"
		}
		fmt.Fprintf(e.stdout, "  %-36s %-44s %s\n", jp.ID, what, rep.dim(jp.Pos))
	}
	for i, jp := range rp.Jobs {
		if results[i].Err != nil {
			e.errorf("%s: job %s: %v", jp.Pos, jp.ID, results[i].Err)
		}
	}
	fmt.Fprintf(e.stdout, "release %s: %d jobs planned, %d failed\n", rp.Release, len(rp.Jobs), rp.Failed)
}

// outcomeCounts says how many steps would do what, worded as a plan's
// text words it (present tense): "6 create, 1 delete, 2 run".
func outcomeCounts(steps []PlanStep) string {
	counts := map[string]int{}
	var order []string
	for _, s := range steps {
		if counts[s.Action] == 0 {
			order = append(order, s.Action)
		}
		counts[s.Action]++
	}
	sort.Strings(order)
	parts := make([]string, len(order))
	for i, o := range order {
		parts[i] = fmt.Sprintf("%d %s", counts[o], o)
	}
	return strings.Join(parts, ", ")
}

// planJobs plans every job of rel against its own dry-run view of the
// target, as many at once as there are CPUs, reporting the workflows'
// print() to prints.
func planJobs(ctx context.Context, ws *builtins.Workspace, tgt *target, rel *release.Release, prints builtins.Reporter, validator builtins.PackerValidator) []*interp.Result {
	results := make([]*interp.Result, len(rel.Jobs))
	reg := builtins.NewRegistry()
	programs := newPrograms() // the jobs load the same libraries
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, j := range rel.Jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			info := newPlanInfo()
			cfg := interp.Config{Workspace: ws, Registry: reg, Vars: j.StarlarkVars(), Info: info, Reporter: prints, PackerValidator: validator, Subscriptions: tgt.subscriptions(), Programs: programs}
			if tmp, removeTmp, err := planTempDir(info); err == nil {
				defer removeTmp()
				cfg.TempDir = tmp
			}
			res := interp.Plan(ctx, "//"+j.Workflow, cfg, tgt.dryRun())
			if gate := rel.ApprovalGate; res.Err == nil && gate != "" && !slices.Contains(res.Gates, gate) {
				// Its CI job would run --stop-at the gate and fail there:
				// found by the plan job, before any job builds.
				res.Err = fmt.Errorf("%s reaches no gate(name = %q), where the release's approval(%q, gate = %q) waits: add it before the job publishes", j.Workflow, gate, rel.Approval, gate)
			}
			results[i] = res
		}()
	}
	wg.Wait()
	return results
}
