package builtins

import "context"

// CallHooks run around each builtin call of the apply pass that is not
// replayed from the journal, with the builtin's name and its step. Before
// may fail the call (the builtin then does not run); After may fail a call
// that succeeded, before the journal records it. An error wrapping
// cloud.ErrHalt stops the run as if the process had been killed. The
// caller that builds the run installs them: production runs leave them
// unset; tests inject faults (builtins/faulthook).
type CallHooks struct {
	Before func(ctx context.Context, builtin string, step *Step) error
	After  func(ctx context.Context, builtin string, step *Step) error
}

func (h CallHooks) before(ctx context.Context, builtin string, step *Step) error {
	if h.Before == nil {
		return nil
	}
	return h.Before(ctx, builtin, step)
}

func (h CallHooks) after(ctx context.Context, builtin string, step *Step) error {
	if h.After == nil {
		return nil
	}
	return h.After(ctx, builtin, step)
}
