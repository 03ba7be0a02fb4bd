// Package journal keeps the record of a run that makes it resumable: the
// run's facts (id, time, workflow, vars), every builtin call that changed
// the cloud with its result, the cleanups registered and done, and how the
// run ended. It is JSON lines, appended and made durable record by record
// before the run moves on, so a crash at any point leaves it readable; a
// torn last record is ignored.
//
// A Store keeps the journals of a target's runs, each as RUN_ID.jsonl:
//
//   - Dir, a local directory (the state dir's runs/): each journal is a
//     file, fsynced after every record and locked with flock while a
//     process holds it.
//   - AzureStore, an Azure blob container (`--journal https://…`), so a CI
//     job can resume a run on another agent: each journal is an append
//     blob, one block per record, and a blob lease (renewed while open)
//     refuses a second process; see azblob.go.
//
// Create, Open and List take a location, either of the two: an http(s) URL
// is a container, anything else a directory.
package journal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
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
	// Pass is the pass the run ended in, validate or apply: a run
	// cancelled while validating changed nothing.
	Pass string `json:"pass,omitempty"`
	// Outputs and Artifacts are what the run published, secrets redacted,
	// so a summary across agents (imgflow runs --release) shows them.
	Outputs   map[string]any `json:"outputs,omitempty"`
	Artifacts []Artifact     `json:"artifacts,omitempty"`
}

// Artifact is a file the run wrote with artifact().
type Artifact struct {
	Name   string `json:"name"`
	Path   string `json:"path,omitempty"`
	Size   int    `json:"size"`
	SHA256 string `json:"sha256"`
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

// File is an open journal, held (locked or leased) by this process.
type File struct {
	path string // shown in messages: a file path, or a blob URL without its query

	mu      sync.Mutex
	w       writer
	records []Record
	// unverified: records written before journals had checksums.
	unverified bool
}

// writer is where a journal's records go: a locked file or a leased append
// blob. write makes one record (a JSON line) durable before returning.
type writer interface {
	write(line []byte) error
	close() error
}

// Path is the journal of a run in a runs directory.
func Path(dir, runID string) string { return filepath.Join(dir, runID+".jsonl") }

// Create starts the journal of a new run with its header in location, a
// directory or an Azure container URL (see OpenStore).
func Create(location string, header Record) (*File, error) {
	s, err := OpenStore(location)
	if err != nil {
		return nil, err
	}
	return s.Create(context.Background(), header)
}

// Open opens an existing journal in location (a directory or an Azure
// container URL) to resume its run. It fails when another process holds
// it.
func Open(location, runID string) (*File, error) {
	s, err := OpenStore(location)
	if err != nil {
		return nil, err
	}
	return s.Open(context.Background(), runID)
}

// fileWriter appends to a journal file, fsyncing each record unless the
// journal is scratch (see ScratchDir).
type fileWriter struct {
	f       *os.File
	noFsync bool
}

func (w fileWriter) write(line []byte) error {
	if _, err := w.f.Write(line); err != nil {
		return err
	}
	if w.noFsync {
		return nil
	}
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	return nil
}

func (w fileWriter) close() error { return w.f.Close() }

// halfMadeSuffix ends the name of a journal file being created.
const halfMadeSuffix = ".jsonl.new"

// createFile starts a journal file in dir. The header is written and
// synced in a temporary file that is then linked to the journal's name,
// so a crash never leaves a journal with a torn header: either there is
// no journal (nothing had started) or it has its complete header. A crash
// before the link leaves the temporary file, which gc sweeps.
func createFile(dir string, header Record, noFsync bool) (*File, error) {
	if header.RunID == "" {
		return nil, errors.New("journal: run id is empty")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	path := Path(dir, header.RunID)
	if _, err := os.Lstat(path); err == nil {
		return nil, fmt.Errorf("journal: create %s: %w", path, os.ErrExist)
	}
	f, err := os.CreateTemp(dir, "."+header.RunID+".*"+halfMadeSuffix)
	if err != nil {
		return nil, fmt.Errorf("journal: create %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // the journal is its link under path
	if err := lock(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	j := &File{path: path, w: fileWriter{f, noFsync}}
	header.Type = TypeRun
	if err := j.Append(header); err != nil {
		j.Close()
		return nil, err
	}
	// Link fails when path exists: a run id is never taken twice.
	if err := os.Link(tmp, path); err != nil {
		j.Close()
		return nil, fmt.Errorf("journal: create %s: %w", path, err)
	}
	if !noFsync {
		if err := syncDir(dir); err != nil {
			j.Close()
			return nil, fmt.Errorf("journal: create %s: %w", path, err)
		}
	}
	return j, nil
}

// syncDir makes the entries of dir durable (a journal's new name).
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}

// openFile opens a journal file in dir, locking it.
func openFile(dir, runID string, noFsync bool) (*File, error) {
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
	p, err := read(f, path, runID)
	if err != nil {
		f.Close()
		return nil, err
	}
	// Drop a torn tail so the next record starts on a line of its own.
	if err := f.Truncate(p.good); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	if _, err := f.Seek(p.good, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	if len(p.records) == 0 {
		f.Close()
		return nil, &NotStartedError{Path: path, RunID: runID}
	}
	return &File{path: path, w: fileWriter{f, noFsync}, records: p.records, unverified: p.unverified}, nil
}

// Read reads a journal without locking it (for listing runs). A corrupt
// line is a *CorruptError naming the file and line.
func Read(path string) ([]Record, error) {
	p, err := readFile(path)
	return p.records, err
}

func readFile(path string) (parsed, error) {
	f, err := os.Open(path)
	if err != nil {
		return parsed{}, err
	}
	defer f.Close()
	return read(f, path, strings.TrimSuffix(filepath.Base(path), ".jsonl"))
}

// Append writes a record and makes it durable (fsync, or an acknowledged
// append block) before returning.
func (j *File) Append(rec Record) error {
	if rec.Time.IsZero() {
		rec.Time = time.Now().UTC()
	}
	line, err := encode(rec)
	if err != nil {
		return fmt.Errorf("journal: encode %s record: %w", rec.Type, err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.w == nil {
		return fmt.Errorf("journal %s is closed", j.path)
	}
	if err := j.w.write(line); err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
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

// WriteCopy writes the records so far as the journal holds them to
// dir/RUN_ID.jsonl, creating dir: a CI job keeps it with its artifacts
// (imgflow runs --journal DIR reads it), while the journal itself stays
// where the next attempt resumes from. It returns the copy's path.
func (j *File) WriteCopy(dir string) (string, error) {
	records := j.Records()
	var b bytes.Buffer
	for _, rec := range records {
		line, err := encode(rec)
		if err != nil {
			return "", fmt.Errorf("journal copy: %w", err)
		}
		b.Write(line)
	}
	path := Path(dir, records[0].RunID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("journal copy: %w", err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return "", fmt.Errorf("journal copy: %w", err)
	}
	return path, nil
}

// Header is the run record.
func (j *File) Header() Record { return j.Records()[0] }

// Unverified reports whether the journal has records without checksums
// (written by an imgflow from before they had them): they were read as
// they are.
func (j *File) Unverified() bool { return j.unverified }

// Path is the journal's file, or its blob's URL without a query (never a
// SAS).
func (j *File) Path() string { return j.path }

// Close releases the journal (its lock, or its lease).
func (j *File) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.w == nil {
		return nil
	}
	err := j.w.close()
	j.w = nil
	if err != nil {
		return fmt.Errorf("journal %s: %w", j.path, err)
	}
	return nil
}
