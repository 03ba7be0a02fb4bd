// Package memlimit bounds the memory a run may take. A workflow is a
// program: a loop that builds ever larger lists would otherwise grow until
// the Go runtime dies with an out-of-memory dump, or the machine swaps.
// The budget is checked every tick, and exceeding it cancels the run's
// context with an error that names the limit, so the Starlark threads
// stop at their current line.
package memlimit

import (
	"context"
	"fmt"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"
)

// Default is the budget of a run when none is given.
const Default = 1 << 30

// Tick is how often the heap is measured.
const Tick = 50 * time.Millisecond

// ExceededError is the cause of a context cancelled for memory.
type ExceededError struct {
	Limit, Used uint64
	// Flag is how the user raises the limit, e.g. "--max-memory".
	Flag string
	// AddressSpace is the address-space limit that lowered the budget
	// below Flag's (Effective), or 0.
	AddressSpace uint64
}

func (e *ExceededError) Error() string {
	if e.AddressSpace != 0 {
		return fmt.Sprintf("memory budget exceeded: the run holds %s, more than its limit of %s (a third of what the process's address-space limit, ulimit -v %s, left free): a loop may be building ever larger values (raise ulimit -v only if the workflow really needs it)",
			Format(e.Used), Format(e.Limit), Format(e.AddressSpace))
	}
	return fmt.Sprintf("memory budget exceeded: the run holds %s, more than its limit of %s: a loop may be building ever larger values (raise %s only if the workflow really needs it)",
		Format(e.Used), Format(e.Limit), e.Flag)
}

// Effective is the budget Watch applies for limit: limit, or under an
// address-space limit (ulimit -v) that leaves less room, a third of the
// address space still free, with that limit. The Go runtime reserves
// address space beyond its heap (and frees it late) and dies with an
// unrecoverable "fatal error: out of memory" dump when a reservation
// fails, so the budget must trip long before the limit is reached.
func Effective(limit uint64) (budget, addressSpace uint64) {
	return effective(limit, addressSpaceLimit(), addressSpaceUsed())
}

func effective(limit, as, used uint64) (uint64, uint64) {
	if as == 0 {
		return limit, 0
	}
	free := uint64(0)
	if as > used {
		free = as - used
	}
	if free/3 >= limit {
		return limit, 0
	}
	return max(free/3, 1), as
}

// heapMetric is the memory occupied by live and not yet swept heap objects.
const heapMetric = "/memory/classes/heap/objects:bytes"

// Watch returns a context that is cancelled with an *ExceededError when
// the process's heap exceeds limit, and a stop function to call when the
// run ends. It also sets the Go runtime's soft memory limit to limit, so
// the garbage collector works harder before the budget is declared
// exceeded (the previous soft limit is restored by stop). The limit is the
// process's: imgflow runs one command per process.
//
// Under an address-space limit the budget is Effective's.
func Watch(parent context.Context, limit uint64, flag string) (context.Context, func()) {
	limit, as := Effective(limit)
	ctx, cancel := context.WithCancelCause(parent)
	previous := debug.SetMemoryLimit(int64(min(limit, 1<<62)))
	done := make(chan struct{})
	go func() {
		sample := []metrics.Sample{{Name: heapMetric}}
		t := time.NewTicker(Tick)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				metrics.Read(sample)
				if used := sample[0].Value.Uint64(); used > limit {
					cancel(&ExceededError{Limit: limit, Used: used, Flag: flag, AddressSpace: as})
					return
				}
			}
		}
	}()
	return ctx, func() {
		close(done)
		cancel(nil)
		debug.SetMemoryLimit(previous)
	}
}

// Parse reads a size: bytes, or a number with KiB, MiB, GiB (or K, M, G,
// meaning the same powers of two).
func Parse(s string) (uint64, error) {
	units := []struct {
		suffix string
		shift  uint
	}{{"KiB", 10}, {"MiB", 20}, {"GiB", 30}, {"K", 10}, {"M", 20}, {"G", 30}}
	num, shift := strings.TrimSpace(s), uint(0)
	for _, u := range units {
		if strings.HasSuffix(num, u.suffix) {
			num, shift = strings.TrimSpace(strings.TrimSuffix(num, u.suffix)), u.shift
			break
		}
	}
	n, err := strconv.ParseUint(num, 10, 64)
	if err != nil || n == 0 || n > (1<<62)>>shift {
		return 0, fmt.Errorf("invalid size %q: use e.g. 512MiB or 2GiB", s)
	}
	return n << shift, nil
}

// Format prints a size in the largest binary unit that keeps one decimal.
func Format(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}
