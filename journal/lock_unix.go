//go:build unix

package journal

import (
	"os"

	"github.com/imgflow/imgflow/internal/filelock"
)

// lock takes an exclusive lock on the journal; it is released when the
// file is closed or the process dies. It waits briefly for a lock a
// forked child inherited (see package filelock).
func lock(f *os.File) error {
	return filelock.Lock(f, filelock.DefaultWait)
}
