package builtins

import (
	"context"
	"fmt"
	"sync"

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
				"cleanups run when the workflow ends, and the error keeps the whole call stack.",
			Example: `images = parallel([lambda: build(k8s) for k8s in ["1.31.1", "1.32.2"]])`,
			Impl:    parallelImpl,
		},
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
	limit, err := c.Int("max_parallel", 0)
	if err != nil {
		return nil, err
	}
	if limit <= 0 || limit > len(fns) {
		limit = len(fns)
	}
	results, err := runBranches(c, fns, limit)
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
// the cancellations it caused) is returned.
func runBranches(c *Call, fns []starlark.Callable, limit int) ([]starlark.Value, error) {
	ctx, cancel := context.WithCancelCause(c.Ctx())
	defer cancel(nil)
	results := make([]starlark.Value, len(fns))
	var (
		once     sync.Once
		first    = -1
		firstErr error
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
			v, err := starlark.Call(th, fn, nil, nil)
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
	return results, nil
}
