package azure_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azure"
	"github.com/imgflow/imgflow/cloud/azure/fakearm"
	"github.com/imgflow/imgflow/cloud/cloudtest"
	"github.com/imgflow/imgflow/cloud/ensure"
	"github.com/imgflow/imgflow/progress"
)

func TestErrorShape(t *testing.T) {
	w := newWorld(t, fakearm.Options{}, nil)
	_, _, err := ensure.EnsureResourceGroup(w.ctx, w.p, cloud.ResourceGroup{Name: "rg", Location: loc})
	require.NoError(t, err)
	_, err = w.p.GetGallery(w.ctx, "rg", "missing")
	ce := cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeResourceNotFound, "was not found")
	assert.Equal(t, cloud.GalleryID(w.f.SubscriptionID(), "rg", "missing"), ce.Resource)
	assert.True(t, strings.HasPrefix(err.Error(), "get gallery missing: ResourceNotFound: "), err.Error())
	assert.True(t, cloud.IsNotFound(err))
}

func TestRetryAfterHonoured(t *testing.T) {
	w := newWorld(t, fakearm.Options{}, nil)
	w.base("imgflowtest")
	_, _, err := ensure.EnsureGallery(w.ctx, w.p, cloud.Gallery{Name: "gal", ResourceGroup: "rg", Location: loc})
	require.NoError(t, err)
	// Gallery APIs throttle with Retry-After; the SDK retry policy waits
	// as told, then the request succeeds.
	w.f.Inject(fakearm.Fault{API: "GalleriesClient.Get", Status: http.StatusTooManyRequests, Code: "TooManyRequests",
		Message: "The request is being throttled; try after 1 second.", RetryAfter: time.Second})
	start := time.Now()
	g, err := w.p.GetGallery(w.ctx, "rg", "gal")
	require.NoError(t, err)
	assert.Equal(t, "gal", g.Name)
	assert.GreaterOrEqual(t, time.Since(start), time.Second, "Retry-After: 1 was not honoured")
	assert.Zero(t, w.f.PendingFaults())
	var statuses []int
	for _, r := range w.f.Requests() {
		if r.API == "GalleriesClient.Get" {
			statuses = append(statuses, r.Status)
		}
	}
	assert.Equal(t, []int{429, 200}, statuses[len(statuses)-2:])
}

func TestRetryOnLongOperations(t *testing.T) {
	w := newWorld(t, fakearm.Options{}, nil)
	w.base("imgflowtest")
	// A 429 on the PUT and a 503 on a status poll are both retried.
	w.f.Inject(fakearm.Fault{API: "GalleriesClient.BeginCreateOrUpdate", Method: "PUT", Status: http.StatusTooManyRequests, RetryAfter: 10 * time.Millisecond})
	w.f.Inject(fakearm.Fault{API: "GalleriesClient.BeginCreateOrUpdate", Method: "GET", Status: http.StatusServiceUnavailable, Polls: true})
	g, err := w.p.CreateGallery(w.ctx, cloud.Gallery{Name: "gal", ResourceGroup: "rg", Location: loc})
	require.NoError(t, err)
	assert.Equal(t, loc, g.Location)
	assert.Zero(t, w.f.PendingFaults())
}

func TestRetriesExhausted(t *testing.T) {
	w := newWorld(t, fakearm.Options{}, nil)
	w.base("imgflowtest")
	w.f.Inject(fakearm.Fault{API: "GalleryImagesClient.Get", Status: http.StatusInternalServerError, Code: "InternalServerError", Times: -1})
	_, err := w.p.GetImageDefinition(w.ctx, "rg", "gal", "def")
	cloudtest.RequireError(t, err, 500, "InternalServerError")
	assert.Contains(t, err.Error(), "get image definition gal/def")
	n := 0
	for _, r := range w.f.Requests() {
		if r.API == "GalleryImagesClient.Get" {
			n++
		}
	}
	assert.Equal(t, 1+azure.DefaultMaxRetries, n, "one try and six retries")
}

func TestInjectedConflict(t *testing.T) {
	w := newWorld(t, fakearm.Options{}, nil)
	w.base("imgflowtest")
	w.f.Inject(fakearm.Fault{API: "GalleriesClient.BeginCreateOrUpdate", Method: "PUT", Status: http.StatusConflict, Code: "OperationNotAllowed",
		Message: "Another operation is in progress on gallery 'gal'."})
	_, err := w.p.CreateGallery(w.ctx, cloud.Gallery{Name: "gal", ResourceGroup: "rg", Location: loc})
	require.Error(t, err)
	assert.True(t, cloud.HasCode(err, "OperationNotAllowed"), "%v", err)
	assert.Contains(t, err.Error(), "create gallery gal: OperationNotAllowed: Another operation is in progress")
	// The fault answered; the next call goes through.
	_, err = w.p.CreateGallery(w.ctx, cloud.Gallery{Name: "gal", ResourceGroup: "rg", Location: loc})
	require.NoError(t, err)
}

func TestFailedLongOperation(t *testing.T) {
	w := newWorld(t, fakearm.Options{}, nil)
	sa, c := w.base("imgflowtest")
	v, _ := w.version(sa, c)
	w.f.Inject(fakearm.Fault{LRO: true, API: "GalleryImageVersionsClient.BeginCreateOrUpdate", Path: "/versions/2.0.0",
		Status: http.StatusInternalServerError, Code: "InternalExecutionError", Message: "An internal execution error occurred."})
	want := *v
	want.Name = "2.0.0"
	_, err := w.p.CreateImageVersion(w.ctx, want)
	require.Error(t, err)
	assert.True(t, cloud.HasCode(err, "InternalExecutionError"), "%v", err)
	assert.Contains(t, err.Error(), "create image version gal/def/2.0.0")
	require.ErrorIs(t, err, ensure.ErrVersionFailed)
	polls := 0
	for _, r := range w.f.Requests() {
		if r.Poll && r.API == "GalleryImageVersionsClient.BeginCreateOrUpdate" {
			polls++
		}
	}
	assert.Positive(t, polls, "the failure came from a status poll")
	// As on Azure, the failed version stays, Failed; a rerun does not
	// reuse it but says how to delete it.
	got, err := w.p.GetImageVersion(w.ctx, "rg", "gal", "def", "2.0.0")
	require.NoError(t, err)
	assert.True(t, got.Failed(), got.ProvisioningState)
	_, _, err = ensure.EnsureImageVersion(w.ctx, w.p, want, time.Now())
	require.ErrorIs(t, err, ensure.ErrVersionFailed)
	assert.Contains(t, err.Error(), "az sig image-version delete --resource-group rg --gallery-name gal --gallery-image-definition def --gallery-image-version 2.0.0")
	// Once deleted, the name works again: the fake keeps no stale operation.
	require.NoError(t, w.p.DeleteImageVersion(w.ctx, "rg", "gal", "def", "2.0.0"))
	got, err = w.p.CreateImageVersion(w.ctx, want)
	require.NoError(t, err)
	assert.Equal(t, "2.0.0", got.Name)
	assert.False(t, got.Failed())
}

// A failed operation whose answers carry no error object (status Failed,
// or a resource in provisioningState Failed) still yields a message: the
// code, the state and the answer, never "OK".
func TestFailedWithoutErrorObject(t *testing.T) {
	for _, bodyPolling := range []bool{false, true} {
		t.Run(fmt.Sprintf("bodyPolling=%v", bodyPolling), func(t *testing.T) {
			w := newWorld(t, fakearm.Options{}, nil)
			sa, c := w.base("imgflowtest")
			v, _ := w.version(sa, c)
			w.f.Inject(fakearm.Fault{LRO: true, NoError: true, BodyPolling: bodyPolling, API: "GalleryImageVersionsClient.BeginCreateOrUpdate", Path: "/versions/3.0.0"})
			want := *v
			want.Name = "3.0.0"
			_, err := w.p.CreateImageVersion(w.ctx, want)
			require.ErrorIs(t, err, ensure.ErrVersionFailed)
			assert.True(t, cloud.HasCode(err, azure.CodeOperationFailed), "%v", err)
			assert.NotContains(t, err.Error(), ": OK")
			assert.Contains(t, err.Error(), "ended in Failed without an error object")
			assert.Contains(t, err.Error(), `"Failed"`, "the answer is quoted")
		})
	}
	// The same through the SDK's own poller, on a definition.
	w := newWorld(t, fakearm.Options{}, nil)
	w.base("imgflowtest")
	w.f.Inject(fakearm.Fault{LRO: true, NoError: true, API: "GalleriesClient.BeginCreateOrUpdate"})
	_, err := w.p.CreateGallery(w.ctx, cloud.Gallery{Name: "gal", ResourceGroup: "rg", Location: loc})
	require.Error(t, err)
	assert.True(t, cloud.HasCode(err, azure.CodeOperationFailed), "%v", err)
	assert.Contains(t, err.Error(), `"status":"Failed"`)
}

func TestReplicationFailedRegion(t *testing.T) {
	w := newWorld(t, fakearm.Options{}, nil)
	sa, c := w.base("imgflowtest")
	v, _ := w.version(sa, c)
	w.f.FailReplication("eastus", "Replication failed: storage quota exceeded in the target region.")
	_, _, err := ensure.Replicate(w.ctx, w.p, ensure.ReplicateRequest{ResourceGroup: "rg", Gallery: "gal", Definition: "def", Version: "1.0.0",
		Regions: []string{"northeurope", "eastus"}})
	// The PATCH was accepted; the version it left is Failed, with the
	// operation's reason and the region's.
	require.ErrorIs(t, err, ensure.ErrReplicationIncomplete)
	require.ErrorIs(t, err, ensure.ErrVersionFailed)
	assert.True(t, cloud.HasCode(err, cloud.CodeReplicationFailed), "%v", err)
	assert.Contains(t, err.Error(), "failed to replicate to eastus (Replication failed: storage quota exceeded")
	// Waiting says the same, and a rerun never reuses the version.
	_, err = ensure.WaitReplicated(w.ctx, w.p, v, time.Minute, time.Millisecond, nil)
	require.ErrorIs(t, err, ensure.ErrVersionFailed)
	assert.Contains(t, err.Error(), "failed to replicate to eastus (Replication failed: storage quota exceeded")
	assert.NotContains(t, err.Error(), "northeurope (")
	_, _, err = ensure.EnsureImageVersion(w.ctx, w.p, *v, time.Now())
	require.ErrorIs(t, err, ensure.ErrVersionFailed)
	assert.Contains(t, err.Error(), "az sig image-version delete --resource-group rg --gallery-name gal --gallery-image-definition def --gallery-image-version 1.0.0")
}

func TestReplicationProgressAndRegionNames(t *testing.T) {
	w := newWorld(t, fakearm.Options{ReplicationPolls: 3}, nil)
	sa, c := w.base("imgflowtest")
	v, _ := w.version(sa, c)
	_, _, err := ensure.Replicate(w.ctx, w.p, ensure.ReplicateRequest{ResourceGroup: "rg", Gallery: "gal", Definition: "def", Version: "1.0.0",
		Regions: []string{"eastus2", "westus3"}, ReplicaCount: 3, StorageAccountType: cloud.StorageStandardZRS})
	require.NoError(t, err)
	var seen [][]cloud.RegionStatus
	got, err := ensure.WaitReplicated(w.ctx, w.p, v, time.Minute, time.Millisecond, func(s []cloud.RegionStatus) { seen = append(seen, s) })
	require.NoError(t, err)
	require.Greater(t, len(seen), 2, "replication was reported in progress before completing")
	var replicating bool
	for _, s := range seen[0] {
		replicating = replicating || s.State == cloud.ReplicationReplicating
	}
	assert.True(t, replicating, "%v", seen[0])
	// Azure names regions by display name in versions ("East US 2"); the
	// provider gives names back.
	assert.Equal(t, []string{loc, "eastus2", "westus3"}, got.RegionNames())
	for _, s := range got.Replication {
		assert.Contains(t, []string{loc, "eastus2", "westus3"}, s.Region)
	}
	for _, r := range got.TargetRegions[1:] {
		assert.Equal(t, 3, r.ReplicaCount)
		assert.Equal(t, cloud.StorageStandardZRS, r.StorageAccountType)
	}
	// The raw answer does use display names.
	cf, err := armcompute.NewClientFactory(w.f.SubscriptionID(), w.f.Credential(), w.f.ClientOptions())
	require.NoError(t, err)
	raw, err := cf.NewGalleryImageVersionsClient().Get(w.ctx, "rg", "gal", "def", "1.0.0", nil)
	require.NoError(t, err)
	assert.Equal(t, "East US 2", *raw.Properties.PublishingProfile.TargetRegions[1].Name)
}

func TestResumeToken(t *testing.T) {
	var mu sync.Mutex
	tokens := map[string]string{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := newWorld(t, fakearm.Options{LROPolls: 2}, func(o *azure.Options) {
		o.PollFrequency = 20 * time.Millisecond
		o.OnPoller = func(op, tok string) {
			mu.Lock()
			defer mu.Unlock()
			tokens[op] = tok
			if strings.HasPrefix(op, "create gallery") {
				cancel() // the run dies while the gallery is being created
			}
		}
	})
	w.base("imgflowtest")
	_, err := w.p.CreateGallery(ctx, cloud.Gallery{Name: "gal", ResourceGroup: "rg", Location: loc})
	require.ErrorIs(t, err, context.Canceled)
	mu.Lock()
	tok := tokens["create gallery gal"]
	mu.Unlock()
	require.NotEmpty(t, tok)
	assert.NotContains(t, tok, "sig=")

	// A new process resumes the operation from its token.
	cf, err := armcompute.NewClientFactory(w.f.SubscriptionID(), w.f.Credential(), w.f.ClientOptions())
	require.NoError(t, err)
	poller, err := cf.NewGalleriesClient().BeginCreateOrUpdate(w.ctx, "rg", "gal", armcompute.Gallery{},
		&armcompute.GalleriesClientBeginCreateOrUpdateOptions{ResumeToken: tok})
	require.NoError(t, err)
	res, err := poller.PollUntilDone(w.ctx, &runtime.PollUntilDoneOptions{Frequency: time.Millisecond})
	require.NoError(t, err)
	assert.Equal(t, "gal", *res.Name)
}

func TestProgressReported(t *testing.T) {
	var mu sync.Mutex
	last := map[string]int{}
	w := newWorld(t, fakearm.Options{}, func(o *azure.Options) {
		o.Progress = func(op string, pct int) {
			mu.Lock()
			defer mu.Unlock()
			last[op] = pct
		}
	})
	sa, c := w.base("imgflowtest")
	img := makeVHD(t, 12<<20, 4<<20, 0, 8<<20)
	r := ref(sa, c, "big.vhd")
	w.upload(img, r)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, 100, last["create storage account imgflowtest"])
	assert.Equal(t, 100, last["upload "+r.URL()])
}

// A long ARM operation is reported to Options.Waits from start to end: a
// progress.Printer says it goes on while it polls.
func TestLongOperationsAreReportedAsWaits(t *testing.T) {
	var out bytes.Buffer
	plain := false
	printer := progress.New(&out, progress.Options{Terminal: &plain, WaitInterval: 15 * time.Millisecond})
	w := newWorld(t, fakearm.Options{LROPolls: 6}, func(o *azure.Options) {
		o.PollFrequency = 20 * time.Millisecond
		o.Waits = printer
	})
	w.base("imgflowtest")
	_, err := w.p.CreateGallery(w.ctx, cloud.Gallery{Name: "gal", ResourceGroup: "rg", Location: loc})
	require.NoError(t, err)
	got := out.String() // end() returned: no line comes after this
	assert.Contains(t, got, "create gallery gal: still running after ")
	_, err = w.p.GetGallery(w.ctx, "rg", "gal")
	require.NoError(t, err)
	assert.Equal(t, got, out.String(), "a wait went on after its operation ended")
}

func TestBlobIdentityByEndpoint(t *testing.T) {
	w := newWorld(t, fakearm.Options{}, nil)
	sa, _ := w.base("imgflowtest")
	// The fake reports Azurite's endpoint as the account's primary blob
	// endpoint, as ARM reports the real one.
	assert.Equal(t, w.az.Endpoint("imgflowtest"), sa.BlobEndpoint)
}
