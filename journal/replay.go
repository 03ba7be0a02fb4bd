package journal

import (
	"strings"
	"sync"
)

// Replayer serves a run's journaled steps back to a new attempt and records
// the steps it makes live. Lookups are by step key (builtin plus canonical
// arguments), so a changed workflow resumes as far as its calls are
// unchanged: once a call misses while journaled steps are left unused, the
// workflow has diverged and every later call runs live. A run that stopped
// at a gate (StatusStopped) never diverges: every branch journaled its steps
// up to the gate, and a miss is a call past it, made while other parallel()
// branches still replay theirs.
type Replayer struct {
	mu       sync.Mutex
	steps    map[string][]*Step
	unused   int
	diverged bool
	// pastGate: an attempt stopped at a gate (see above).
	pastGate bool
	done     map[string]bool
	pending  []Cleanup
	sink     *File
}

// NewReplayer builds a replayer from a journal's records. sink receives
// new records; nil makes the replayer read-only (for the validation pass).
func NewReplayer(records []Record, sink *File) *Replayer {
	r := &Replayer{steps: map[string][]*Step{}, done: map[string]bool{}, sink: sink}
	occurrence := map[string]int{}
	for _, rec := range records {
		switch rec.Type {
		case TypeRun, TypeResume:
			occurrence = map[string]int{} // a later attempt supersedes by occurrence
		case TypeStep:
			if rec.Step == nil {
				continue
			}
			k := rec.Step.Key
			i := occurrence[k]
			occurrence[k]++
			if i < len(r.steps[k]) {
				r.steps[k][i] = rec.Step
			} else {
				r.steps[k] = append(r.steps[k], rec.Step)
				r.unused++
			}
		case TypeCleanupDone:
			r.done[rec.CleanupID] = true
		case TypeEnd:
			r.pastGate = r.pastGate || rec.Status == StatusStopped
		}
	}
	r.pending = PendingCleanups(records)
	r.forgetCleanedUp(records)
	return r
}

// forgetCleanedUp drops the steps whose results name a resource a cleanup
// of an unfinished run has since deleted (a staging image deleted when a
// Ctrl-C'd run ran its cleanups): replayed, they would hand the workflow
// a resource that is gone. The call runs live instead, making it again;
// as builtins ensure, a match that is not the deleted resource only finds
// what exists. Only a run that stopped early (its last attempt ended
// failed or cancelled) is concerned: one that succeeded, or died in its
// final cleanups, finished its workflow, and replaying it changes nothing.
func (r *Replayer) forgetCleanedUp(records []Record) {
	if len(r.done) == 0 || !stoppedEarly(records) {
		return
	}
	registered := map[string]Cleanup{}
	for _, rec := range records {
		switch {
		case rec.Type == TypeCleanup && rec.Cleanup != nil:
			registered[rec.Cleanup.ID] = *rec.Cleanup
		case rec.Type == TypeStep && rec.Step != nil:
			for _, c := range rec.Step.Cleanups {
				registered[c.ID] = c
			}
		}
	}
	var names []string
	for id := range r.done {
		for _, k := range []string{"name", "version"} {
			if v, ok := registered[id].Args[k].(string); ok && v != "" {
				names = append(names, `"`+v+`"`)
			}
		}
	}
	for key, q := range r.steps {
		kept := q[:0]
		for _, s := range q {
			if namesAny(string(s.Result), names) {
				r.unused--
				continue
			}
			kept = append(kept, s)
		}
		r.steps[key] = kept
	}
}

func namesAny(result string, quoted []string) bool {
	for _, n := range quoted {
		if strings.Contains(result, n) {
			return true
		}
	}
	return false
}

// stoppedEarly reports whether the run's last attempt ended failed or
// cancelled.
func stoppedEarly(records []Record) bool {
	stopped := false
	for _, rec := range records {
		switch rec.Type {
		case TypeRun, TypeResume:
			stopped = false
		case TypeEnd:
			stopped = rec.Status == StatusFailed || rec.Status == StatusCancelled
		}
	}
	return stopped
}

// Pending are the cleanups earlier attempts registered and never ran.
func (r *Replayer) Pending() []Cleanup { return r.pending }

// PastGate reports whether an earlier attempt stopped at a gate: every
// call before the gate is journaled, so one that is not was changed.
func (r *Replayer) PastGate() bool { return r.pastGate }

// RecordCleanup journals a cleanup the moment it is registered.
func (r *Replayer) RecordCleanup(c Cleanup) error {
	if r.sink == nil {
		return nil
	}
	return r.sink.Append(Record{Type: TypeCleanup, Cleanup: &c})
}

// Lookup returns the journaled step for key, consuming it.
func (r *Replayer) Lookup(key string) (*Step, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.diverged {
		return nil, false
	}
	q := r.steps[key]
	if len(q) == 0 {
		if r.unused > 0 && !r.pastGate {
			r.diverged = true
		}
		return nil, false
	}
	r.steps[key] = q[1:]
	r.unused--
	return q[0], true
}

// RecordStep appends a step made live.
func (r *Replayer) RecordStep(s Step) error {
	if r.sink == nil {
		return nil
	}
	return r.sink.Append(Record{Type: TypeStep, Step: &s})
}

// CleanupDone reports whether the cleanup ran in an earlier attempt.
func (r *Replayer) CleanupDone(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done[id]
}

// RecordCleanupDone notes that a cleanup ran.
func (r *Replayer) RecordCleanupDone(id string) error {
	r.mu.Lock()
	r.done[id] = true
	r.mu.Unlock()
	if r.sink == nil {
		return nil
	}
	return r.sink.Append(Record{Type: TypeCleanupDone, CleanupID: id})
}
