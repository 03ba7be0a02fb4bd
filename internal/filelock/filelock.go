//go:build unix

// Package filelock takes the exclusive, non-blocking flock that marks a
// journal or a state directory as in use.
//
// flock locks belong to the open file description, and a fork copies the
// descriptor table: between fork and exec a child of this process (a
// command() step, packer) holds every descriptor the parent had, close-on-exec
// or not. A lock the parent released by closing its file is therefore
// still held until the child execs, usually well under a millisecond.
// Lock retries for a short, bounded time so that window does not look
// like another imgflow run.
package filelock

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// ErrLocked is returned when another open file holds the lock for longer
// than the wait.
var ErrLocked = errors.New("locked")

// DefaultWait covers a fork-to-exec window on a loaded machine; a run that
// really holds the lock holds it for minutes.
const DefaultWait = 2 * time.Second

// Lock takes an exclusive flock on f, retrying for up to wait. It does
// not take a context: the wait is bounded and involves no I/O.
func Lock(f *os.File, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	pause := time.Millisecond
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return err
		}
		if time.Now().Add(pause).After(deadline) {
			return ErrLocked
		}
		time.Sleep(pause)
		pause = min(2*pause, 50*time.Millisecond)
	}
}
