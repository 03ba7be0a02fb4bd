// Package builtins is imgflow's Starlark surface: every builtin a workflow
// can call, registered once with its spec (parameters, types, defaults,
// doc, example). The spec drives argument unpacking (starlark.UnpackArgs),
// type checks, recording of every call, and the generated reference
// (imgflow doc, WORKFLOWS.md).
//
// A builtin validates its arguments, then asks the run's cloud.Provider;
// it never talks to a cloud itself. Per-run state (provider, recorder,
// params, outputs, cleanup stack) travels in a thread local, see Run.
package builtins
