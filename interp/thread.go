package interp

import (
	"context"
	"errors"
	"fmt"

	"go.starlark.net/starlark"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/internal/memlimit"
)

// newThread makes a thread of the run: run state attached, print routed to
// the reporter with file:line, loads through ld, and a step limit.
func newThread(name string, run *builtins.Run, ld *loader, maxSteps uint64) *starlark.Thread {
	th := &starlark.Thread{
		Name: name,
		Load: ld.load,
		Print: func(th *starlark.Thread, msg string) {
			if run.Reporter != nil {
				run.Reporter.Print(th.CallFrame(1).Pos.String(), msg)
			}
		},
		OnMaxSteps: func(th *starlark.Thread) {
			th.Cancel(fmt.Sprintf("too many steps (limit %d): is a loop not ending? Raise --max-steps only if the workflow really is this big", maxSteps))
		},
	}
	th.SetMaxExecutionSteps(maxSteps)
	run.Attach(th)
	return th
}

// watchCancel cancels thread when ctx is done; call stop when the thread
// has finished.
func watchCancel(ctx context.Context, th *starlark.Thread) (stop func()) {
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			var exceeded *memlimit.ExceededError
			if cause := context.Cause(ctx); errors.As(cause, &exceeded) {
				th.Cancel(exceeded.Error())
			} else {
				th.Cancel("interrupted: " + cause.Error())
			}
		case <-done:
		}
	}()
	return func() { close(done) }
}
