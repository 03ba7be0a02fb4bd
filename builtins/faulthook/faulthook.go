// Package faulthook injects a fault set (cloud/faults) into a run's
// builtin calls: the hooks it returns go in interp.Config.Hooks, and the
// same set, wrapped around the target with faults.WithFaults, fails its
// Provider operations. Tests and the workflow test harness use it; the
// run layers know only builtins.CallHooks.
package faulthook

import (
	"context"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/cloud/faults"
)

// Hooks fails (or crashes after) the builtins named in f.
func Hooks(f *faults.Faults) builtins.CallHooks {
	if f == nil {
		return builtins.CallHooks{}
	}
	return builtins.CallHooks{
		Before: func(_ context.Context, builtin string, _ *builtins.Step) error { return f.Before(builtin) },
		After:  func(_ context.Context, builtin string, _ *builtins.Step) error { return f.After(builtin) },
	}
}
