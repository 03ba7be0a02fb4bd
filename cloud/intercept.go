package cloud

import (
	"context"
	"errors"
)

// The methods of intercepted are generated from the Provider interface
// (cloud/internal/genintercept); a method added to Provider breaks the
// build here until go generate ./cloud/ runs again.
//go:generate go run ./internal/genintercept/cmd/genintercept

// Hooks run around every Provider operation of an intercepted provider,
// named by method ("CreateImageVersion"). Before may fail the call (it then
// does not reach the target); After may fail a call that succeeded.
type Hooks struct {
	Before func(ctx context.Context, op string) error
	After  func(ctx context.Context, op string) error
}

// ErrHalt, wrapped in a hook's error, stops the run where it is, as if
// the process had been killed: the operation before the hook happened,
// nothing after it does (no journal record, no cleanup), so a resume
// takes over from there. The run layers recognise it; only a hook a
// caller installs (tests, the test harness) returns it.
var ErrHalt = errors.New("run halted as if killed")

// Intercept wraps p so that hooks run around each of its operations. Tests
// use it for injected faults and simulated latency on any target.
func Intercept(p Provider, h Hooks) Provider { return &intercepted{p: p, h: h} }

type intercepted struct {
	p Provider
	h Hooks
}

var _ Provider = (*intercepted)(nil)

func (x *intercepted) before(ctx context.Context, op string) error {
	if x.h.Before == nil {
		return nil
	}
	return x.h.Before(ctx, op)
}

func (x *intercepted) after(ctx context.Context, op string) error {
	if x.h.After == nil {
		return nil
	}
	return x.h.After(ctx, op)
}
