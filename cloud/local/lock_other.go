//go:build !unix

package local

import (
	"fmt"
	"os"
	"path/filepath"
)

// lockDir creates dir/lock exclusively where flock is not available. A
// crashed run leaves the file behind; the message says how to recover.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, "lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o644)
	if os.IsExist(err) {
		return nil, fmt.Errorf("state directory %s is in use by another imgflow run (remove %s if no run is active)", dir, path)
	}
	if err != nil {
		return nil, fmt.Errorf("lock state directory %s: %w", dir, err)
	}
	return f, nil
}

func unlockDir(f *os.File) error {
	name := f.Name()
	err := f.Close()
	if rmErr := os.Remove(name); err == nil {
		err = rmErr
	}
	return err
}
