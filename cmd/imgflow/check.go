package main

import (
	"fmt"
)

// cmdCheck parses and resolves a workflow and every module it loads, and
// lints them, without running anything.
func cmdCheck(e *env, args []string) error {
	fs := newFlagSet("check", e)
	root := fs.String("root", ".", "workspace root `dir`: load() paths resolve inside it")
	warnings := fs.String("warnings", "default", "lint warning `categories`: +a,-b adjusts the defaults, a,b replaces them")
	paths, err := parseFlags(fs, args)
	if err != nil {
		return flagError(err)
	}
	if len(paths) == 0 {
		return fmt.Errorf("check takes workflow files: imgflow check workflows/flatcar.star")
	}
	l, err := newLinter(*root, *warnings)
	if err != nil {
		return err
	}
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
