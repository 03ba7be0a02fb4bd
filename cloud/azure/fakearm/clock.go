package fakearm

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/imgflow/imgflow/cloud"
)

// The fake's clock. ARM keeps throttling a client that retries before
// the Retry-After it was given has passed, and a Retry-After can be
// minutes long: with Options.Speedup the fake holds a throttle for
// RetryAfter/Speedup of real time, and Sleep is the matching clock for
// the client (azure.Options.Sleep), so that "Retry-After: 300" takes
// milliseconds in a test and a client that retried too early is caught.

// speedup is Options.Speedup, at least 1.
func (f *Fake) speedup() time.Duration { return time.Duration(max(1, f.opts.Speedup)) }

// Sleep waits d of the fake's time (d/Speedup of real time). Like
// cloud.Sleep, it fails at once with context.DeadlineExceeded when
// ctx would end first (on the real clock).
func (f *Fake) Sleep(ctx context.Context, d time.Duration) error {
	return cloud.Sleep(ctx, d/f.speedup())
}

// holdThrottle starts the Retry-After window of a fault that answered
// (under f.mu).
func (f *Fake) holdThrottle(fl *Fault) {
	if fl.RetryAfter > 0 {
		fl.until = time.Now().Add(fl.RetryAfter / f.speedup())
	}
}

// throttleHeld is the answer of a fault whose Retry-After has not passed
// yet: the same error with the time left, in the fake's time (under
// f.mu). It does not count against the fault's Times.
func (f *Fake) throttleHeld(fl *Fault) *Fault {
	left := time.Until(fl.until)
	if fl.RetryAfter <= 0 || left <= 0 {
		return nil
	}
	c := *fl
	c.RetryAfter = left * f.speedup()
	c.Message = "The request is being throttled: retried before the Retry-After passed. " + fl.Message
	return &c
}

// setPollRetryAfter sets the Retry-After of a long operation's answer
// (Options.PollRetryAfter): in whole seconds of the fake's clock, and in
// retry-after-ms of real time, which the SDK's poller reads first, so a
// client waits what the fake's clock says.
func (f *Fake) setPollRetryAfter(h http.Header) {
	d := f.opts.PollRetryAfter
	if d <= 0 {
		return
	}
	h.Set("Retry-After", fmt.Sprint(int((d+time.Second-1)/time.Second)))
	if f.speedup() > 1 {
		h.Set("retry-after-ms", fmt.Sprint(max(1, (d/f.speedup()).Milliseconds())))
	}
}
