package journal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// notStartedReason is why a journal without a complete record is no run
// to resume: its header is the first record and is written before the
// run does anything, so a crash that tore it had started nothing. The
// header's workflow and vars are lost with it: the operator runs the
// workflow again.
const notStartedReason = "no complete record: the run's header was torn by a crash as the run started, before it did anything; nothing to resume or clean up: run the workflow again (imgflow gc removes this journal)"

// NotStartedError is a journal whose only content is a torn header (an
// incomplete last line, or one an append blob marked torn): the run had
// not started anything. It is not corruption (a checksum or a line in the
// middle that fails, CorruptError), which is never taken for this.
type NotStartedError struct {
	Path  string
	RunID string
}

func (e *NotStartedError) Error() string {
	return fmt.Sprintf("run %s had not started (journal %s: %s)", e.RunID, e.Path, notStartedReason)
}

// IsNotStarted reports whether err is, or wraps, a NotStartedError.
func IsNotStarted(err error) bool {
	var n *NotStartedError
	return errors.As(err, &n)
}

// Discarder is a Store that can remove the journal of a run that had not
// started (StatusNotStarted), which holds nothing to resume or clean.
type Discarder interface {
	DiscardNotStarted(ctx context.Context, runID string) error
}

// DiscardNotStarted implements Discarder: it removes the run's journal if
// it still holds no complete record and no process holds it, and any
// journal the process that created it left half-made (see createFile).
func (d Dir) DiscardNotStarted(_ context.Context, runID string) error {
	return discardNotStarted(string(d), runID)
}

// DiscardNotStarted implements Discarder.
func (d ScratchDir) DiscardNotStarted(_ context.Context, runID string) error {
	return discardNotStarted(string(d), runID)
}

func discardNotStarted(dir, runID string) error {
	path := Path(dir, runID)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	defer f.Close()
	if err := lock(f); err != nil {
		return fmt.Errorf("run %s is in use by another imgflow process (%v)", runID, err)
	}
	p, err := read(f, path, runID)
	if err != nil {
		return err
	}
	if len(p.records) > 0 {
		return fmt.Errorf("journal %s holds records now: not removed", path)
	}
	return os.Remove(path)
}

// SweepHalfMade removes, in a journal directory, the temporary files of
// journals whose creation a crash interrupted before the header was in
// place (see createFile) and that no process holds. It returns their
// names.
func SweepHalfMade(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		if e.IsDir() || !strings.HasPrefix(e.Name(), ".") || !strings.HasSuffix(e.Name(), halfMadeSuffix) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		info, err := e.Info()
		if err != nil || held(path) {
			continue // being created now: its creator holds the lock
		}
		if info.Size() == 0 && time.Since(info.ModTime()) < time.Minute {
			// Between CreateTemp and lock a new file is empty and not yet
			// held; once it holds a byte its creator has locked it, so an
			// unheld one with content is abandoned, whatever its age.
			continue
		}
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return removed, err
		}
		removed = append(removed, e.Name())
	}
	return removed, nil
}
