package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bazelbuild/buildtools/warn"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/interp/startest"
	"github.com/imgflow/imgflow/lint"
)

// cmdLint reports buildifier's warnings and imgflow's own checks, one
// file:line:col: category: message per finding; exit 1 when any.
func cmdLint(e *env, args []string) error {
	fs := newFlagSet("lint", e)
	var shared sharedFlags
	shared.addRoot(fs)
	warnings := fs.String("warnings", "default", "warning `categories`: +a,-b adjusts the defaults, a,b replaces them")
	list := fs.Bool("list-warnings", false, "list the warning categories (* marks the defaults) and exit")
	paths, err := parseFlags(fs, args)
	if err != nil {
		return flagError(err)
	}
	if *list {
		printWarnings(e)
		return nil
	}
	l, err := newLinter(shared.root, *warnings)
	if err != nil {
		return err
	}
	files, err := starFiles(paths)
	if err != nil {
		return err
	}
	n := 0
	rels := make([]string, 0, len(files))
	for _, file := range files {
		rel, err := workspacePath(l.Workspace, file)
		if err != nil {
			return err
		}
		rels = append(rels, rel)
		for _, f := range l.File(rel) {
			fmt.Fprintln(e.stdout, f)
			n++
		}
	}
	// A workflow without tests is worth a warning, not a failed lint.
	untested, err := startest.Untested(l.Workspace, rels)
	if err != nil {
		return err
	}
	printUntested(e, untested)
	if n > 0 {
		fmt.Fprintf(e.stderr, "%d finding(s) in %d file(s) checked\n", n, len(files))
		return exitCode(1)
	}
	return nil
}

func newLinter(root, warnings string) (*lint.Linter, error) {
	ws, err := newWorkspace(root)
	if err != nil {
		return nil, err
	}
	enabled, err := lint.ParseWarnings(warnings)
	if err != nil {
		return nil, fmt.Errorf("--warnings: %w", err)
	}
	l := lint.New(ws, builtins.NewRegistry())
	l.Warnings = enabled
	return l, nil
}

func printWarnings(e *env) {
	defaults := map[string]bool{}
	for _, w := range lint.DefaultWarnings() {
		defaults[w] = true
	}
	fmt.Fprintln(e.stdout, "imgflow:")
	for _, w := range append(slices.Clone(lint.ImgflowWarnings), lint.OptionalWarnings...) {
		fmt.Fprintf(e.stdout, "  %s %s\n", mark(defaults[w]), w)
	}
	fmt.Fprintln(e.stdout, "buildifier (https://github.com/bazelbuild/buildtools/blob/main/WARNINGS.md):")
	for _, w := range lintBuildifierWarnings() {
		fmt.Fprintf(e.stdout, "  %s %s\n", mark(defaults[w]), w)
	}
}

func mark(on bool) string {
	if on {
		return "*"
	}
	return " "
}

// lintBuildifierWarnings is every buildifier warning, sorted.
func lintBuildifierWarnings() []string {
	var out []string
	for _, w := range warn.AllWarnings {
		if !strings.HasPrefix(w, "native-") { // Bazel rule migrations only
			out = append(out, w)
		}
	}
	return out
}
