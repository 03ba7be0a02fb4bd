// Package localpacker plugs the packer simulator (packer/localsim) into
// builtins: builtins owns the interface (builtins.PackerSimulator) and
// never imports the simulator; the programs that start runs (cmd/imgflow,
// the test harnesses, the benchmarks) install it here.
package localpacker

import (
	"context"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/packer/localsim"
)

// Simulator is packer/localsim as a builtins.PackerSimulator; the builds
// it makes share one cache of staged files' sums, kept in sumsDir for
// later processes too ("": this process only).
func Simulator(sumsDir string) builtins.PackerSimulator {
	sim := localsim.NewSimulator(sumsDir)
	return func(p cloud.Provider, tempDir string, subs func(ctx context.Context, sub string) (cloud.Provider, error)) builtins.PackerBuilder {
		b := sim(p, tempDir)
		b.Subscriptions = subs
		return b
	}
}

// NewWorkspace is builtins.NewWorkspace with the simulator plugged in,
// its sums kept in this process only.
func NewWorkspace(root string) (*builtins.Workspace, error) {
	return NewWorkspaceWithSums(root, "")
}

// NewWorkspaceWithSums is NewWorkspace with the staged files' sums kept
// in sumsDir across processes (imgflow's commands: the user's cache).
func NewWorkspaceWithSums(root, sumsDir string) (*builtins.Workspace, error) {
	ws, err := builtins.NewWorkspace(root)
	if err != nil {
		return nil, err
	}
	ws.SimulatePacker = Simulator(sumsDir)
	return ws, nil
}
