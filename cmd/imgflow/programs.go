package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/imgflow/imgflow/internal/cachetrim"
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
	return &interp.Programs{Dir: filepath.Join(dir, starlarkCache), Salt: salt}
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

// imgflow's caches, subdirectories of cacheDir. Nothing else there is
// theirs: IMGFLOW_CACHE_DIR may name a directory that holds more.
const (
	starlarkCache = "starlark"        // compiled Starlark modules
	sumsCache     = "sums"            // staged files' SHA-256
	validateCache = "packer-validate" // packer validate's verdicts
)

// trimCaches removes what the caches have not used for days, once a day
// at most (cachetrim); a failure only leaves them as they were.
func trimCaches(now time.Time) {
	if dir := cacheDir(); dir != "" {
		_ = cachetrim.Trim(dir, now, starlarkCache, sumsCache, validateCache)
	}
}
