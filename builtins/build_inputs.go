package builtins

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// buildInput is a file packer_build places in the build's own directory:
// what a pipeline downloads into its working directory before packer runs
// (AgentBaker's Kata UVM image), without writing into cwd.
type buildInput struct {
	dest string // relative to cwd, as the template reads it
	rel  string // the workspace file, as the workflow names it
	abs  string
}

// inputs reads packer_build's inputs dict: {path relative to cwd:
// workspace file}. Each file must exist, in a plan too: inputs are the
// user's files, there before the run.
func (c *Call) inputs() ([]buildInput, error) {
	dests, err := cwdPathDict(c.Value("inputs"), "inputs", `a workspace file, e.g. {"kata-containers.img": "//downloads/kata-containers.img"}`)
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	var out []buildInput
	for dest, src := range dests {
		rel, abs, err := c.resolve(src)
		if err != nil {
			errs = append(errs, fmt.Errorf("inputs[%q]: %w", dest, err))
			continue
		}
		if info, err := os.Stat(abs); err != nil || info.IsDir() {
			errs = append(errs, fmt.Errorf("inputs[%q]: %s is not a file in the workspace", dest, rel))
			continue
		}
		out = append(out, buildInput{dest: dest, rel: rel, abs: abs})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].dest < out[j].dest })
	return out, errors.Join(errs...)
}

// inputPaths are the inputs' destinations, as upload sources present.
func inputPaths(in []buildInput) map[string]string {
	out := make(map[string]string, len(in))
	for _, i := range in {
		out[i.dest] = i.rel
	}
	return out
}

// placeInputs links each input into the build's working directory, which
// mirrors cwd with the inputs' paths left to the build.
func placeInputs(workDir string, in []buildInput) error {
	for _, i := range in {
		dst := filepath.Join(workDir, filepath.FromSlash(i.dest))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.Symlink(i.abs, dst); err != nil {
			return fmt.Errorf("inputs[%s]: %w", i.dest, err)
		}
	}
	return nil
}

// inputsSummary names the inputs in the step's line.
func inputsSummary(in []buildInput) string {
	if len(in) == 0 {
		return ""
	}
	parts := make([]string, len(in))
	for i, x := range in {
		parts[i] = x.dest + " from " + x.rel
	}
	return "; inputs " + strings.Join(parts, ", ")
}
