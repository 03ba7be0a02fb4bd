// Package interp runs imgflow workflows: the Starlark dialect, the loader,
// threads with step limits and cancellation, error rendering with the
// workflow's file:line, and the two passes of a run (validation against a
// dry-run copy of the target, then the real one), so bad input is refused
// before anything is created.
package interp
