//go:build unix

package local

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/imgflow/imgflow/internal/filelock"
)

// lockDir takes an exclusive flock on dir/lock. flock locks belong to the
// open file, so a second Open fails even in the same process, and the
// kernel drops the lock if imgflow dies. It waits briefly for a lock a
// forked child inherited (see package filelock).
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open state lock: %w", err)
	}
	if err := filelock.Lock(f, filelock.DefaultWait); err != nil {
		f.Close()
		if errors.Is(err, filelock.ErrLocked) {
			return nil, fmt.Errorf("state directory %s is in use by another imgflow run", dir)
		}
		return nil, fmt.Errorf("lock state directory %s: %w", dir, err)
	}
	return f, nil
}

func unlockDir(f *os.File) error {
	// Closing the file releases the flock.
	return f.Close()
}
