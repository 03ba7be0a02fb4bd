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
// it makes share one cache of staged files' sums.
func Simulator() builtins.PackerSimulator {
	sim := localsim.NewSimulator()
	return func(p cloud.Provider, tempDir string, subs func(ctx context.Context, sub string) (cloud.Provider, error)) builtins.PackerBuilder {
		b := sim(p, tempDir)
		b.Subscriptions = subs
		return b
	}
}

// NewWorkspace is builtins.NewWorkspace with the simulator plugged in.
func NewWorkspace(root string) (*builtins.Workspace, error) {
	ws, err := builtins.NewWorkspace(root)
	if err != nil {
		return nil, err
	}
	ws.SimulatePacker = Simulator()
	return ws, nil
}
