package startest

import (
	"context"
	"fmt"
	"os"
	"path"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/interp"
)

// TestSuffix ends the name of every test file.
const TestSuffix = "_test.star"

// WorkflowsDir is the workspace directory whose .star files (other than
// tests) are workflows.
const WorkflowsDir = "workflows"

// ExpectedOutputsVar is the module-level list of output names a
// workflow's test file may declare: the outputs the workflow sets when run
// with its defaults. imgflow's own
// Go tests run every workflow and check them.
//
//	EXPECTED_OUTPUTS = ["vhd_url", "sku_name", "captured_sig_resource_id"]
const ExpectedOutputsVar = "EXPECTED_OUTPUTS"

// IsWorkflow reports whether the workspace-relative file is one of the
// workspace's workflows, which should have a test: a .star file directly
// in workflows/ that is not a test. (lint.IsWorkflow also takes files of
// nested workflows/ directories, such as testdata/workflows/ fixtures.)
func IsWorkflow(file string) bool {
	dir, name := path.Split(file)
	return dir == WorkflowsDir+"/" && strings.HasSuffix(name, ".star") && !strings.HasSuffix(name, TestSuffix)
}

// TestFileOf is the test file of a workflow, next to it:
// workflows/gen2.star → workflows/gen2_test.star.
func TestFileOf(workflow string) string {
	return strings.TrimSuffix(workflow, ".star") + TestSuffix
}

// Untested returns the workflows among the workspace-relative files that
// have no test file next to them, in the order given.
func Untested(ws *builtins.Workspace, files []string) ([]string, error) {
	var out []string
	for _, f := range files {
		if !IsWorkflow(f) {
			continue
		}
		_, abs, err := ws.Resolve("", "//"+TestFileOf(f))
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(abs); os.IsNotExist(err) {
			out = append(out, f)
		} else if err != nil {
			return nil, fmt.Errorf("test of %s: %w", f, err)
		}
	}
	return out, nil
}

// UntestedWarning is the warning imgflow test and lint give for a
// workflow without a test file.
func UntestedWarning(workflow string) string {
	return fmt.Sprintf("%s has no test: add %s with %s and test_* functions (WORKFLOWS.md, \"Testing a workflow\")",
		workflow, TestFileOf(workflow), ExpectedOutputsVar)
}

// UntestedUnder is Untested for the workflows under paths (as Discover
// takes them).
func (r *Runner) UntestedUnder(paths []string) ([]string, error) {
	workflows, err := r.walk(paths, func(name string) bool { return strings.HasSuffix(name, ".star") })
	if err != nil {
		return nil, err
	}
	return Untested(r.Workspace, workflows)
}

// ExpectedOutputs loads the test file of the workspace-relative workflow
// and returns its EXPECTED_OUTPUTS. A test file without the list, or no
// test file, is an error that says what to write.
func (r *Runner) ExpectedOutputs(ctx context.Context, workflow string) ([]string, error) {
	file := TestFileOf(workflow)
	_, abs, err := r.Workspace.Resolve("", "//"+file)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("%s: %w; write it, with %s = [...] the outputs %s sets", file, err, ExpectedOutputsVar, workflow)
	}
	cfg := interp.Config{Workspace: r.Workspace, Registry: r.Registry, Reporter: r.Reporter}
	globals, failures := r.load(ctx, cfg, file)
	if len(failures) > 0 {
		return nil, fmt.Errorf("load %s: %s", file, strings.Join(failures, "\n"))
	}
	v, ok := globals[ExpectedOutputsVar]
	if !ok {
		return nil, fmt.Errorf("%s has no %s: add %s = [...] with the outputs %s sets when run with its defaults", file, ExpectedOutputsVar, ExpectedOutputsVar, workflow)
	}
	return outputNames(assignmentPos(abs, file, ExpectedOutputsVar), v)
}

// assignmentPos is "file:line" of the module-level assignment to name in
// the test file (abs its path), or file when it cannot be found.
func assignmentPos(abs, file, name string) string {
	f, err := interp.FileOptions().Parse(abs, nil, 0)
	if err != nil {
		return file
	}
	for _, stmt := range f.Stmts {
		if assign, ok := stmt.(*syntax.AssignStmt); ok {
			if id, ok := assign.LHS.(*syntax.Ident); ok && id.Name == name {
				return fmt.Sprintf("%s:%d", file, id.NamePos.Line)
			}
		}
	}
	return file
}

// outputNames checks that v, the EXPECTED_OUTPUTS assigned at pos, is a
// non-empty list (or tuple) of distinct strings.
func outputNames(file string, v starlark.Value) ([]string, error) {
	seq, ok := v.(starlark.Indexable)
	if _, isString := v.(starlark.String); !ok || isString {
		return nil, fmt.Errorf("%s: %s must be a list of output names, not a %s", file, ExpectedOutputsVar, v.Type())
	}
	seen := map[string]bool{}
	var names []string
	for i := 0; i < seq.Len(); i++ {
		s, ok := starlark.AsString(seq.Index(i))
		if !ok || s == "" {
			return nil, fmt.Errorf("%s: %s[%d] must be an output name (a non-empty string), not %s", file, ExpectedOutputsVar, i, seq.Index(i).String())
		}
		if seen[s] {
			return nil, fmt.Errorf("%s: %s names %q twice", file, ExpectedOutputsVar, s)
		}
		seen[s] = true
		names = append(names, s)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%s: %s is empty: name the outputs the workflow sets", file, ExpectedOutputsVar)
	}
	return names, nil
}
