package fakearm_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud/azure/fakearm"
)

// TestThrottleHeldUntilRetryAfter: a throttled request retried before its
// Retry-After passed is throttled again (without using up the fault), on
// the fake's clock, which Speedup runs faster; after Sleep of the
// Retry-After the request goes through.
func TestThrottleHeldUntilRetryAfter(t *testing.T) {
	srv := fakearm.NewServer(t, fakearm.Options{Speedup: 1000})
	srv.Inject(fakearm.Fault{API: "GalleriesClient.Get", Status: http.StatusTooManyRequests, Code: "TooManyRequests", RetryAfter: 5 * time.Minute})
	u := srv.URL + "/subscriptions/" + srv.SubscriptionID() + "/resourceGroups/rg/providers/Microsoft.Compute/galleries/g?api-version=2025-03-03"

	status, h, _ := call(t, http.MethodGet, u, nil)
	require.Equal(t, http.StatusTooManyRequests, status)
	assert.Equal(t, "300", h.Get("Retry-After"))
	assert.Zero(t, srv.PendingFaults())

	status, h, body := call(t, http.MethodGet, u, nil)
	require.Equal(t, http.StatusTooManyRequests, status, "retried too early")
	left, err := strconv.Atoi(h.Get("Retry-After"))
	require.NoError(t, err)
	assert.LessOrEqual(t, left, 300)
	assert.Positive(t, left)
	assert.Contains(t, string(body), "retried before the Retry-After passed")

	start := time.Now()
	require.NoError(t, srv.Sleep(context.Background(), 5*time.Minute))
	assert.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond, "5 min of the fake's clock")
	status, _, body = call(t, http.MethodGet, u, nil)
	assert.NotEqual(t, http.StatusTooManyRequests, status, "%s", body)

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	assert.ErrorIs(t, srv.Sleep(ctx, 5*time.Minute), context.DeadlineExceeded, "a wait past the deadline fails at once")
}
