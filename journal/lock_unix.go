//go:build unix

package journal

import (
	"errors"
	"os"
	"syscall"
)

// lock takes an exclusive, non-blocking lock on the journal; it is
// released when the file is closed or the process dies.
func lock(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errors.New("locked")
	}
	return err
}
