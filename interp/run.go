package interp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"go.starlark.net/starlark"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/internal/gitrev"
	"github.com/imgflow/imgflow/journal"
)

// Config is what a run needs besides its target.
type Config struct {
	Workspace *builtins.Workspace
	Registry  *builtins.Registry
	// Vars are the --var / --vars-file values.
	Vars     map[string]starlark.Value
	Info     builtins.RunInfo
	MaxSteps uint64
	Reporter builtins.Reporter
	// Journal, when set, makes the run resumable: journaled steps are
	// replayed, new ones appended.
	Journal *journal.File
	// Hooks run around each builtin call of the apply pass (tests inject
	// faults through them; see builtins.CallHooks).
	Hooks builtins.CallHooks
	// AnyVars accepts --vars the workflow does not declare (several
	// workflows run with one set of vars; the caller checks them).
	AnyVars bool
	// Packer runs packer_build in the apply pass (the real binary on the
	// Azure target); nil simulates it against the target (local). The
	// builtins decide (builtins.Run.Packer): other passes simulate.
	Packer builtins.PackerBuilder
	// PackerValidator validates every packer_build of a plan with the real
	// packer (`packer validate`); nil skips that. Other passes ignore it.
	PackerValidator builtins.PackerValidator
	// TempDir is the run's place for builtins' temporary directories
	// (builtins.Run.TempDir); "" is os.TempDir().
	TempDir string
	// ArtifactsDir is where artifact() writes in the apply pass; "" keeps
	// artifacts in the result only.
	ArtifactsDir string
	// Programs, when set, caches compiled workflows and libraries across
	// runs (nil: every pass compiles what it loads).
	Programs *Programs
	// StopAt stops the apply pass at the workflow's gate(name = StopAt)
	// (see builtins' gate); "" goes past every gate.
	StopAt string
	// Subscriptions, when set, gives each pass the other subscriptions of
	// the target's tenant (a gallery in another subscription), reached
	// as the pass's provider primary is: for a dry pass (validation,
	// plan) dry-run views that see each other's recorded changes, new
	// for every pass. Nil: the target's subscription only.
	Subscriptions func(primary cloud.Provider, dry bool) builtins.Subscriptions
}

// Target is where a run happens. Validate, when set, is a dry-run copy of
// Apply: the workflow runs against it first, so invalid input anywhere in
// the workflow is refused before Apply sees a single change.
type Target struct {
	Apply    cloud.Provider
	Validate cloud.Provider
}

// Result is what a run produced.
type Result struct {
	// Pass is "validate" or "apply": the pass the result comes from.
	Pass    string
	Steps   []*builtins.Step
	Outputs []builtins.Output
	// Artifacts are the files artifact() wrote (would write, in a plan).
	Artifacts []builtins.Artifact
	Params    []builtins.ParamDecl
	// Err is nil on success; otherwise an *Error with file:line.
	Err error
	// Crashed reports a halt (a hook returned cloud.ErrHalt): like a dead
	// process, it left the journal as it was and ran no cleanup.
	Crashed bool
	// Stopped is the gate the run stopped at (Config.StopAt), "" when it
	// did not stop: it ran no cleanup, its journal holds them for the
	// attempt that continues past the gate.
	Stopped string
	// Gates are the gates the pass reached.
	Gates []string
}

// Run runs the workflow file (workspace-relative or absolute) against
// target: the validation pass, then the apply pass.
func Run(ctx context.Context, file string, cfg Config, target Target) *Result {
	if target.Validate != nil {
		quiet := cfg
		quiet.Reporter, quiet.Hooks = nil, builtins.CallHooks{}
		res := execPass(ctx, "validate", file, quiet, target.Validate)
		if res.Err == nil && cfg.StopAt != "" && !slices.Contains(res.Gates, cfg.StopAt) {
			// Else the run would go through and publish what the gate
			// was to hold back for an approval.
			res.Err = &Error{Msg: fmt.Sprintf("--stop-at %s: %s reaches no gate(name = %q) (gates reached: %s): add the gate where the run is to stop, or drop --stop-at", cfg.StopAt, file, cfg.StopAt, gateList(res.Gates))}
		}
		if res.Err != nil || preflight(ctx, target.Validate, res, cfg.Vars) {
			return res
		}
	}
	return execPass(ctx, "apply", file, cfg, target.Apply)
}

func gateList(gates []string) string {
	if len(gates) == 0 {
		return "none"
	}
	return strings.Join(gates, ", ")
}

// Plan runs the workflow once against p, a dry-run copy of the target:
// reads see the target, changes are recorded, not made. The reporter sees
// each step with what it would do (created / exists / updated).
func Plan(ctx context.Context, file string, cfg Config, p cloud.Provider) *Result {
	cfg.Hooks = builtins.CallHooks{}
	res := execPass(ctx, "plan", file, cfg, p)
	if res.Err == nil {
		preflight(ctx, p, res, cfg.Vars)
	}
	return res
}

// execPass executes the workflow once against p, then its cleanups.
func execPass(ctx context.Context, pass, file string, cfg Config, p cloud.Provider) *Result {
	res := &Result{Pass: pass}
	rel, abs, err := cfg.Workspace.Resolve("", file)
	if err != nil {
		res.Err = &Error{Msg: err.Error()}
		return res
	}
	src, err := os.ReadFile(abs)
	if err != nil {
		res.Err = &Error{Msg: fmt.Sprintf("read workflow: %v", err)}
		return res
	}
	maxSteps := cfg.MaxSteps
	if maxSteps == 0 {
		maxSteps = DefaultMaxSteps
	}
	predeclared := Predeclared(cfg.Registry)
	prog := cfg.Programs.compile(rel, src, predeclared)
	if cfg.Info.Workflow == "" {
		cfg.Info.Workflow = rel
		cfg.Info.WorkflowCommit, _ = gitrev.Commit(cfg.Workspace.Root)
	}
	run := &builtins.Run{
		Ctx: ctx, Provider: p, Workspace: cfg.Workspace, Info: cfg.Info, Vars: cfg.Vars, Registry: cfg.Registry,
		Reporter: cfg.Reporter, Validating: pass != "apply", ParamHints: prog.static.names, Hooks: cfg.Hooks,
		Packer: cfg.Packer, TempDir: cfg.TempDir, StopAt: cfg.StopAt,
	}
	if pass == "apply" {
		run.ArtifactsDir = cfg.ArtifactsDir
	}
	if cfg.Subscriptions != nil {
		run.Subscriptions = cfg.Subscriptions(p, pass != "apply")
	}
	if pass == "plan" {
		run.PackerValidator = cfg.PackerValidator
		run.Planning = true
	}
	if cfg.Journal != nil {
		var sink *journal.File
		if pass == "apply" {
			sink = cfg.Journal
		}
		run.Journal = journal.NewReplayer(cfg.Journal.Records(), sink)
		if pass == "apply" {
			run.RestoreCleanups()
		}
	}
	ld := newLoader(ctx, cfg, run, predeclared, maxSteps, rel)
	run.Spawn = func(ctx context.Context, name string) (*starlark.Thread, func()) {
		th := newThread(name, run, ld, maxSteps)
		builtins.AttachContext(th, ctx)
		return th, watchCancel(ctx, th)
	}
	th := newThread("workflow "+rel, run, ld, maxSteps)
	stop := watchCancel(ctx, th)
	_, err = prog.exec(th, predeclared)
	stop()
	if err == nil && !cfg.AnyVars {
		err = checkVars(run, cfg.Vars)
	}
	res.Steps, res.Outputs, res.Params, res.Artifacts, res.Gates = run.Steps(), run.Outputs(), run.Params(), run.Artifacts(), run.Gates()
	if errors.Is(err, cloud.ErrHalt) {
		res.Crashed, res.Err = true, renderError(err, cfg.Workspace)
		return res
	}
	if gate := builtins.StoppedAt(err); gate != "" {
		// Not the workflow's end: the temporaries stay for the attempt
		// that goes past the gate, which restores the cleanups.
		res.Stopped = gate
		return res
	}
	var errs []error
	if err != nil {
		errs = append(errs, renderError(err, cfg.Workspace))
	}
	cleanupErrs, crashed := runCleanups(ctx, run, ld, maxSteps)
	errs = append(errs, cleanupErrs...)
	res.Steps = run.Steps() // with the cleanups' steps
	res.Crashed, res.Err = crashed, errors.Join(errs...)
	return res
}

// runCleanups runs the registered cleanups newest first on a fresh thread
// whose context survives cancellation of the run, so Ctrl-C still cleans
// up, except the deletions a resume needs undone (KeepWhenInterrupted). Every failure is reported. An injected crash stops them where it
// happens, as a dead process would: the journal keeps the rest for the
// resume.
func runCleanups(ctx context.Context, run *builtins.Run, ld *loader, maxSteps uint64) (errs []error, crashed bool) {
	cleanups := run.PopCleanups()
	if len(cleanups) == 0 {
		return nil, false
	}
	interrupted := ctx.Err() != nil
	run.Ctx = context.WithoutCancel(ctx)
	th := newThread("cleanup", run, ld, maxSteps)
	builtins.MarkPastGate(th) // the workflow's end is past its gates
	for _, c := range cleanups {
		if run.Journal != nil && run.Journal.CleanupDone(c.ID) {
			continue
		}
		if interrupted && c.KeepWhenInterrupted != "" {
			// What a resume needs stays: the journal keeps the deletion
			// for the resume's end, or gc.
			if run.Reporter != nil {
				run.Reporter.Print(c.Pos, fmt.Sprintf("kept for the resume: %s (the resumed run deletes it when it ends, imgflow gc if the run is abandoned)", c.KeepWhenInterrupted))
			}
			continue
		}
		if err := c.Fn(run.Ctx, th); err != nil {
			errs = append(errs, fmt.Errorf("cleanup %s registered at %s failed: %w", c.Name, c.Pos, renderError(err, run.Workspace)))
			if errors.Is(err, cloud.ErrHalt) {
				return errs, true
			}
			continue
		}
		if run.Journal != nil {
			if err := run.Journal.RecordCleanupDone(c.ID); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errs, false
}
