package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/imgflow/imgflow/interp"
)

// newPrograms is the cache of compiled Starlark modules for one command:
// in memory (a release's jobs load the same libraries), and on disk in
// the user's cache directory when there is one, for the next command.
func newPrograms() *interp.Programs {
	dir := cacheDir()
	salt := binaryIdentity()
	if dir == "" || salt == "" {
		return &interp.Programs{}
	}
	return &interp.Programs{Dir: filepath.Join(dir, "starlark"), Salt: salt}
}

// binaryIdentity tells this imgflow binary from any other build: its
// path, size and modification time (a rebuilt or upgraded binary has
// another), read with one stat rather than hashing tens of MiB. "" when
// it cannot be known: nothing is then cached on disk.
func binaryIdentity() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	info, err := os.Stat(exe)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%s %d %d", exe, info.Size(), info.ModTime().UnixNano())
}
