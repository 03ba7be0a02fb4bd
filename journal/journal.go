// Package journal keeps the record of a run that makes it resumable: the
// run's facts (id, time, workflow, vars), every builtin call that changed
// the cloud with its result, the cleanups registered and done, and how the
// run ended. It is a JSON-lines file appended and fsynced record by record,
// so a crash at any point leaves it readable; a torn last record is
// ignored. A file lock refuses a second run on the same journal.
package journal

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Record types.
const (
	TypeRun         = "run"
	TypeResume      = "resume"
	TypeStep        = "step"
	TypeCleanup     = "cleanup"
	TypeCleanupDone = "cleanup_done"
	TypeEnd         = "end"
)

// Record is one line of a journal.
type Record struct {
	Type string    `json:"type"`
	Time time.Time `json:"time"`

	// run
	RunID    string         `json:"run_id,omitempty"`
	RunTime  *time.Time     `json:"run_time,omitempty"`
	Workflow string         `json:"workflow,omitempty"`
	Target   string         `json:"target,omitempty"`
	Vars     map[string]any `json:"vars,omitempty"`

	// step
	Step *Step `json:"step,omitempty"`

	// cleanup: registered the moment the temporary resource exists, so
	// a crash inside the step that made it still leaves its cleanup here.
	Cleanup *Cleanup `json:"cleanup,omitempty"`

	// cleanup_done
	CleanupID string `json:"cleanup_id,omitempty"`

	// end: succeeded, failed, cancelled
	Status string `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`
}

// Step is a journaled builtin call.
type Step struct {
	Key     string         `json:"key"`
	Builtin string         `json:"builtin"`
	Pos     string         `json:"pos"`
	Args    map[string]any `json:"args"`
	// Result is the encoded Starlark value the call returned.
	Result   json.RawMessage `json:"result"`
	Outcome  string          `json:"outcome,omitempty"`
	Cleanups []Cleanup       `json:"cleanups,omitempty"`
}

// Cleanup is a cleanup a step registered, enough to run it on resume.
type Cleanup struct {
	ID   string         `json:"id"`
	Kind string         `json:"kind"`
	Name string         `json:"name"`
	Pos  string         `json:"pos"`
	Args map[string]any `json:"args"`
}

// File is an open journal, locked for this process.
type File struct {
	path string

	mu      sync.Mutex
	f       *os.File
	records []Record
}

// Path is the journal of a run in a runs directory.
func Path(dir, runID string) string { return filepath.Join(dir, runID+".jsonl") }

// Create starts the journal of a new run with its header.
func Create(dir string, header Record) (*File, error) {
	if header.RunID == "" {
		return nil, errors.New("journal: run id is empty")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	path := Path(dir, header.RunID)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("journal: create %s: %w", path, err)
	}
	if err := lock(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	j := &File{path: path, f: f}
	header.Type = TypeRun
	if err := j.Append(header); err != nil {
		j.Close()
		return nil, err
	}
	return j, nil
}

// Open opens an existing journal to resume its run. It fails when another
// process holds it.
func Open(dir, runID string) (*File, error) {
	path := Path(dir, runID)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("no run %s: `imgflow runs` lists the runs that can be resumed", runID)
		}
		return nil, fmt.Errorf("journal: %w", err)
	}
	if err := lock(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("run %s is in use by another imgflow process (%v): wait for it, or stop it", runID, err)
	}
	records, good, err := read(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	// Drop a torn tail so the next record starts on a line of its own.
	if err := f.Truncate(good); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	if len(records) == 0 || records[0].Type != TypeRun {
		f.Close()
		return nil, fmt.Errorf("journal %s has no run header", path)
	}
	return &File{path: path, f: f, records: records}, nil
}

// Read reads a journal without locking it (for listing runs).
func Read(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	records, _, err := read(f)
	return records, err
}

// read parses records up to the last complete, valid line and returns the
// offset just after it.
func read(r io.Reader) ([]Record, int64, error) {
	br := bufio.NewReader(r)
	var records []Record
	var good int64
	for {
		line, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, 0, err
		}
		if len(line) == 0 || line[len(line)-1] != '\n' {
			return records, good, nil // EOF, or a torn last line
		}
		var rec Record
		if jerr := json.Unmarshal(bytes.TrimSpace(line), &rec); jerr != nil {
			return records, good, nil // a torn or corrupt tail: ignore it
		}
		records = append(records, rec)
		good += int64(len(line))
		if err != nil {
			return records, good, nil
		}
	}
}

// Append writes a record and syncs it to disk before returning.
func (j *File) Append(rec Record) error {
	if rec.Time.IsZero() {
		rec.Time = time.Now().UTC()
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("journal: encode %s record: %w", rec.Type, err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, err := j.f.Write(append(data, '\n')); err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("journal %s: sync: %w", j.path, err)
	}
	j.records = append(j.records, rec)
	return nil
}

// Records returns the records read or written so far.
func (j *File) Records() []Record {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]Record(nil), j.records...)
}

// Header is the run record.
func (j *File) Header() Record { return j.Records()[0] }

// Path is the journal's file.
func (j *File) Path() string { return j.path }

// Close releases the journal.
func (j *File) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	err := j.f.Close()
	j.f = nil
	return err
}
