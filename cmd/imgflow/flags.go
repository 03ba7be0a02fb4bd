package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"go.starlark.net/starlark"

	"github.com/imgflow/imgflow/builtins"
)

// parseFlags parses flags that may come before or after the positional
// arguments (imgflow run FILE --var k=v), returning the positionals.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// flagError ends a command whose flags did not parse (the flag package
// printed why): -h is a success, anything else a usage error.
func flagError(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return exitCode(2)
}

func newFlagSet(name string, e *env) *flag.FlagSet {
	fs := flag.NewFlagSet("imgflow "+name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	return fs
}

// varsFlag collects repeated --var name=value.
type varsFlag map[string]string

func (v varsFlag) String() string { return "" }

func (v varsFlag) Set(s string) error {
	name, value, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return fmt.Errorf("want name=value, got %q", s)
	}
	if _, dup := v[name]; dup {
		return fmt.Errorf("--var %s given twice", name)
	}
	v[name] = value
	return nil
}

// loadVars merges a JSON vars file (typed values) with --var strings; a
// --var wins over the file.
func loadVars(file string, vars varsFlag) (map[string]starlark.Value, error) {
	out := map[string]starlark.Value{}
	if file != "" {
		f, err := os.Open(file)
		if err != nil {
			return nil, fmt.Errorf("vars file: %w", err)
		}
		defer f.Close()
		var m map[string]any
		dec := json.NewDecoder(io.LimitReader(f, 16<<20))
		if err := dec.Decode(&m); err != nil {
			return nil, fmt.Errorf("vars file %s: want a JSON object of param values: %w", file, err)
		}
		for k, v := range m {
			out[k] = builtins.FromGo(v)
		}
	}
	for k, v := range vars {
		out[k] = starlark.String(v)
	}
	return out, nil
}
