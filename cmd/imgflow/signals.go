package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
)

// Cancellation. The first SIGINT or SIGTERM cancels the command's context:
// a run stops at its current line (or its current cloud call), runs its
// cleanups, journals itself as cancelled and exits with 128 + the signal's
// number (130 for SIGINT, 143 for SIGTERM), the status a shell or a CI
// runner reports for a process that signal stopped. A second signal is no
// longer caught, so it ends the process at once, cleanups or not; the
// journal then shows the run as interrupted, still resumable.

// signalError is the cause of a context cancelled by a signal.
type signalError struct{ sig syscall.Signal }

func (e *signalError) Error() string { return e.sig.String() + " signal received" }

// exitCode is the conventional exit status of a process stopped by the
// signal.
func (e *signalError) exitCode() int { return 128 + int(e.sig) }

// notifyContext returns a context cancelled with a *signalError by the
// first SIGINT or SIGTERM, and a stop function that releases the signals.
func notifyContext(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case s := <-signals:
			signal.Stop(signals) // the next signal takes its default action
			sig, _ := s.(syscall.Signal)
			cancel(&signalError{sig: sig})
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(signals)
		cancel(nil)
	}
}

// cancelledBy returns the signal error that cancelled ctx, or nil when ctx
// is live or was cancelled for another reason (such as the memory budget).
func cancelledBy(ctx context.Context) *signalError {
	var sig *signalError
	if errors.As(context.Cause(ctx), &sig) {
		return sig
	}
	return nil
}
