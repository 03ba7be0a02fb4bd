package journal

import "sync"

// Replayer serves a run's journaled steps back to a new attempt and records
// the steps it makes live. Lookups are by step key (builtin plus canonical
// arguments), so a changed workflow resumes as far as its calls are
// unchanged: once a call misses while journaled steps are left unused, the
// workflow has diverged and every later call runs live.
type Replayer struct {
	mu       sync.Mutex
	steps    map[string][]*Step
	unused   int
	diverged bool
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
		}
	}
	r.pending = PendingCleanups(records)
	return r
}

// Pending are the cleanups earlier attempts registered and never ran.
func (r *Replayer) Pending() []Cleanup { return r.pending }

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
		if r.unused > 0 {
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
