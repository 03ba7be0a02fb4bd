package interp

import (
	"context"
	"fmt"
	"os"

	"go.starlark.net/starlark"

	"github.com/imgflow/imgflow/builtins"
)

// ExecModule executes a Starlark file that is not a workflow, such as a
// *_test.star file, in the workflow dialect and environment plus extra,
// with load() as in workflows. setup runs on the main thread before
// execution (e.g. to install a test reporter). It returns the module's
// globals; errors are rendered like workflow errors.
func ExecModule(ctx context.Context, cfg Config, file string, extra starlark.StringDict, setup func(*starlark.Thread)) (starlark.StringDict, error) {
	rel, abs, err := cfg.Workspace.Resolve("", file)
	if err != nil {
		return nil, err
	}
	src, err := os.ReadFile(abs)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", rel, err)
	}
	maxSteps := cfg.MaxSteps
	if maxSteps == 0 {
		maxSteps = DefaultMaxSteps
	}
	run := &builtins.Run{Ctx: ctx, Workspace: cfg.Workspace, Info: cfg.Info, Reporter: cfg.Reporter, Registry: cfg.Registry}
	env := Predeclared(cfg.Registry)
	for k, v := range extra {
		env[k] = v
	}
	ld := newLoader(ctx, cfg, run, env, maxSteps, rel)
	th := newThread("module "+rel, run, ld, maxSteps)
	if setup != nil {
		setup(th)
	}
	stop := watchCancel(ctx, th)
	defer stop()
	globals, err := cfg.Programs.compile(rel, src, env).exec(th, env)
	if err != nil {
		return globals, renderError(err, cfg.Workspace)
	}
	return globals, nil
}

// NewThread makes a thread for calling functions of a module from Go
// (e.g. test_* functions): step limit, print to the reporter, cancellation
// through ctx (call the returned stop when done).
func NewThread(ctx context.Context, cfg Config, name string) (*starlark.Thread, func()) {
	maxSteps := cfg.MaxSteps
	if maxSteps == 0 {
		maxSteps = DefaultMaxSteps
	}
	run := &builtins.Run{Ctx: ctx, Workspace: cfg.Workspace, Info: cfg.Info, Reporter: cfg.Reporter, Registry: cfg.Registry}
	th := newThread(name, run, newLoader(ctx, cfg, run, Predeclared(cfg.Registry), maxSteps, ""), maxSteps)
	return th, watchCancel(ctx, th)
}

// RenderError renders any error from Starlark execution like a workflow
// error: file:line, message, source line, backtrace.
func RenderError(err error, ws *builtins.Workspace) error { return renderError(err, ws) }
