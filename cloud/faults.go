package cloud

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
)

// ErrCrash simulates the process dying: the operation it follows was made,
// but nothing after it (journal, cleanups) happens. Only tests inject it.
var ErrCrash = errors.New("injected crash: the process stops here")

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
	return &Error{StatusCode: status, Code: code, Message: msg}
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
