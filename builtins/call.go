package builtins

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/internal/redact"
	"github.com/imgflow/imgflow/journal"
)

// Call is one invocation of a builtin: its unpacked, type-checked
// arguments and the run it belongs to.
type Call struct {
	Thread *starlark.Thread
	Run    *Run
	Spec   *Spec
	args   map[string]starlark.Value
	step   *Step
	// key is the journal key of a call that changes the cloud.
	key string
	// cleanups are those this call registered, journaled with it.
	cleanups []journal.Cleanup
}

// call is the starlark.Builtin function of every spec: unpack with
// starlark.UnpackArgs, check kinds, record the step, run the Impl.
func (s *Spec) call(thread *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	run := RunOf(thread)
	if run == nil {
		return nil, fmt.Errorf("%s() can only be called while imgflow runs a workflow", s.Name)
	}
	if len(args) > s.Positional {
		return nil, s.positionalError(len(args))
	}
	for _, kv := range kwargs {
		name := string(kv[0].(starlark.String))
		if fix, ok := s.Removed[name]; ok {
			return nil, fmt.Errorf("%s: parameter %s was removed: %s", s.Name, name, fix)
		}
	}
	values := make([]starlark.Value, len(s.Params))
	pairs := make([]any, 0, 2*len(s.Params))
	for i, p := range s.Params {
		name := p.Name
		if !p.Required() {
			name += "??" // optional, and None means "not given"
		}
		pairs = append(pairs, name, &values[i])
	}
	if err := starlark.UnpackArgs(s.Name, args, kwargs, pairs...); err != nil {
		return nil, err
	}
	c := &Call{Thread: thread, Run: run, Spec: s, args: map[string]starlark.Value{}}
	for i, p := range s.Params {
		v := values[i]
		if v == nil || (v == starlark.None && p.Kind != KindAny) {
			if p.Required() {
				return nil, fmt.Errorf("%s: missing argument for %s", s.Name, p.Name)
			}
			continue
		}
		if err := p.Kind.Check(v); err != nil {
			return nil, fmt.Errorf("%s: for parameter %s: %v", s.Name, p.Name, err)
		}
		if n, ok := p.Kind.(normalizer); ok {
			v = n.Normalize(v)
		}
		c.args[p.Name] = v
	}
	if s.Effect == Changes {
		if m := loadingModule(thread); m != "" {
			return nil, fmt.Errorf("%s() cannot run while %s is being loaded: libraries must not change the cloud; call it from the workflow (or from a function the workflow calls)", s.Name, m)
		}
	}
	if s.Effect == Changes && run.Journal != nil {
		c.key = StepKey(s.Name, c.argsToGo())
		if rec, ok := run.Journal.Lookup(c.key); ok {
			return c.invoke(func(c *Call) (starlark.Value, error) { return c.replay(rec) })
		}
		if run.Journal.PastGate() && !passedGate(thread) {
			return nil, errBeforeGateChanged(s.Name)
		}
	}
	return c.invoke(c.live)
}

// live runs the builtin for real: the Before hook first, then the Impl,
// then the After hook, then the journal record, so a halt before the
// record replays nothing.
func (c *Call) live(_ *Call) (starlark.Value, error) {
	name := c.Spec.Name
	if err := c.Run.Hooks.before(c.Ctx(), name, c.step); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	v, err := c.Spec.Impl(c)
	if err != nil {
		return nil, err
	}
	if err := c.Run.Hooks.after(c.Ctx(), name, c.step); err != nil {
		return nil, err
	}
	if c.key == "" {
		return v, nil
	}
	result, err := EncodeValue(v)
	if err != nil {
		return nil, fmt.Errorf("%s: journal the result: %w", name, err)
	}
	rec := journal.Step{Key: c.key, Builtin: name, Pos: c.Pos(), Args: c.step.Args, Result: result,
		Outcome: string(c.step.Outcome), Cleanups: c.cleanups}
	if err := c.Run.Journal.RecordStep(rec); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return v, nil
}

func (s *Spec) positionalError(n int) error {
	if len(s.Params) == 0 {
		return fmt.Errorf("%s: got %d argument(s), want none", s.Name, n)
	}
	if s.Positional == 0 {
		return fmt.Errorf("%s: got %d positional argument(s), want keywords only, e.g. %s(%s=…)", s.Name, n, s.Name, s.Params[0].Name)
	}
	names := make([]string, s.Positional)
	for i := range names {
		names[i] = s.Params[i].Name
	}
	return fmt.Errorf("%s: got %d positional arguments, want at most %d (%s); pass the others by keyword", s.Name, n, s.Positional, strings.Join(names, ", "))
}

func (c *Call) invoke(impl func(*Call) (starlark.Value, error)) (starlark.Value, error) {
	stack := c.Thread.CallStack()
	c.step = &Step{
		Builtin: c.Spec.Name,
		Effect:  c.Spec.Effect,
		Args:    c.argsToGo(),
		Pos:     callerPos(stack),
		Stack:   stack,
	}
	rep := c.Run.Reporter
	if c.Spec.Effect == Changes && rep != nil {
		rep.StepStarted(c.step)
	}
	start := time.Now()
	v, err := impl(c)
	c.step.Duration = time.Since(start)
	c.step.Err = err
	if err == nil {
		c.step.Result, _ = ToGo(v)
	}
	c.Run.record(c.step)
	if c.Spec.Effect == Changes && rep != nil {
		rep.StepFinished(c.step)
	}
	return v, err
}

// callerPos is the position of the innermost Starlark frame that called
// the builtin (frame 0 is the builtin itself).
func callerPos(stack starlark.CallStack) string {
	if len(stack) < 2 {
		return ""
	}
	return stack[len(stack)-2].Pos.String()
}

// argsToGo records the arguments as JSON-like values, with the query of
// every URL (a SAS) redacted: recorded arguments reach the journal, plans
// and test results, where secrets must never go.
func (c *Call) argsToGo() map[string]any {
	out := make(map[string]any, len(c.args))
	for k, v := range c.args {
		g, err := ToGo(v)
		if err != nil {
			g = v.String()
		}
		out[k] = redactOwned(g)
	}
	return out
}

// redactOwned is RedactSecrets on a value nothing else holds (ToGo's
// fresh result): its maps and lists are redacted in place, not copied.
func redactOwned(v any) any {
	switch v := v.(type) {
	case string:
		return RedactSecrets(v)
	case []any:
		for i, e := range v {
			v[i] = redactOwned(e)
		}
	case map[string]any:
		for k, e := range v {
			v[k] = redactOwned(e)
		}
	}
	return v
}

// RedactSecrets applies redact's policy to the strings of a JSON-like
// value: a URL loses its query (any may be a credential), and any text its
// SAS signatures and URL passwords.
func RedactSecrets(v any) any {
	switch v := v.(type) {
	case string:
		return redact.Strict(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = RedactSecrets(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = RedactSecrets(e)
		}
		return out
	}
	return v
}

// Ctx is the run's context.
// Ctx is the context of the calling thread: the run's, or that of a
// parallel() branch, which is cancelled when another branch fails.
func (c *Call) Ctx() context.Context {
	if ctx, ok := c.Thread.Local(contextKey).(context.Context); ok {
		return ctx
	}
	return c.Run.Ctx
}

// Pos is the caller's file:line:col.
func (c *Call) Pos() string { return c.step.Pos }

// Report sets what the step did, shown in the step line.
func (c *Call) Report(outcome cloud.Outcome, summary string) {
	c.step.Outcome = outcome
	// The step line is printed and journaled: redact's policy applies, as
	// it does to the arguments.
	c.step.Summary = RedactSecrets(summary).(string)
}

// Has reports whether the argument was given (and not None).
func (c *Call) Has(name string) bool { _, ok := c.args[name]; return ok }

// Value returns the argument or nil.
func (c *Call) Value(name string) starlark.Value { return c.args[name] }

// String returns a string argument, or def when absent.
func (c *Call) String(name, def string) string {
	if v, ok := c.args[name].(starlark.String); ok {
		return string(v)
	}
	return def
}

// Int returns an int argument, or def when absent; too large a value is an
// error.
func (c *Call) Int(name string, def int) (int, error) {
	v, ok := c.args[name]
	if !ok {
		return def, nil
	}
	var n int
	if err := starlark.AsInt(v, &n); err != nil {
		return 0, fmt.Errorf("%s: for parameter %s: %v", c.Spec.Name, name, err)
	}
	return n, nil
}

// Bool returns a bool argument, or def when absent.
func (c *Call) Bool(name string, def bool) bool {
	if v, ok := c.args[name].(starlark.Bool); ok {
		return bool(v)
	}
	return def
}

// Strings returns a list-of-strings argument (nil when absent).
func (c *Call) Strings(name string) []string {
	seq, ok := c.args[name].(starlark.Indexable)
	if !ok {
		return nil
	}
	out := make([]string, seq.Len())
	for i := range out {
		out[i] = string(seq.Index(i).(starlark.String))
	}
	return out
}

// StringMap returns a dict-of-strings argument (nil when absent).
func (c *Call) StringMap(name string) map[string]string {
	d, ok := c.args[name].(*starlark.Dict)
	if !ok {
		return nil
	}
	out := make(map[string]string, d.Len())
	for _, kv := range d.Items() {
		out[string(kv[0].(starlark.String))] = string(kv[1].(starlark.String))
	}
	return out
}

// Struct returns a struct argument (nil when absent).
func (c *Call) Struct(name string) *starlarkstruct.Struct {
	s, _ := c.args[name].(*starlarkstruct.Struct)
	return s
}

// Duration returns a duration argument, or def when absent.
func (c *Call) Duration(name string, def time.Duration) time.Duration {
	s, ok := c.args[name].(starlark.String)
	if !ok {
		return def
	}
	d, _ := time.ParseDuration(string(s)) // checked by KindDuration
	return d
}
