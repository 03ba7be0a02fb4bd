//go:build linux || darwin || freebsd

package memlimit

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// addressSpaceLimit is the process's RLIMIT_AS (ulimit -v), or 0 when
// there is none.
func addressSpaceLimit() uint64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &r); err != nil || r.Cur == ^uint64(0) {
		return 0
	}
	return uint64(r.Cur)
}

// addressSpaceUsed is the process's virtual size now (Linux's
// /proc/self/statm), or 0 where it cannot be read.
func addressSpaceUsed() uint64 {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(data))
	if len(fields) == 0 {
		return 0
	}
	pages, err := strconv.ParseUint(fields[0], 10, 64)
	if err != nil {
		return 0
	}
	return pages * uint64(os.Getpagesize())
}
