package main

import (
	"context"
	"fmt"

	"github.com/imgflow/imgflow/lint"
)

// cmdCheck parses and resolves a workflow and every module it loads, and
// lints them, without running anything. When packer is on PATH, a lint-clean
// workflow is also planned with its params' defaults on an empty in-memory
// target, and every packer_build reached goes through `packer validate`.
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
	validator := packerValidator(*noPackerValidate)
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
		if len(findings) == 0 && validator != nil && lint.IsWorkflow(rel) {
			pc, err := checkPackerBuilds(ctx, l.Workspace, rel, validator)
			if err != nil {
				return err
			}
			for _, note := range pc.Notes {
				fmt.Fprintf(e.stdout, "%s: %s\n", rel, note)
			}
			if pc.Rejected != "" {
				fmt.Fprintln(e.stdout, pc.Rejected)
				n++
				continue
			}
		}
		if len(findings) == 0 {
			fmt.Fprintf(e.stdout, "%s: ok (parsed, resolved, loads found, lint clean; nothing ran)\n", rel)
		}
		n += len(findings)
	}
	if n > 0 {
		return exitCode(1)
	}
	return nil
}
