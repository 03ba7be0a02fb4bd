// Package testharness runs workflows from Go tests the way `imgflow run`
// does: a workspace, the builtin registry, run facts, and interp's passes
// against a target. It replaces the interp.Config and workspace each test
// file used to assemble by hand.
//
//	h := testharness.New(t, "../..", "azure-test")
//	res := h.Run(ctx, "//workflows/flatcar.star", testharness.Vars("version", "4152.2.3"), interp.Target{Apply: p})
package testharness

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.starlark.net/starlark"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/cloud/local"
	"github.com/imgflow/imgflow/cloud/overlay"
	"github.com/imgflow/imgflow/internal/localpacker"
	"github.com/imgflow/imgflow/interp"
)

// Harness holds what every run of a test shares.
type Harness struct {
	Workspace *builtins.Workspace
	Registry  *builtins.Registry
	// Info are the run facts (id and time) each Config carries.
	Info builtins.RunInfo
}

// RunTime is the run time of a harness: fixed, so the names a workflow
// generates from it are the same on every run of the test.
func RunTime() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }

// New returns a harness on the workspace root (relative to the test's
// package directory, or absolute) whose runs have the id runID and
// RunTime.
func New(t testing.TB, root, runID string) *Harness {
	t.Helper()
	ws, err := localpacker.NewWorkspace(root)
	require.NoError(t, err)
	return &Harness{Workspace: ws, Registry: builtins.NewRegistry(), Info: builtins.RunInfo{ID: runID, Time: RunTime()}}
}

// Config is an interp.Config of the harness with vars; callers set the
// rest (Journal, Faults, Reporter, …) on it.
func (h *Harness) Config(vars map[string]starlark.Value) interp.Config {
	return interp.Config{Workspace: h.Workspace, Registry: h.Registry, Info: h.Info, Vars: vars}
}

// Run runs file (a workspace path, "//…") with vars against target, as
// `imgflow run` does: the validation pass on target.Validate when set,
// then the apply pass.
func (h *Harness) Run(ctx context.Context, file string, vars map[string]starlark.Value, target interp.Target) *interp.Result {
	return interp.Run(ctx, file, h.Config(vars), target)
}

// Vars makes workflow vars from name, value string pairs.
func Vars(nameValues ...string) map[string]starlark.Value {
	vars := make(map[string]starlark.Value, len(nameValues)/2)
	for i := 0; i+1 < len(nameValues); i += 2 {
		vars[nameValues[i]] = starlark.String(nameValues[i+1])
	}
	return vars
}

// Memory returns an in-memory local target, closed when the test ends.
func Memory(t testing.TB, opts local.Options) *local.Provider {
	t.Helper()
	p, err := local.NewMemory(opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// Local is the target of a run on the local provider p: validated against
// the overlay's dry run over it first, as `imgflow run` does.
func Local(p *local.Provider) interp.Target {
	return interp.Target{Apply: p, Validate: overlay.New(p)}
}
