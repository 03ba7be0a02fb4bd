package builtins

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.starlark.net/starlark"

	"github.com/imgflow/imgflow/cloud"
)

// Thread-local keys. Values are only reached through the accessors below.
const (
	runKey     = "imgflow.run"
	loadingKey = "imgflow.loading"
	contextKey = "context" // the de facto key other Starlark tools use
)

// RunInfo is fixed for a run, so names minted from it are stable.
type RunInfo struct {
	ID   string
	Time time.Time
	// Version is imgflow's own (imgflow version); Workflow the workflow
	// file, workspace-relative; WorkflowCommit the workspace's git commit
	// ("" outside a git checkout). Every resource imgflow creates is
	// tagged with them (provenance).
	Version, Workflow, WorkflowCommit string
	// ReplicationPoll is how often image_version() and replicate() read
	// a version's replication while they wait for it (0: every 15 s, as
	// Azure asks gallery clients). Tests whose emulated replication takes
	// seconds poll faster.
	ReplicationPoll time.Duration
}

// Reporter receives a run's progress. Implementations must be safe for
// concurrent use.
type Reporter interface {
	StepStarted(s *Step)
	StepFinished(s *Step)
	// Print is the workflow's print(), with the caller's file:line.
	Print(pos, msg string)
}

// OutputReporter is a Reporter that shows a command() step's output as
// the tool's output, apart from the workflow's print(). Without it, each
// line goes to Print with the step's position.
type OutputReporter interface {
	// CommandOutput is one line the command printed, prefixed with its
	// program ("[make] …"), redacted.
	CommandOutput(pos, line string)
}

// Step is one recorded builtin call.
type Step struct {
	Index   int
	Builtin string
	Effect  Effect
	// Args are the call's arguments as JSON-like Go values, by name.
	Args map[string]any
	// Result is the returned value as a JSON-like Go value.
	Result any
	// Pos is the calling workflow position (file:line:col).
	Pos   string
	Stack starlark.CallStack
	// Outcome is created / exists / updated for ensures, "" otherwise.
	Outcome  cloud.Outcome
	Summary  string
	Duration time.Duration
	Err      error
}

// ParamDecl is a declared workflow parameter.
type ParamDecl struct {
	Name    string
	Default starlark.Value
	Doc     string
	Choices []string
	Pos     string
}

// Output is one workflow output.
type Output struct {
	Name  string
	Value any
	Pos   string
}

// Cleanup is an action run when the workflow ends, newest first.
type Cleanup struct {
	// ID identifies the cleanup across attempts of a run, so a resumed run
	// does not repeat one that already ran.
	ID   string
	Name string
	Pos  string
	// Fn runs on the workflow's main thread with a context that is still
	// live even when the run was cancelled.
	Fn func(ctx context.Context, thread *starlark.Thread) error
	// KeepWhenInterrupted, when not "", is the resource the workflow's
	// own cleanup() of a journaled deletion (temporary()) deletes. Later
	// steps of the run may use it (a staging version a promotion copies),
	// so a run cancelled by a signal, which says "resume it with…", keeps
	// it: the resume runs the cleanup when it ends, gc when the run is
	// abandoned.
	KeepWhenInterrupted string
}

// Run is the state of one execution of a workflow: what builtins need
// (provider, workspace, vars) and what they produce (steps, outputs,
// cleanups). It lives in a thread local of every thread of the run.
type Run struct {
	Ctx      context.Context
	Provider cloud.Provider
	// Subscriptions, when set, reaches subscriptions other than the
	// target's (see ProviderFor); nil: the target's only.
	Subscriptions Subscriptions
	Workspace     *Workspace
	Info          RunInfo
	// Vars are the --var / --vars-file values by name.
	Vars     map[string]starlark.Value
	Reporter Reporter
	// Validating is true in the validation pass and in a plan, which run
	// against a dry-run view of the target: nothing real may happen.
	Validating bool
	// Planning is true in a plan only (not in a run's validation pass): a
	// secret whose variable is not set plans as unset rather than failing,
	// since a plan changes nothing and where plans run (a pull request's
	// CI) secrets are not given. A run still needs it.
	Planning bool
	Registry *Registry
	// Journal, when set, replays journaled steps and records new ones.
	Journal Journal
	// Hooks run around each builtin call of the apply pass; the caller
	// installs them (tests inject faults through them).
	Hooks CallHooks
	// Packer runs packer_build's builds (the real packer.Runner on the
	// Azure target) in the apply pass. Nil, the validation pass and plans
	// simulate them (packer/localsim) against Provider: see packerBuilder.
	Packer PackerBuilder
	// PackerValidator, set in a plan, validates each packer_build with the
	// real packer before the simulation runs it. Nil skips that.
	PackerValidator PackerValidator
	// Spawn makes a thread of this run for a parallel() branch, cancelled
	// when ctx is done (call stop when the branch ends). The interpreter
	// sets it.
	Spawn func(ctx context.Context, name string) (thread *starlark.Thread, stop func())
	// ParamHints are the param names found in the workflow's source, so
	// errors can list params not yet declared.
	ParamHints []string
	// ArtifactsDir is where artifact() writes its files (imgflow run
	// --artifacts); "" keeps them in the run's record only.
	ArtifactsDir string
	// TempDir is where builtins make their temporary directories (a
	// packer build's working directory and staged uploads), removed when
	// they are done; a place of the run's own (RunTempDir), so that what
	// a killed run left is removed with it by imgflow gc. "" is
	// os.TempDir().
	TempDir string
	// StopAt is the gate the apply pass stops at (imgflow run --stop-at;
	// see gate()); "" goes past every gate.
	StopAt string

	mu        sync.Mutex
	steps     []*Step
	params    []ParamDecl
	outputs   []Output
	artifacts []Artifact
	cleanups  []Cleanup
	gates     []string
	locations []cloud.Location
	// cleanupCount counts cleanup() registrations per position.
	cleanupCount map[string]int
}

// Attach makes r the run of thread, and ctx its context.
func (r *Run) Attach(thread *starlark.Thread) {
	thread.SetLocal(runKey, r)
	thread.SetLocal(contextKey, r.Ctx)
}

// AttachContext makes ctx the context builtins called on thread use.
func AttachContext(thread *starlark.Thread, ctx context.Context) { thread.SetLocal(contextKey, ctx) }

// RunOf returns the run a thread belongs to, or nil.
func RunOf(thread *starlark.Thread) *Run {
	r, _ := thread.Local(runKey).(*Run)
	return r
}

// SetLoading marks thread as loading the named library module: builtins
// that change the cloud refuse to run there, so libraries stay free of side
// effects and can be loaded in any order.
func SetLoading(thread *starlark.Thread, module string) { thread.SetLocal(loadingKey, module) }

func loadingModule(thread *starlark.Thread) string {
	m, _ := thread.Local(loadingKey).(string)
	return m
}

// Steps returns the recorded calls in order.
func (r *Run) Steps() []*Step {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*Step(nil), r.steps...)
}

// Params returns the declared parameters in declaration order.
func (r *Run) Params() []ParamDecl {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]ParamDecl(nil), r.params...)
}

// Outputs returns the workflow outputs in the order they were set.
func (r *Run) Outputs() []Output {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Output(nil), r.outputs...)
}

// Artifacts returns the files artifact() wrote, in the order written.
func (r *Run) Artifacts() []Artifact {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Artifact(nil), r.artifacts...)
}

func (r *Run) addArtifact(a Artifact) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, q := range r.artifacts {
		if q.Name == a.Name {
			return fmt.Errorf("artifact %s is already written at %s: give each artifact its own name", a.Name, q.Pos)
		}
	}
	r.artifacts = append(r.artifacts, a)
	return nil
}

// PushCleanup registers c to run when the workflow ends. A cleanup with
// the same ID (restored from the journal, then registered again by the
// replayed or rerun step) moves to the top rather than running twice.
func (r *Run) PushCleanup(c Cleanup) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c.ID != "" {
		r.cleanups = slices.DeleteFunc(r.cleanups, func(o Cleanup) bool { return o.ID == c.ID })
	}
	r.cleanups = append(r.cleanups, c)
}

// dropCleanup removes a registered cleanup.
func (r *Run) dropCleanup(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cleanups = slices.DeleteFunc(r.cleanups, func(o Cleanup) bool { return o.ID == id })
}

// PopCleanups removes and returns the registered cleanups, newest first.
func (r *Run) PopCleanups() []Cleanup {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Cleanup, len(r.cleanups))
	for i, c := range r.cleanups {
		out[len(out)-1-i] = c
	}
	r.cleanups = nil
	return out
}

func (r *Run) record(s *Step) {
	r.mu.Lock()
	s.Index = len(r.steps)
	r.steps = append(r.steps, s)
	r.mu.Unlock()
}

func (r *Run) declareParam(p ParamDecl) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, q := range r.params {
		if q.Name == p.Name {
			return fmt.Errorf("param %q is already declared at %s", p.Name, q.Pos)
		}
	}
	r.params = append(r.params, p)
	return nil
}

func (r *Run) setOutput(o Output) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, q := range r.outputs {
		if q.Name == o.Name {
			return fmt.Errorf("output %q is already set at %s", o.Name, q.Pos)
		}
	}
	r.outputs = append(r.outputs, o)
	return nil
}

// Locations lists the subscription's locations once per run.
func (r *Run) Locations(ctx context.Context) ([]cloud.Location, error) {
	r.mu.Lock()
	cached := r.locations
	r.mu.Unlock()
	if cached != nil {
		return cached, nil
	}
	locs, err := r.Provider.ListLocations(ctx)
	if err != nil {
		return nil, fmt.Errorf("list locations: %w", err)
	}
	r.mu.Lock()
	r.locations = locs
	r.mu.Unlock()
	return locs, nil
}

// starlarkCleanupPrefix starts the id of a workflow's cleanup().
const starlarkCleanupPrefix = "cleanup@"

func (r *Run) starlarkCleanupID(pos string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cleanupCount == nil {
		r.cleanupCount = map[string]int{}
	}
	n := r.cleanupCount[pos]
	r.cleanupCount[pos]++
	return fmt.Sprintf("%s%s#%d", starlarkCleanupPrefix, pos, n)
}
