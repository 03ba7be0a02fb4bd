package memlimit

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWatchCancelsWhenTheHeapExceedsTheLimit(t *testing.T) {
	const limit = 256 << 20
	ctx, stop := Watch(context.Background(), limit, "--max-memory")
	defer stop()
	var hold [][]byte
	deadline := time.Now().Add(30 * time.Second)
	for ctx.Err() == nil && time.Now().Before(deadline) {
		hold = append(hold, make([]byte, 8<<20)) // reachable: the GC cannot free it
		time.Sleep(time.Millisecond)
	}
	var exceeded *ExceededError
	require.True(t, errors.As(context.Cause(ctx), &exceeded), "cause: %v", context.Cause(ctx))
	assert.Greater(t, exceeded.Used, uint64(limit))
	assert.Contains(t, exceeded.Error(), "more than its limit of 256.0 MiB")
	assert.Contains(t, exceeded.Error(), "raise --max-memory")
	runtime.KeepAlive(hold)
}

func TestWatchLeavesAModestRunAlone(t *testing.T) {
	ctx, stop := Watch(context.Background(), 1<<30, "--max-memory")
	time.Sleep(3 * Tick)
	assert.NoError(t, ctx.Err())
	stop()
	assert.ErrorIs(t, ctx.Err(), context.Canceled, "stop releases the context")
}

func TestParse(t *testing.T) {
	for in, want := range map[string]uint64{"1GiB": 1 << 30, "512MiB": 512 << 20, "64M": 64 << 20, "1048576": 1 << 20, " 2 G": 2 << 30} {
		got, err := Parse(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "0", "-1GiB", "lots", "1TB", "99999999999999GiB"} {
		_, err := Parse(bad)
		assert.ErrorContains(t, err, "invalid size", bad)
	}
}

// Under ulimit -v the budget is a third of the address space left free:
// the Go runtime's reservations fail (an unrecoverable dump) long before
// a heap of the flag's size would be reached.
func TestEffectiveBudgetUnderAnAddressSpaceLimit(t *testing.T) {
	budget, as := effective(1<<30, 0, 500<<20)
	assert.Equal(t, uint64(1<<30), budget, "no address-space limit")
	assert.Zero(t, as)

	budget, as = effective(1<<30, 8<<30, 1<<30)
	assert.Equal(t, uint64(1<<30), budget, "room enough for the flag's budget")
	assert.Zero(t, as)

	budget, as = effective(8<<30, 4<<30, 1<<30)
	assert.Equal(t, uint64(1<<30), budget)
	assert.Equal(t, uint64(4<<30), as)
	msg := (&ExceededError{Limit: budget, Used: budget + 1, Flag: "--max-memory", AddressSpace: as}).Error()
	assert.Contains(t, msg, "address-space limit, ulimit -v 4.0 GiB")

	budget, _ = effective(1<<30, 1<<30, 2<<30)
	assert.Equal(t, uint64(1), budget, "no room at all trips at once")
}
