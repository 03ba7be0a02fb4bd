package builtins

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Workspace is the directory a workflow may read from: load() and the
// file-reading builtins resolve only inside it.
type Workspace struct {
	// Root is the absolute, symlink-free workspace directory.
	Root string
	// SimulatePacker makes the simulated packer builds of runs in this
	// workspace (nil: a build needing one fails). The caller plugs it in
	// (internal/localpacker), so builtins does not import the simulator.
	SimulatePacker PackerSimulator
}

// NewWorkspace resolves root to an absolute, symlink-free path.
func NewWorkspace(root string) (*Workspace, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", root, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", root, err)
	}
	return &Workspace{Root: real}, nil
}

// Resolve turns a path as a workflow wrote it into a workspace-relative
// slash path and an absolute one. "//x/y" is relative to the workspace
// root; other paths are relative to the directory of fromFile (itself
// workspace-relative). Absolute paths and paths that leave the workspace,
// also through a symlink, are refused.
func (w *Workspace) Resolve(fromFile, path string) (rel, abs string, err error) {
	switch {
	case path == "":
		return "", "", fmt.Errorf("empty path")
	case strings.HasPrefix(path, "//"):
		rel = filepath.Clean(strings.TrimPrefix(path, "//"))
	case filepath.IsAbs(path):
		return "", "", fmt.Errorf("path %q is absolute: use //%s for a path from the workspace root, or a path relative to %s", path, "…", fromFile)
	default:
		rel = filepath.Clean(filepath.Join(filepath.Dir(fromFile), path))
	}
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return "", "", fmt.Errorf("path %q is outside the workspace %s: workflows may only read files inside it", path, filepath.Base(w.Root))
	}
	abs = filepath.Join(w.Root, rel)
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		if real != w.Root && !strings.HasPrefix(real, w.Root+string(os.PathSeparator)) {
			return "", "", fmt.Errorf("path %q leads outside the workspace through a symlink: workflows may only read files inside it", path)
		}
	}
	return filepath.ToSlash(rel), abs, nil
}

// Rel makes an absolute path workspace-relative (for display), or returns
// it unchanged when it is outside.
func (w *Workspace) Rel(abs string) string {
	rel, err := filepath.Rel(w.Root, abs)
	if err != nil || strings.HasPrefix(rel, "..") {
		return abs
	}
	return filepath.ToSlash(rel)
}
