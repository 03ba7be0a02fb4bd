package builtins

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sync"

	"go.starlark.net/starlark"
)

// A gate marks where a run may stop and wait for a person, as a release
// pipeline's approval stops between testing an image and promoting it.
// `imgflow run --stop-at NAME` ends the run at gate NAME: each parallel()
// branch that reaches it stops there, the others go on until they reach
// it or end; nothing after it runs and no cleanup runs (the journal keeps
// them). Continuing the run (--resume, --continue) without --stop-at
// replays what was done and goes past the gate. Without --stop-at a gate
// does nothing, so local runs go through as before.

var gateNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9_-]{0,39}$`) })

// StopError is how a run stopped at its --stop-at gate unwinds: not a
// failure. parallel() lets its other branches go on; the interpreter ends
// the pass without cleanups.
type StopError struct{ Gate string }

func (e *StopError) Error() string {
	return fmt.Sprintf("stopped at gate(name = %q) (--stop-at %s)", e.Gate, e.Gate)
}

// StoppedAt returns the gate err stopped at, or "".
func StoppedAt(err error) string {
	if se, ok := errors.AsType[*StopError](err); ok {
		return se.Gate
	}
	return ""
}

func gateSpec() *Spec {
	return &Spec{
		Name: "gate", Effect: Pure,
		Params: []Param{
			{Name: "name", Kind: KindString, Doc: "the gate's name, e.g. \"promote\" (lowercase letters, digits, '-', '_'), as `--stop-at` and a release's `approval(…, gate = …)` name it"},
		},
		Returns: "None",
		Doc: "Marks where a run may stop for an approval, such as between testing an image and promoting it. `imgflow run --stop-at NAME` " +
			"stops the run at gate NAME: each parallel() branch stops there once it reaches it, the others go on until they do; nothing after the gate " +
			"runs, no cleanup runs (temporaries stay for the promotion) and the run ends as stopped. `imgflow run --resume RUN_ID` (or `--continue`) " +
			"replays what was done and goes past it; a call before the gate that the stopped attempt did not journal (a changed --var or checkout) is refused there, so what was tested is what goes on. Without `--stop-at` the gate does nothing. A release's `approval(ENV, gate = NAME)` makes `imgflow ci` " +
			"run each job up to the gate, then continue it in a job that waits for ENV's approval. The validation pass checks that the workflow reaches the gate " +
			"`--stop-at` names, before any change.",
		Example: `gate(name = "promote")`,
		Impl:    gateImpl,
	}
}

func gateImpl(c *Call) (starlark.Value, error) {
	name := c.String("name", "")
	if !gateNameRE().MatchString(name) {
		return nil, fmt.Errorf("gate: name %q: use lowercase letters, digits, '-' and '_', starting with a letter, e.g. \"promote\"", name)
	}
	c.Run.reachGate(name)
	if !c.Run.Validating && c.Run.StopAt == name {
		return nil, &StopError{Gate: name}
	}
	MarkPastGate(c.Thread)
	return starlark.None, nil
}

// passedGateKey is the thread-local mark of a thread past a gate: what it
// calls next was not approved in the attempt that stopped there.
const passedGateKey = "imgflow.gate.passed"

// MarkPastGate marks thread as past the run's gates: a parallel() branch
// that passed one (and the thread that waited for it), or the thread the
// cleanups run on at the workflow's end.
func MarkPastGate(thread *starlark.Thread) { thread.SetLocal(passedGateKey, true) }

func passedGate(thread *starlark.Thread) bool {
	b, _ := thread.Local(passedGateKey).(bool)
	return b
}

// errBeforeGateChanged refuses a call before the gate that the attempt
// which stopped there did not journal: continuing past the gate would
// otherwise build anew (a checkout moved, a var changed) and promote what
// nobody tested or approved.
func errBeforeGateChanged(builtin string) error {
	return fmt.Errorf("%s: this run stopped at its gate and now continues past it, but this call before the gate is not in its journal: what was tested and approved changed since (the workflow, a --var, or a checkout it reads, e.g. at another commit). Continue with what the stopped attempt had, or start a new run", builtin)
}

// reachGate records that the run reached gate name.
func (r *Run) reachGate(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !slices.Contains(r.gates, name) {
		r.gates = append(r.gates, name)
	}
}

// Gates returns the names of the gates the run reached, in order.
func (r *Run) Gates() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.gates...)
}
