package main

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/fatih/color"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/interp/startest"
)

func cmdTest(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet("test", e)
	var shared sharedFlags
	shared.addRoot(fs)
	verbose := fs.Bool("v", false, "list every test, not only failures")
	junit := fs.String("junit", "", "also write the results as JUnit XML to `file` (for CI test reporters)")
	shared.addOutput(fs, false)
	paths, err := parseFlags(fs, args)
	if err != nil {
		return flagError(err)
	}
	asJSON, err := shared.jsonOutput(e)
	if err != nil {
		return err
	}
	ws, err := newWorkspace(shared.root)
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		paths = []string{"workflows/..."} // already workspace-relative
	} else {
		for i, p := range paths {
			if paths[i], err = workspacePathOrDir(ws, p); err != nil {
				return err
			}
		}
	}
	start := time.Now()
	r := startest.NewRunner(ws)
	files, err := r.Discover(paths)
	if err != nil {
		return err
	}
	if err := warnUntested(e, r, paths); err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no *_test.star files under %v", paths)
	}
	ok, bad, dim := e.paint(color.FgGreen), e.paint(color.FgRed, color.Bold), e.paint(color.Faint)
	passed, failed := 0, 0
	var all []startest.Result
	// Tests side by side, reported in file order: two per core, so that
	// one waiting on a command() (make) or a file leaves its core to
	// another. A command() fork of one test can briefly hold another's
	// journal lock; the journal waits for it (package filelock).
	for results := range r.RunFiles(ctx, files, 2*runtime.GOMAXPROCS(0)) {
		all = append(all, results...)
		if asJSON {
			continue
		}
		for _, res := range results {
			if res.Passed() {
				passed++
				if *verbose {
					fmt.Fprintf(e.stdout, "%s %s:%s %s\n", ok("PASS"), res.File, res.Name, dim(formatDuration(res.Duration)))
				}
				continue
			}
			failed++
			fmt.Fprintf(e.stdout, "%s %s:%s %s\n", bad("FAIL"), res.File, res.Name, dim(formatDuration(res.Duration)))
			for _, msg := range res.Failures {
				fmt.Fprintf(e.stdout, "    %s\n", indent(msg, "    "))
			}
		}
	}
	if *junit != "" {
		if err := writeJUnit(*junit, files, all, start); err != nil {
			return err
		}
	}
	if asJSON {
		report := makeTestReport(all)
		if err := writeJSON(e.stdout, report); err != nil {
			return err
		}
		passed, failed = report.Passed, report.Failed
	} else {
		fmt.Fprintf(e.stdout, "%d passed, %d failed\n", passed, failed)
	}
	if failed > 0 {
		return exitCode(1)
	}
	return nil
}

// warnUntested warns, on stderr, about each workflow under paths without
// a test file next to it; it is not a failure.
func warnUntested(e *env, r *startest.Runner, paths []string) error {
	untested, err := r.UntestedUnder(paths)
	if err != nil {
		return err
	}
	printUntested(e, untested)
	return nil
}

// printUntested prints the warning for each workflow without a test.
func printUntested(e *env, workflows []string) {
	for _, w := range workflows {
		fmt.Fprintf(e.stderr, "warning: %s\n", startest.UntestedWarning(w))
	}
}

// workspacePathOrDir makes a path argument workspace-relative, keeping a
// trailing "/..." pattern.
func workspacePathOrDir(ws *builtins.Workspace, p string) (string, error) {
	suffix := ""
	if len(p) >= 4 && p[len(p)-4:] == "/..." {
		p, suffix = p[:len(p)-4], "/..."
	}
	rel, err := workspacePath(ws, p)
	if err != nil {
		return "", err
	}
	return rel + suffix, nil
}

func indent(s, prefix string) string {
	out := ""
	for i, line := range splitLines(s) {
		if i > 0 {
			out += "\n" + prefix
		}
		out += line
	}
	return out
}

func splitLines(s string) []string {
	var lines []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			lines = append(lines, s[start:i])
			start = i + 1
		}
	}
	return append(lines, s[start:])
}
