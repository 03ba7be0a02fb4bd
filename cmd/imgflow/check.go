package main

import (
	"context"
	"fmt"
	"os/exec"
	"strings"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/lint"
	"github.com/imgflow/imgflow/packer"
)

// cmdCheck parses and resolves a workflow and every module it loads, and
// lints them, without running anything. A lint-clean workflow is then
// planned on an empty in-memory target with each cell of vars it is known
// by (its params' defaults, the release jobs and the test file's named
// var sets that run it), every packer_build reached going through
// `packer validate` when packer is on PATH. Any finding, failed plan or
// rejected build makes it exit 1; what was validated and what was skipped
// is said, with why.
func cmdCheck(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet("check", e)
	var shared sharedFlags
	shared.addRoot(fs)
	warnings := fs.String("warnings", "default", "lint warning `categories`: +a,-b adjusts the defaults, a,b replaces them")
	noPackerValidate := fs.Bool("no-packer-validate", false, "do not run packer validate on the packer_build calls (it runs when packer is on PATH)")
	paths, err := parseFlags(fs, args)
	if err != nil {
		return flagError(err)
	}
	if len(paths) == 0 {
		return fmt.Errorf("check takes workflow files: imgflow check workflows/flatcar.star")
	}
	l, err := newLinter(shared.root, *warnings)
	if err != nil {
		return err
	}
	validator := checkValidator(*noPackerValidate)
	n := 0
	for _, p := range paths {
		rel, err := workspacePath(l.Workspace, p)
		if err != nil {
			return err
		}
		findings := l.Check(rel)
		for _, f := range findings {
			fmt.Fprintln(e.stdout, f)
		}
		n += len(findings)
		if len(findings) > 0 {
			continue
		}
		if !lint.IsWorkflow(rel) {
			fmt.Fprintf(e.stdout, "%s: ok (parsed, resolved, loads found, lint clean; nothing ran)\n", rel)
			continue
		}
		failed, planned, err := checkPlans(ctx, e, l.Workspace, rel, validator)
		if err != nil {
			return err
		}
		if failed > 0 {
			n += failed
			continue
		}
		fmt.Fprintf(e.stdout, "%s: ok (parsed, resolved, loads found, lint clean, %s; nothing ran)\n", rel, planned)
	}
	if n > 0 {
		return exitCode(1)
	}
	return nil
}

// checkValidator is the packer validator of check: the real packer, or
// one that only says why it is skipped.
func checkValidator(off bool) *seenValidator {
	switch {
	case off:
		return &seenValidator{skipped: "--no-packer-validate"}
	case !hasPacker():
		return &seenValidator{skipped: "packer is not on PATH (make deps installs packer 1.9.5 in .tools/bin)"}
	}
	return &seenValidator{v: builtins.PackerValidateOnce(&packer.Runner{})}
}

func hasPacker() bool {
	_, err := exec.LookPath("packer")
	return err == nil
}

// checkPlans plans each cell of the workflow rel, printing a line per
// failed cell and the packer validate notes; planned says what passed.
func checkPlans(ctx context.Context, e *env, ws *builtins.Workspace, rel string, v *seenValidator) (failed int, planned string, err error) {
	var ok []checkCell
	firstFailed := map[string]string{} // error message -> the first cell that failed with it
	for i, cell := range checkCells(ctx, ws, rel) {
		v.startCell(cell.name, i == 0)
		res, err := planCell(ctx, ws, rel, cell, v)
		if err != nil {
			return 0, "", err
		}
		for _, note := range v.takeNotes() {
			if !strings.Contains(note, "not repeated") {
				fmt.Fprintf(e.stdout, "%s [%s]: %s\n", rel, cell.name, note)
			}
		}
		switch {
		case res.NeedsVars:
			fmt.Fprintf(e.stdout, "%s [%s]: not planned: a param has no default\n  %s\n", rel, cell.name, indent(res.Err.Error(), "  "))
		case res.Err != nil:
			failed++
			msg := res.Err.Error()
			if first, ok := firstFailed[msg]; ok {
				fmt.Fprintf(e.stdout, "%s [%s]: plan failed as [%s] did\n", rel, cell.name, first)
				continue
			}
			firstFailed[msg] = cell.name
			fmt.Fprintf(e.stdout, "%s [%s]: plan failed:\n  %s\n", rel, cell.name, indent(msg, "  "))
		default:
			ok = append(ok, cell)
		}
	}
	return failed, describeCells(ok), nil
}

// describeCells says which cells were planned: "planned with the
// defaults, 20 jobs of releases/aks.star, 1 var set of x_test.star".
func describeCells(cells []checkCell) string {
	var parts []string
	count := map[string]int{}
	var sources []string
	for _, c := range cells {
		if c.source == "" {
			parts = append(parts, "the defaults")
			continue
		}
		if count[c.source] == 0 {
			sources = append(sources, c.source)
		}
		count[c.source]++
	}
	for _, src := range sources {
		what := "var set"
		if !strings.HasSuffix(src, "_test.star") {
			what = "job"
		}
		if count[src] > 1 {
			what += "s"
		}
		parts = append(parts, fmt.Sprintf("%d %s of %s", count[src], what, src))
	}
	if len(parts) == 0 {
		return "no plan ran"
	}
	return "planned with " + strings.Join(parts, ", ")
}
