package main

import (
	"context"
	"fmt"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/interp"
)

// PlanStep is one operation of a plan, as `imgflow plan --output json`
// prints it. The schema is stable: fields are only ever added.
type PlanStep struct {
	// Step numbers the steps 1, 2, 3… as the text plan does.
	Step    int    `json:"step"`
	Builtin string `json:"builtin"`
	// Outcome is what run would report for the step: created, exists,
	// updated (failed for the step a failed plan stopped at), the
	// vocabulary of RunStep.Outcome.
	Outcome string `json:"outcome"`
	// Action is Outcome worded as an intention (create, exists, update,
	// failed). Deprecated: kept for consumers that read it; use Outcome.
	Action  string         `json:"action"`
	Summary string         `json:"summary"`
	Pos     string         `json:"pos"`
	Args    map[string]any `json:"args"`
}

// Plan is the whole plan of a workflow.
type Plan struct {
	Workflow string         `json:"workflow"`
	Target   string         `json:"target"`
	Steps    []PlanStep     `json:"steps"`
	Outputs  map[string]any `json:"outputs"`
	// Error is why planning failed (steps are those before it), null when
	// it did not.
	Error *ErrorReport `json:"error"`
}

func cmdPlan(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet("plan", e)
	var shared sharedFlags
	shared.addVars(fs)
	shared.addRoot(fs)
	shared.addState(fs)
	shared.addTarget(fs)
	shared.addOutput(fs, false)
	maxMemory := addMaxMemory(fs)
	noPackerValidate := fs.Bool("no-packer-validate", false, "do not run packer validate on each packer_build (it runs when packer is on PATH)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return flagError(err)
	}
	if len(pos) != 1 {
		return fmt.Errorf("plan takes one workflow or release file: imgflow plan workflows/flatcar.star --var name=value, or imgflow plan releases/aks.star")
	}
	asJSON, err := shared.jsonOutput(e)
	if err != nil {
		return err
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
	file, err := workspacePath(ws, pos[0])
	if err != nil {
		return err
	}
	rel, err := releaseArg(ctx, ws, pos, values)
	if err != nil {
		return err
	}
	shared.target.readOnly = true // a display command changes nothing
	if rel == nil {
		if err := checkVarNames(ws, pos[0], values); err != nil {
			return err
		}
	}
	tgt, err := openTarget(ctx, e, ws, shared.target)
	if err != nil {
		return err
	}
	defer tgt.close()
	if rel != nil {
		return planRelease(ctx, e, ws, tgt, rel, asJSON, packerValidator(*noPackerValidate))
	}
	info := newPlanInfo()
	tmp, removeTmp, err := planTempDir(info)
	if err != nil {
		return err
	}
	defer removeTmp()
	cfg := interp.Config{Workspace: ws, Registry: builtins.NewRegistry(), Vars: values, Info: info,
		PackerValidator: packerValidator(*noPackerValidate), TempDir: tmp, Subscriptions: tgt.subscriptions(),
		Programs: newPrograms()}
	logCI := detectCI()
	if !asJSON {
		rep := newConsoleReporter(e)
		rep.planning = true
		cfg.Reporter = rep
		fmt.Fprintf(e.stdout, "%simgflow plan %s %s\n", logCI.groupStart(), file, rep.dim(fmt.Sprintf("(target %s: nothing will be changed)", tgt.name)))
	} else {
		logCI = ciNone // stdout is one JSON document
		cfg.Reporter = &printReporter{w: e.stderr}
	}
	res := interp.Plan(ctx, "//"+file, cfg, tgt.dryRun())
	logCI.endGroup(e.stdout)
	if asJSON {
		if err := writeJSON(e.stdout, MakePlan(file, tgt.name, res)); err != nil || res.Err == nil {
			return err
		}
	}
	if res.Err != nil {
		logCI.annotateError(e.stdout, res.Err)
		e.errorf("%v", res.Err)
		return exitCode(1)
	}
	newConsoleReporter(e).printOutputs(res.Outputs)
	return nil
}

// MakePlan turns a plan pass's result into the stable JSON plan.
func MakePlan(file, target string, res *interp.Result) Plan {
	plan := Plan{Workflow: file, Target: target, Steps: []PlanStep{}, Outputs: map[string]any{}}
	for _, s := range res.Steps {
		if s.Effect != builtins.Changes {
			continue
		}
		outcome := string(s.Outcome)
		if s.Err != nil {
			outcome = "failed"
		}
		plan.Steps = append(plan.Steps, PlanStep{Step: len(plan.Steps) + 1, Builtin: s.Builtin, Outcome: outcome,
			Action: planAction(outcome), Summary: s.Summary, Pos: stepPos(s), Args: s.Args})
	}
	for _, o := range res.Outputs {
		plan.Outputs[o.Name] = o.Value
	}
	if res.Err != nil {
		plan.Error = &errorReports(res.Err)[0]
	}
	return plan
}

// planAction words an outcome as what the run would do.
func planAction(outcome string) string {
	switch outcome {
	case "created":
		return "create"
	case "updated":
		return "update"
	case "deleted":
		return "delete"
	case "ran":
		return "run"
	}
	return outcome
}
