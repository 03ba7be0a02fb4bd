package azure_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azure/fakearm"
	"github.com/imgflow/imgflow/cloud/ensure"
	"github.com/imgflow/imgflow/internal/testharness"
	"github.com/imgflow/imgflow/interp"
)

// fiveMinutes is a Retry-After longer than the SDK's own retry policy
// waits (MaxRetryDelay 2 min 10 s): only imgflow's waitPolicy follows it.
const fiveMinutes = 5 * time.Minute

// TestWorkflowSurvivesThrottlingAndConflicts runs workflows/flatcar.star
// on the fake ARM and Azurite while Azure throttles the version's PUT, a
// read of it and a definition's status poll with Retry-After 5 min (the fake's clock runs
// 10000 times faster) and answers 409 AnotherOperationInProgress to
// writes of the gallery, a definition and the community sharing: the run
// completes, every fault answered, the waits shown as progress. Long
// operations answer Retry-After 30 s, lists page.
func TestWorkflowSurvivesThrottlingAndConflicts(t *testing.T) {
	w := newWorld(t, fakearm.Options{Speedup: 10000, LROPolls: 1, PollRetryAfter: 30 * time.Second}, nil)
	throttle := func(api, method string, polls bool) {
		w.f.Inject(fakearm.Fault{API: api, Method: method, Polls: polls, Status: http.StatusTooManyRequests, Code: "TooManyRequests",
			Message: "The request is being throttled as the limit has been reached for operation type - Write.", RetryAfter: fiveMinutes})
	}
	conflict := func(api string, times int) {
		w.f.Inject(fakearm.Fault{API: api, Method: http.MethodPut, Status: http.StatusConflict, Code: "AnotherOperationInProgress",
			Message: "Another operation on this or dependent resource is in progress.", Times: times})
	}
	throttle("GalleryImageVersionsClient.BeginCreateOrUpdate", http.MethodPut, false)
	throttle("GalleryImageVersionsClient.Get", http.MethodGet, false)
	throttle("GalleryImagesClient.BeginCreateOrUpdate", http.MethodGet, true)
	conflict("GalleriesClient.BeginCreateOrUpdate", 1)
	conflict("GalleryImagesClient.BeginCreateOrUpdate", 3)
	w.f.Inject(fakearm.Fault{API: "GallerySharingProfileClient.BeginUpdate", Method: http.MethodPost, Status: http.StatusConflict,
		Code: "AnotherOperationInProgress", Message: "Another operation on this or dependent resource is in progress."})

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res := azureHarness(t, "azure-throttled").Run(ctx, "//workflows/flatcar.star",
		testharness.Vars("version", "4152.2.3", "vhd", "//testdata/flatcar/flatcar-linux-test-amd64.vhd"), interp.Target{Apply: w.p})
	require.NoError(t, res.Err)
	assert.Zero(t, w.f.PendingFaults(), "every injected fault answered a request")

	logs := strings.Join(w.logLines(), "\n")
	assert.Contains(t, logs, "throttled by Azure, retrying in 5m (PUT galleries/")
	assert.Contains(t, logs, "Azure answered 409 AnotherOperationInProgress, retrying in ")
	throttled := 0
	for _, r := range w.f.Requests() {
		if r.Status == http.StatusTooManyRequests {
			throttled++
		}
	}
	assert.Equal(t, 3, throttled, "the client waited each Retry-After out: the fake throttles a retry that comes early")
}

// TestRetryAfterBeyondDeadlineIsNotWaited: a Retry-After longer than the
// step may still take fails at once with Azure's answer and says why.
func TestRetryAfterBeyondDeadlineIsNotWaited(t *testing.T) {
	w := newWorld(t, fakearm.Options{}, nil)
	w.base("imgflowtest")
	w.f.Inject(fakearm.Fault{API: "GalleriesClient.Get", Status: http.StatusTooManyRequests, Code: "TooManyRequests", RetryAfter: 10 * time.Minute})
	ctx, cancel := context.WithTimeout(w.ctx, time.Minute)
	defer cancel()
	start := time.Now()
	_, err := w.p.GetGallery(ctx, "rg", "gal")
	require.Error(t, err)
	assert.True(t, cloud.HasCode(err, "TooManyRequests"), "%v", err)
	assert.Less(t, time.Since(start), 5*time.Second)
	assert.Contains(t, strings.Join(w.logLines(), "\n"), "throttled by Azure for 10m, longer than the step may still take: not retrying (GET galleries/gal)")
}

// TestRetryAfterBeyondSDKCapIsWaited: without a deadline in the way, a
// Retry-After of 5 min (over the SDK's cap) is waited out.
func TestRetryAfterBeyondSDKCapIsWaited(t *testing.T) {
	w := newWorld(t, fakearm.Options{Speedup: 1000}, nil)
	w.base("imgflowtest")
	_, _, err := ensure.EnsureGallery(w.ctx, w.p, cloud.Gallery{Name: "gal", ResourceGroup: "rg", Location: loc})
	require.NoError(t, err)
	w.f.Inject(fakearm.Fault{API: "GalleriesClient.Get", Status: http.StatusTooManyRequests, Code: "TooManyRequests", RetryAfter: fiveMinutes})
	start := time.Now()
	_, err = w.p.GetGallery(w.ctx, "rg", "gal")
	require.NoError(t, err)
	assert.GreaterOrEqual(t, time.Since(start), fiveMinutes/1000, "the fake's 5 min passed")
}

// TestConflictsOtherThanTransientAreReported: a 409 Azure does not
// document as transient is not retried and keeps Azure's code; a
// transient one retried until the limit ends with Azure's code too.
func TestConflictsOtherThanTransientAreReported(t *testing.T) {
	w := newWorld(t, fakearm.Options{Speedup: 10000}, nil)
	w.base("imgflowtest")
	w.f.Inject(fakearm.Fault{API: "GalleriesClient.BeginCreateOrUpdate", Method: "PUT", Status: http.StatusConflict, Code: "OperationNotAllowed",
		Message: "Operation 'Update' is not allowed on gallery 'gal'."})
	_, err := w.p.CreateGallery(w.ctx, cloud.Gallery{Name: "gal", ResourceGroup: "rg", Location: loc})
	require.Error(t, err)
	assert.True(t, cloud.HasCode(err, "OperationNotAllowed"), "%v", err)
	assert.Equal(t, 0, w.f.PendingFaults())

	w.f.Inject(fakearm.Fault{API: "GalleriesClient.BeginCreateOrUpdate", Method: "PUT", Status: http.StatusConflict, Code: "AnotherOperationInProgress", Times: -1})
	_, err = w.p.CreateGallery(w.ctx, cloud.Gallery{Name: "gal", ResourceGroup: "rg", Location: loc})
	require.Error(t, err)
	assert.True(t, cloud.HasCode(err, "AnotherOperationInProgress"), "%v", err)
	n := 0
	for _, r := range w.f.Requests() {
		if r.API == "GalleriesClient.BeginCreateOrUpdate" && r.Status == http.StatusConflict {
			n++
		}
	}
	assert.Equal(t, 1+1+8, n, "one non-transient answer, then one try and eight retries")
}
