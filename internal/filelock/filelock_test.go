//go:build unix

package filelock

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func openLockFile(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	return f
}

func TestLockHeldByAnotherOpenFileFailsAfterWait(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	require.NoError(t, Lock(openLockFile(t, path), 0))

	start := time.Now()
	err := Lock(openLockFile(t, path), 100*time.Millisecond)
	require.ErrorIs(t, err, ErrLocked)
	require.GreaterOrEqual(t, time.Since(start), 50*time.Millisecond, "Lock gave up without waiting")
}

// A child that inherited the descriptor keeps the lock after the parent
// closes its file; Lock waits for the child to let go, as it does for the
// fork-to-exec window of a command() step.
func TestLockWaitsForAnInheritedDescriptor(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "lock")
	held, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	require.NoError(t, err)
	require.NoError(t, Lock(held, 0))
	child := exec.Command(sleep, "0.3")
	child.ExtraFiles = []*os.File{held} // the child shares the locked file
	require.NoError(t, child.Start())
	require.NoError(t, held.Close())

	require.ErrorIs(t, Lock(openLockFile(t, path), 0), ErrLocked, "the child should still hold the lock")
	require.NoError(t, Lock(openLockFile(t, path), DefaultWait), "Lock should succeed once the child exits")
	require.NoError(t, child.Wait())
}
