package journal

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Run statuses as `imgflow runs` shows them.
const (
	StatusRunning     = "running"
	StatusSucceeded   = "succeeded"
	StatusFailed      = "failed"
	StatusCancelled   = "cancelled"
	StatusInterrupted = "interrupted" // no end record and nobody holds it: the process died
	// StatusInvalid is a run refused by its validation pass before any
	// change: there is nothing to resume, the input must be fixed.
	StatusInvalid = "invalid"
	// StatusUnreadable is a journal that cannot be read (a read error):
	// listed with the reason, never resumed or cleaned up.
	StatusUnreadable = "unreadable"
	// StatusNotStarted is a journal whose only record, the run's header,
	// was torn (an incomplete last line, see NotStartedError): the run
	// had started nothing. Not resumable, run again; gc removes it.
	StatusNotStarted = "not-started"
	// StatusCorrupt is a journal with a line that cannot be trusted (see
	// CorruptError): listed with its file and line, never resumed or
	// cleaned up from, since what it registered is not known.
	StatusCorrupt = "corrupt"
	// StatusStopped is a run that ended at its --stop-at gate (gate()):
	// waiting for an approval; continuing it goes past the gate.
	StatusStopped = "stopped"
)

// Summary describes one run from its journal.
type Summary struct {
	RunID    string    `json:"run_id"`
	Workflow string    `json:"workflow"`
	Target   string    `json:"target"`
	Started  time.Time `json:"started"`
	Updated  time.Time `json:"updated"`
	Status   string    `json:"status"`
	Steps    int       `json:"steps"`
	Error    string    `json:"error,omitempty"`
	// Warning is set for a journal read unverified (records without
	// checksums, written by an older imgflow).
	Warning string `json:"warning,omitempty"`
	// Resumable is true for failed, cancelled, interrupted and stopped
	// runs, except a run cancelled while validating with no journaled steps.
	Resumable bool `json:"resumable"`
	// Outputs and Artifacts are those of the attempt that ended last
	// (none while it runs or when it died).
	Outputs   map[string]any `json:"outputs,omitempty"`
	Artifacts []Artifact     `json:"artifacts,omitempty"`
	// Attempts counts the run's attempts: 1, plus one per resume.
	Attempts int `json:"attempts"`
	// DurationMS is how long the attempts took together, each from its
	// start to its last record: the time between attempts (a re-queued
	// CI job waiting for an agent) does not count.
	DurationMS int64 `json:"duration_ms"`
}

// List summarises the runs journaled in location (a directory or an Azure
// container URL, see OpenStore), newest first.
func List(location string) ([]Summary, error) {
	s, err := OpenStore(location)
	if err != nil {
		return nil, err
	}
	return s.List(context.Background())
}

// listDir summarises the journal files in dir.
func listDir(dir string) ([]Summary, error) {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Summary
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		p, err := readFile(path)
		if err != nil || len(p.records) == 0 {
			out = append(out, unreadable(e.Name(), err))
			continue
		}
		out = append(out, summarize(p, held(path)))
	}
	sortSummaries(out)
	return out, nil
}

func sortSummaries(out []Summary) {
	sort.Slice(out, func(i, j int) bool { return out[i].Started.After(out[j].Started) })
}

// unreadable describes a journal named name whose records could not be
// read (err nil: it holds no complete record, its header was torn by a
// crash during its first write: StatusNotStarted; a CorruptError:
// StatusCorrupt).
func unreadable(name string, err error) Summary {
	id := strings.TrimSuffix(name, ".jsonl")
	switch {
	case err == nil:
		return Summary{RunID: id, Status: StatusNotStarted, Error: notStartedReason}
	case IsCorrupt(err):
		return Summary{RunID: id, Status: StatusCorrupt, Error: err.Error()}
	}
	return Summary{RunID: id, Status: StatusUnreadable, Error: err.Error()}
}

// UnverifiedWarning is why a journal without checksums is read as it is.
const UnverifiedWarning = "records without checksums (written by an imgflow from before journals had them): read unverified"

func summarize(p parsed, running bool) Summary {
	records := p.records
	h := records[0]
	s := Summary{RunID: h.RunID, Workflow: h.Workflow, Target: h.Target, Started: h.Time, Status: StatusInterrupted}
	if p.unverified {
		s.Warning = UnverifiedWarning
	}
	keys := map[string]bool{}
	var endPass string
	var attemptStart time.Time
	var took time.Duration
	for _, r := range records {
		switch r.Type {
		case TypeStep:
			if r.Step != nil {
				keys[r.Step.Key] = true
			}
		case TypeRun:
			s.Attempts++
			attemptStart = r.Time
		case TypeResume:
			s.Status, s.Error, endPass = StatusInterrupted, "", ""
			s.Outputs, s.Artifacts = nil, nil
			s.Attempts++
			took += s.Updated.Sub(attemptStart) // the attempt before ended at its last record
			attemptStart = r.Time
		case TypeEnd:
			s.Status, s.Error, endPass = r.Status, r.Error, r.Pass
			s.Outputs, s.Artifacts = r.Outputs, r.Artifacts
		}
		s.Updated = r.Time
	}
	s.DurationMS = (took + s.Updated.Sub(attemptStart)).Milliseconds()
	s.Steps = len(keys)
	if running {
		s.Status = StatusRunning
	}
	if s.Status == StatusInvalid && s.Steps > 0 {
		// A resumed attempt refused in validation: the steps of the
		// earlier attempts can still be resumed, with corrected input.
		s.Status = StatusFailed
	}
	s.Resumable = s.Status == StatusFailed || s.Status == StatusCancelled || s.Status == StatusInterrupted || s.Status == StatusStopped
	if s.Status == StatusCancelled && endPass == "validate" && s.Steps == 0 {
		s.Resumable = false // cancelled before any change: nothing to resume
	}
	return s
}

// held reports whether another process holds the journal's lock.
func held(path string) bool {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	return lock(f) != nil
}

// PendingCleanups are the cleanups the run registered that never ran (the
// run crashed, or its cleanups failed), in registration order.
func PendingCleanups(records []Record) []Cleanup {
	done := map[string]bool{}
	for _, r := range records {
		if r.Type == TypeCleanupDone {
			done[r.CleanupID] = true
		}
	}
	var out []Cleanup
	seen := map[string]bool{}
	add := func(c Cleanup) {
		if !done[c.ID] && !seen[c.ID] {
			seen[c.ID] = true
			out = append(out, c)
		}
	}
	for _, r := range records {
		switch {
		case r.Type == TypeCleanup && r.Cleanup != nil:
			add(*r.Cleanup)
		case r.Type == TypeStep && r.Step != nil:
			for _, c := range r.Step.Cleanups {
				add(c)
			}
		}
	}
	return out
}
