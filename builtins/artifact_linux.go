package builtins

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// writeUnnamed writes data to an unnamed file in dir (O_TMPFILE) and then
// links it as path: until the link the file has no name, so a kill leaves
// nothing. done is false when dir's file system has no unnamed files or
// /proc is missing (the caller then writes another way).
func writeUnnamed(dir, path string, data []byte, beforeLink func()) (done bool, err error) {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return false, nil
	}
	f := os.NewFile(uintptr(fd), path)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return true, err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return true, err
	}
	if beforeLink != nil {
		beforeLink()
	}
	defer f.Close()
	err = unix.Linkat(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", f.Fd()), unix.AT_FDCWD, path, unix.AT_SYMLINK_FOLLOW)
	if err == unix.ENOENT {
		if _, serr := os.Stat("/proc/self/fd"); serr != nil {
			return false, nil // no /proc: nothing was named
		}
	}
	if err != nil {
		return true, fmt.Errorf("link %s: %w", path, err)
	}
	return true, nil
}
