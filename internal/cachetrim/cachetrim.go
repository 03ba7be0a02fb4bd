// Package cachetrim bounds imgflow's caches in the user's cache directory
// the way Go bounds its build cache: an entry unused for MaxAge is
// removed by a trim that runs at most once per Interval, and a reader
// marks an entry used by moving its modification time forward (at most
// once an hour, so a hit rarely writes). Without it the caches only grow:
// each new imgflow binary compiles its Starlark anew, and each rebuilt
// build tool leaves the sum of the old one.
package cachetrim

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

const (
	// MaxAge is how long an entry may go unused before a trim removes it.
	MaxAge = 5 * 24 * time.Hour
	// Interval is how often a cache directory is trimmed at most.
	Interval = 24 * time.Hour
	// usedEvery is how stale a used entry's time may get before Used
	// writes it again.
	usedEvery = time.Hour
	// stampName holds the Unix time of the directory's last trim.
	stampName = "trim.txt"
)

// Used marks the entry f (open for reading) used at now. It is best
// effort: an entry whose time cannot be moved is at worst computed again
// after a trim.
func Used(f *os.File, now time.Time) {
	info, err := f.Stat()
	if err != nil || now.Sub(info.ModTime()) < usedEvery {
		return
	}
	_ = os.Chtimes(f.Name(), now, now)
}

// Trim removes the entries of the caches named (subdirectories of dir)
// that were unused for MaxAge, unless dir was trimmed less than Interval
// before now. Only regular files directly in those subdirectories are
// removed: dir may be one the user named (IMGFLOW_CACHE_DIR), and nothing
// else in it is the caches'. A missing dir is left missing.
func Trim(dir string, now time.Time, caches ...string) error {
	stamp := filepath.Join(dir, stampName)
	if _, err := os.Stat(dir); err != nil {
		return nil
	}
	if data, err := os.ReadFile(stamp); err == nil {
		if last, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64); err == nil && now.Sub(time.Unix(last, 0)) < Interval {
			return nil
		}
	}
	// Stamped first: the processes that end meanwhile do not trim too.
	if err := os.WriteFile(stamp, []byte(strconv.FormatInt(now.Unix(), 10)+"\n"), 0o600); err != nil {
		return err
	}
	cutoff := now.Add(-MaxAge)
	for _, name := range caches {
		entries, err := os.ReadDir(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		for _, e := range entries {
			if !e.Type().IsRegular() {
				continue
			}
			info, err := e.Info()
			if err == nil && info.ModTime().Before(cutoff) {
				_ = os.Remove(filepath.Join(dir, name, e.Name()))
			}
		}
	}
	return nil
}
