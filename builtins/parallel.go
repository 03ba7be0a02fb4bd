package builtins

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"go.starlark.net/starlark"
)

func registerControl(r *Registry) {
	r.add("Control",
		&Spec{
			Name: "parallel", Positional: 1, Effect: Pure,
			Params: []Param{
				{Name: "fns", Kind: KindCallableList, Doc: "functions of no arguments, e.g. lambdas"},
				{Name: "max_parallel", Kind: KindInt, Default: "0", Doc: "how many run at once; 0: all"},
			},
			Returns: "list of their results, in order",
			Doc: "Runs each function on its own thread, at the same time, and returns their results in order. Values " +
				"shared with the functions are frozen (immutable) first. The first failure cancels the others; their " +
				"cleanups run when the workflow ends, and the error keeps the whole call stack. A lambda written in a " +
				"comprehension sees the loop variable's last value: make each function with a factory (`def build_fn(k8s): " +
				"return lambda: build(k8s)`). Nested calls may run at most 64 branches at once (the product of their " +
				"`max_parallel`s); recursion through parallel() is refused like any recursion.",
			Example: `images = parallel([build_fn(k8s) for k8s in ["1.31.1", "1.32.2"]])`,
			Impl:    parallelImpl,
		},
		gateSpec(),
	)
}

// KindCallableList is a list or tuple of functions.
var KindCallableList Kind = &simpleKind{"list of functions", func(v starlark.Value) bool {
	seq, ok := v.(starlark.Indexable)
	if !ok {
		return false
	}
	if _, isStr := v.(starlark.String); isStr {
		return false
	}
	for i := 0; i < seq.Len(); i++ {
		if _, ok := seq.Index(i).(starlark.Callable); !ok {
			return false
		}
	}
	return true
}}

// MaxLiveBranches bounds how many branches nested parallel() calls may run
// at once: the product of the concurrency of every enclosing parallel()
// (its max_parallel, or its number of functions). Each branch is a thread;
// without a bound nested calls grow without limit. The bound is checked
// when parallel() is called, so it does not depend on timing.
const MaxLiveBranches = 64

// branchPathKey is the thread-local path of a parallel() branch: for each
// enclosing parallel() call its position and the branch's index. It names
// what a branch registers independently of the order branches run in.
const branchPathKey = "imgflow.parallel.path"

// widthKey is the thread-local number of branches the enclosing parallel()
// calls may run at once (1 outside any parallel()).
const widthKey = "imgflow.parallel.width"

// ancestorsKey is the thread-local list of the functions that were on the
// call stacks of a branch's ancestor threads when they spawned it.
const ancestorsKey = "imgflow.parallel.ancestors"

func parallelImpl(c *Call) (starlark.Value, error) {
	if m := loadingModule(c.Thread); m != "" {
		return nil, fmt.Errorf("parallel() cannot run while %s is being loaded: call it from the workflow", m)
	}
	if c.Run.Spawn == nil {
		return nil, fmt.Errorf("parallel() is not available here")
	}
	seq := c.Value("fns").(starlark.Indexable)
	fns := make([]starlark.Callable, seq.Len())
	for i := range fns {
		fns[i] = seq.Index(i).(starlark.Callable)
		freezeReachable(fns[i])
	}
	ancestors := callChain(c.Thread)
	for i, f := range ancestors {
		if containsFunction(ancestors[:i], f) {
			return nil, fmt.Errorf("parallel(): %s calls itself through parallel() (recursion is not allowed in workflows, in branches either): use a loop", f.Name())
		}
	}
	limit, err := c.Int("max_parallel", 0)
	if err != nil {
		return nil, err
	}
	if limit <= 0 || limit > len(fns) {
		limit = len(fns)
	}
	width := branchWidth(c.Thread) * limit
	if width > MaxLiveBranches {
		return nil, fmt.Errorf("parallel(): %d branches could run at once here (%d in this call × %d of the enclosing parallel() calls), more than a run's limit of %d (MaxLiveBranches): set max_parallel or nest parallel() less", width, limit, width/limit, MaxLiveBranches)
	}
	results, err := runBranches(c, fns, limit, ancestors, width)
	if err != nil {
		return nil, err
	}
	return starlark.NewList(results), nil
}

// freezeReachable freezes what a branch can reach, which the others may
// reach too: a mutation is then an error instead of a data race. A
// function's Freeze covers its closure but not the globals of a module
// still initialising (go.starlark.net #623), so those are frozen here.
func freezeReachable(fn starlark.Callable) {
	fn.Freeze()
	if f, ok := fn.(*starlark.Function); ok {
		for _, v := range f.Globals() {
			v.Freeze()
		}
	}
}

// runBranches calls each function on its own thread, at most limit at a
// time. The first branch to fail cancels the others, and its error (not
// the cancellations it caused) is returned. A branch stopped at the run's
// --stop-at gate cancels nothing: the others go on until they stop there
// too or end, and then the call stops as they did.
func runBranches(c *Call, fns []starlark.Callable, limit int, ancestors []*starlark.Function, width int) ([]starlark.Value, error) {
	ctx, cancel := context.WithCancelCause(c.Ctx())
	defer cancel(nil)
	results := make([]starlark.Value, len(fns))
	var (
		once     sync.Once
		first    = -1
		firstErr error
		stopped  atomic.Pointer[error]
		passed   atomic.Bool
	)
	fail := func(i int, err error) {
		once.Do(func() {
			first, firstErr = i, err
			cancel(fmt.Errorf("branch %d of parallel() at %s failed", i+1, c.Pos()))
		})
	}
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
				defer func() { <-sem }()
			case <-ctx.Done():
				return // another branch failed before this one started
			}
			th, stop := c.Run.Spawn(ctx, fmt.Sprintf("parallel %d of %s", i+1, c.Pos()))
			defer stop()
			th.SetLocal(ancestorsKey, ancestors)
			th.SetLocal(widthKey, width)
			th.SetLocal(branchPathKey, fmt.Sprintf("%sparallel@%s[%d]/", branchPath(c.Thread), c.Pos(), i+1))
			if passedGate(c.Thread) {
				MarkPastGate(th)
			}
			v, err := starlark.Call(th, fn, nil, nil)
			if passedGate(th) {
				passed.Store(true)
			}
			if err != nil && StoppedAt(err) != "" {
				stopped.CompareAndSwap(nil, &err)
				return
			}
			if err != nil {
				fail(i, err)
				return
			}
			v.Freeze()
			results[i] = v
		}()
	}
	wg.Wait()
	if first >= 0 {
		return nil, fmt.Errorf("parallel branch %d: %w", first+1, firstErr)
	}
	if err := ctx.Err(); err != nil {
		return nil, context.Cause(ctx) // the run itself was cancelled
	}
	if err := stopped.Load(); err != nil {
		return nil, *err
	}
	if passed.Load() {
		MarkPastGate(c.Thread) // what follows the call follows the gate
	}
	return results, nil
}

// branchPath is the path of the parallel() branch thread runs ("" outside
// any parallel()).
func branchPath(thread *starlark.Thread) string {
	p, _ := thread.Local(branchPathKey).(string)
	return p
}

// branchWidth is how many branches the parallel() calls enclosing thread
// may run at once.
func branchWidth(thread *starlark.Thread) int {
	if w, ok := thread.Local(widthKey).(int); ok {
		return w
	}
	return 1
}

// callChain is every Starlark function active in thread and in the threads
// that spawned it, so that recursion through parallel(), which starts each
// call on a new thread, is caught as recursion on one thread is.
func callChain(thread *starlark.Thread) []*starlark.Function {
	inherited, _ := thread.Local(ancestorsKey).([]*starlark.Function)
	chain := append([]*starlark.Function(nil), inherited...)
	for i := 0; i < thread.CallStackDepth(); i++ {
		if f, ok := thread.DebugFrame(i).Callable().(*starlark.Function); ok {
			chain = append(chain, f)
		}
	}
	return chain
}

// containsFunction reports whether chain holds fn: the same function
// value, or another closure of the same definition (a lambda made anew by
// each call of its enclosing function).
func containsFunction(chain []*starlark.Function, fn *starlark.Function) bool {
	for _, f := range chain {
		if f == fn || (f.Position() == fn.Position() && f.Name() == fn.Name()) {
			return true
		}
	}
	return false
}
