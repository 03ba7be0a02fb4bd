package main

import (
	"bytes"
	"fmt"
	"os"

	"github.com/bazelbuild/buildtools/build"

	"github.com/imgflow/imgflow/lint"
)

// defaultStarDirs are what fmt and lint look at without paths.
var defaultStarDirs = []string{"workflows", "lib"}

// cmdFmt formats .star files exactly as `buildifier --type=default` does
// (buildtools' build.ParseDefault and build.Format).
func cmdFmt(e *env, args []string) error {
	fs := newFlagSet("fmt", e)
	check := fs.Bool("check", false, "change nothing: list the files that are not formatted and exit 1 if any")
	paths, err := parseFlags(fs, args)
	if err != nil {
		return flagError(err)
	}
	files, err := starFiles(paths)
	if err != nil {
		return err
	}
	bad := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		formatted, err := formatStar(file, data)
		if err != nil {
			fmt.Fprintln(e.stderr, err)
			bad++
			continue
		}
		if bytes.Equal(data, formatted) {
			continue
		}
		if *check {
			fmt.Fprintf(e.stdout, "%s:%d: not formatted from this line on (run: imgflow fmt %s)\n", file, firstDifference(data, formatted), file)
			bad++
			continue
		}
		info, err := os.Stat(file)
		if err != nil {
			return err
		}
		if err := os.WriteFile(file, formatted, info.Mode().Perm()); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "formatted %s\n", file)
	}
	if bad > 0 {
		return exitCode(1)
	}
	return nil
}

// formatStar is buildifier's formatting of a generic Starlark file. A
// parse error reads file:line:col: message.
func formatStar(file string, data []byte) ([]byte, error) {
	f, err := build.ParseDefault(file, data)
	if err != nil {
		return nil, err
	}
	return build.Format(f), nil
}

// starFiles lists the .star files under paths (default: workflows and lib,
// those of them that exist).
func starFiles(paths []string) ([]string, error) {
	if len(paths) == 0 {
		for _, d := range defaultStarDirs {
			if _, err := os.Stat(d); err == nil {
				paths = append(paths, d)
			}
		}
		if len(paths) == 0 {
			return nil, fmt.Errorf("no workflows/ or lib/ here: name the .star files or directories")
		}
	}
	files, err := lint.StarFiles(paths)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no .star files in %v", paths)
	}
	return files, nil
}

// firstDifference is the first line where a and b differ (1-based).
func firstDifference(a, b []byte) int {
	line := 1
	for i := 0; i < len(a) && i < len(b) && a[i] == b[i]; i++ {
		if a[i] == '\n' {
			line++
		}
	}
	return line
}
