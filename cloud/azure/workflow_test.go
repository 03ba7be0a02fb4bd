package azure_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud/azure/fakearm"
	"github.com/imgflow/imgflow/internal/testharness"
	"github.com/imgflow/imgflow/interp"
)

// TestFlatcarWorkflow runs workflows/flatcar.star through the Azure
// provider against the fake ARM and Azurite, with a throttled version
// create answered after the retry, then reruns it: nothing changes.
func TestFlatcarWorkflow(t *testing.T) {
	w := newWorld(t, fakearm.Options{}, nil)
	h := azureHarness(t, "azure-test")
	run := func() *interp.Result {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		return h.Run(ctx, "//workflows/flatcar.star", testharness.Vars("version", "4152.2.3", "vhd", "//testdata/flatcar/flatcar-linux-test-amd64.vhd"), interp.Target{Apply: w.p})
	}
	w.f.Inject(fakearm.Fault{API: "GalleryImageVersionsClient.BeginCreateOrUpdate", Method: http.MethodPut, Status: http.StatusTooManyRequests,
		Code: "TooManyRequests", RetryAfter: 10 * time.Millisecond})
	res := run()
	require.NoError(t, res.Err)
	assert.Zero(t, w.f.PendingFaults())
	outputs := map[string]string{}
	for _, o := range res.Outputs {
		outputs[o.Name] = starlarkString(o.Value)
	}
	assert.True(t, strings.HasPrefix(outputs["public_gallery_name"], "flatcar"), outputs["public_gallery_name"])
	assert.Contains(t, outputs["community_image_id"], "/CommunityGalleries/")

	puts := 0
	for _, r := range w.f.Requests() {
		if r.Method == http.MethodPut {
			puts++
		}
	}
	again := run()
	require.NoError(t, again.Err)
	for _, r := range w.f.Requests() {
		if r.Method == http.MethodPut {
			puts--
		}
	}
	assert.Zero(t, puts, "a rerun changes nothing")
}

func starlarkString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

// TestExportWorkflow runs a gen2-shaped flow (testdata/azure/export.star:
// VHD upload, version, replicate, sig_to_vhd, blob_copy across accounts,
// managed image from the version) twice through the Azure provider; with a
// replication region that fails, the run stops naming it.
func TestExportWorkflow(t *testing.T) {
	h := azureHarness(t, "azure-export")
	run := func(w *world) *interp.Result {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		return h.Run(ctx, "//testdata/azure/export.star", nil, interp.Target{Apply: w.p})
	}
	t.Run("twice", func(t *testing.T) {
		w := newWorld(t, fakearm.Options{ReplicationPolls: 1}, nil)
		res := run(w)
		require.NoError(t, res.Err)
		outputs := map[string]string{}
		for _, o := range res.Outputs {
			outputs[o.Name] = starlarkString(o.Value)
		}
		assert.Contains(t, outputs["exported"], "/export/2204gen2containerd-2026.1.2.vhd")
		assert.Regexp(t, `^sparse-sha256:[0-9a-f]{64}$`, outputs["published_digest"])
		again := run(w)
		require.NoError(t, again.Err)
	})
	t.Run("replication fails", func(t *testing.T) {
		w := newWorld(t, fakearm.Options{}, nil)
		w.f.FailReplication("eastus", "Replication failed in East US.")
		res := run(w)
		require.Error(t, res.Err)
		assert.Contains(t, res.Err.Error(), "eastus (Replication failed in East US.)")
	})
}

// TestReplicateNoWaitWorkflow: replicate(wait = False) returns while the
// new regions still replicate; Azure ends the version's PATCH only after
// replication, so the run must not wait for it.
func TestReplicateNoWaitWorkflow(t *testing.T) {
	w := newWorld(t, fakearm.Options{RegionDelays: map[string]time.Duration{"northeurope": time.Hour, "eastus": time.Hour}}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	res := azureHarness(t, "azure-nowait").Run(ctx, "//testdata/azure/replicate_nowait.star", nil, interp.Target{Apply: w.p})
	require.NoError(t, res.Err)
	assert.Less(t, time.Since(start), 30*time.Second)
	var states string
	for _, o := range res.Outputs {
		if o.Name == "states" {
			states = starlarkString(o.Value)
		}
	}
	assert.Equal(t, "westeurope=Completed,northeurope=Replicating,eastus=Replicating", states)
}

// azureHarness runs the repository's workflows at the time of the test
// (the fake ARM dates what it creates now).
func azureHarness(t *testing.T, runID string) *testharness.Harness {
	h := testharness.New(t, "../..", runID)
	h.Info.Time = time.Now()
	return h
}
