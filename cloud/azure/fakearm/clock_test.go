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

// TestLongOperationRetryAfter: with PollRetryAfter, the accepted answer of
// a long operation and its status answers while in progress say when to
// poll again (ARM RPC, async API reference: Retry-After on 201/202 and
// on in-progress status), in seconds of the fake's clock and in
// retry-after-ms of real time; the final status has none.
func TestLongOperationRetryAfter(t *testing.T) {
	srv := fakearm.NewServer(t, fakearm.Options{PollRetryAfter: 10 * time.Second, Speedup: 10000, LROPolls: 1})
	base := srv.URL + "/subscriptions/" + srv.SubscriptionID() + "/resourcegroups/rg"
	status, _, body := call(t, http.MethodPut, base+"?api-version=2022-09-01", []byte(`{"location":"westus"}`))
	require.Equal(t, http.StatusCreated, status, "%s", body)
	status, h, body := call(t, http.MethodPut, base+"/providers/Microsoft.Compute/galleries/g?api-version=2025-03-03", []byte(`{"location":"westus","properties":{}}`))
	require.Equal(t, http.StatusCreated, status, "%s", body)
	assert.Equal(t, "10", h.Get("Retry-After"))
	assert.Equal(t, "1", h.Get("retry-after-ms"))
	async := h.Get("Azure-AsyncOperation")
	require.NotEmpty(t, async)
	status, h, body = call(t, http.MethodGet, async, nil)
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, string(body), `"InProgress"`)
	assert.Equal(t, "10", h.Get("Retry-After"))
	_, h, body = call(t, http.MethodGet, async, nil)
	assert.Contains(t, string(body), `"Succeeded"`)
	assert.Empty(t, h.Get("Retry-After"))
}
