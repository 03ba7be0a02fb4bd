package main

import (
	"path/filepath"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/internal/localpacker"
)

// newWorkspace is the workspace at root for a command: its simulated
// builds keep the sums of the large files they stage (the build tools)
// in the user's cache directory, so a plan hashes them once until they
// change, not on every plan.
func newWorkspace(root string) (*builtins.Workspace, error) {
	sums := ""
	if dir := cacheDir(); dir != "" {
		sums = filepath.Join(dir, sumsCache)
	}
	return localpacker.NewWorkspaceWithSums(root, sums)
}
