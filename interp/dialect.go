package interp

import (
	"go.starlark.net/lib/json"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"

	"github.com/imgflow/imgflow/builtins"
)

// FileOptions is imgflow's Starlark dialect. Top-level if/for are allowed
// and sets are on; while loops, recursion and global reassignment are off,
// so every workflow terminates and replays deterministically.
func FileOptions() *syntax.FileOptions {
	return &syntax.FileOptions{
		Set:             true,
		TopLevelControl: true,
		While:           false,
		Recursion:       false,
		GlobalReassign:  false,
	}
}

// DefaultMaxSteps bounds every thread; a workflow is small, so hitting it
// means a runaway loop.
const DefaultMaxSteps = 10_000_000

// Predeclared is the environment of every workflow and library module:
// imgflow's builtins plus struct() and the json module.
func Predeclared(reg *builtins.Registry) starlark.StringDict {
	env := reg.Predeclared()
	env["struct"] = starlark.NewBuiltin("struct", starlarkstruct.Make)
	env["json"] = json.Module
	return env
}
