package main

import (
	"context"
	"fmt"

	"github.com/imgflow/imgflow/internal/memlimit"
)

// addMaxMemory adds --max-memory, the budget of the commands that run a
// workflow's code (run, plan): a param-driven loop must end with an
// error at its line, never with the Go runtime's out-of-memory dump.
func addMaxMemory(fs *commandFlags) *string {
	return fs.String("max-memory", "1GiB", "memory `size` the run may hold (e.g. 512MiB, 2GiB); past it the run stops at its current line")
}

// watchMemory parses --max-memory and watches the budget (memlimit.Watch);
// call stop when the command ends.
func watchMemory(ctx context.Context, size string) (context.Context, func(), error) {
	limit, err := memlimit.Parse(size)
	if err != nil {
		return nil, nil, fmt.Errorf("--max-memory: %w", err)
	}
	ctx, stop := memlimit.Watch(ctx, limit, "--max-memory")
	return ctx, stop, nil
}
