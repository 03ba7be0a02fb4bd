package faults

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/imgflow/imgflow/cloud"
)

// ErrCrash simulates the process dying: the operation it follows was made,
// but nothing after it (journal, cleanups) happens. It wraps cloud.ErrHalt,
// the error by which the run layers know to stop so. Only tests inject it.
var ErrCrash = fmt.Errorf("injected crash: the process stops here: %w", cloud.ErrHalt)

// Fault makes a named builtin or provider operation fail, for tests.
type Fault struct {
	// StatusCode, Code and Message shape the injected *Error.
	StatusCode int
	Code       string
	Message    string
	// Skip lets the first Skip calls through (to hit the n-th call).
	Skip int
	// Times is how many calls fail after those; 0 means every call.
	Times int
	// Crash performs the operation, then stops the run as if the process
	// had died (see ErrCrash).
	Crash bool
}

// Faults is a set of faults by name (a builtin such as "image_version", or
// a Provider method such as "CreateImageVersion"), safe for concurrent use.
type Faults struct {
	mu     sync.Mutex
	faults map[string]*Fault
	fired  map[string]int
	seen   map[string]int
}

// NewFaults makes a fault set.
func NewFaults(m map[string]Fault) *Faults {
	f := &Faults{faults: map[string]*Fault{}, fired: map[string]int{}, seen: map[string]int{}}
	for name, fault := range m {
		fault := fault
		f.faults[name] = &fault
	}
	return f
}

// Before returns the injected error for a call of name, if any. A crash
// fault returns nil here: it fires After the operation.
func (f *Faults) Before(name string) error {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	fault, ok := f.faults[name]
	if !ok || fault.Crash || !f.take(name, fault) {
		return nil
	}
	status := fault.StatusCode
	if status == 0 {
		status = http.StatusInternalServerError
	}
	code := fault.Code
	if code == "" {
		code = "InjectedFault"
	}
	msg := fault.Message
	if msg == "" {
		msg = fmt.Sprintf("fault injected into %s", name)
	}
	return &cloud.Error{StatusCode: status, Code: code, Message: msg}
}

// After returns ErrCrash when a crash fault is set for name.
func (f *Faults) After(name string) error {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	fault, ok := f.faults[name]
	if !ok || !fault.Crash || !f.take(name, fault) {
		return nil
	}
	return fmt.Errorf("%s: %w", name, ErrCrash)
}

// take counts a firing; false once Times is used up.
func (f *Faults) take(name string, fault *Fault) bool {
	if f.seen[name]++; f.seen[name] <= fault.Skip {
		return false
	}
	if fault.Times > 0 && f.fired[name] >= fault.Times {
		return false
	}
	f.fired[name]++
	return true
}

// Fired reports how often the fault of name fired.
func (f *Faults) Fired(name string) int {
	if f == nil {
		return 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fired[name]
}

// WithFaults wraps p so that the Provider methods named in f fail (or
// crash after running) as the faults say.
func WithFaults(p cloud.Provider, f *Faults) cloud.Provider {
	return cloud.Intercept(p, cloud.Hooks{
		Before: func(_ context.Context, op string) error { return f.Before(op) },
		After:  func(_ context.Context, op string) error { return f.After(op) },
	})
}

// PipelineLatencies are the cloud latencies the pipeline benchmarks
// simulate (bench/pipeline, the release benchmarks), by operation, with
// "packer" for a build (localsim's Builder.Slow): a packer build
// dominates, then replication and copies, as in the real pipelines
// (about 60 min packer, 10–45 min replication, 10 min copy), scaled down.
func PipelineLatencies() map[string]time.Duration {
	return map[string]time.Duration{
		"packer":                     2000 * time.Millisecond,
		"CreateImageVersion":         800 * time.Millisecond,
		"UpdateImageVersion":         800 * time.Millisecond,
		"CopyBlob":                   400 * time.Millisecond,
		"UploadPageBlob":             300 * time.Millisecond,
		"CreateDiskFromImageVersion": 200 * time.Millisecond,
		"CreateManagedImage":         200 * time.Millisecond,
		"CreateGallery":              50 * time.Millisecond,
		"CreateImageDefinition":      50 * time.Millisecond,
		"CreateResourceGroup":        50 * time.Millisecond,
		"CreateStorageAccount":       50 * time.Millisecond,
	}
}

// WithLatency wraps p so that each named operation takes at least the given
// time, as a real cloud's would (benchmarks of pipeline concurrency).
func WithLatency(p cloud.Provider, latency map[string]time.Duration) cloud.Provider {
	return cloud.Intercept(p, cloud.Hooks{Before: func(ctx context.Context, op string) error {
		d, ok := latency[op]
		if !ok || d <= 0 {
			return nil
		}
		return cloud.Sleep(ctx, d)
	}})
}
