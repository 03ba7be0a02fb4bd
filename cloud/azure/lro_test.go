package azure_test

import (
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azure/fakearm"
	"github.com/imgflow/imgflow/cloud/ensure"
)

// A version's PATCH ends on Azure only once the new regions replicated
// (hours): Replicate returns as soon as the update is accepted, which is
// what replicate(wait = False) relies on, and WaitReplicated does the
// waiting.
func TestReplicateReturnsBeforeReplicationEnds(t *testing.T) {
	const delay = 600 * time.Millisecond
	w := newWorld(t, fakearm.Options{}, nil)
	sa, c := w.base("imgflowtest")
	v, _ := w.version(sa, c)
	w.f.SetReplicationDelay(delay)

	start := time.Now()
	got, outcome, err := ensure.Replicate(w.ctx, w.p, ensure.ReplicateRequest{ResourceGroup: "rg", Gallery: "gal", Definition: "def", Version: "1.0.0",
		Regions: []string{"northeurope", "eastus"}})
	require.NoError(t, err)
	assert.Less(t, time.Since(start), delay, "Replicate waited for replication")
	assert.Equal(t, cloud.Updated, outcome)
	assert.Equal(t, cloud.ProvisioningUpdating, got.ProvisioningState)
	pending, failed := ensure.ReplicationLaggards(got)
	assert.Empty(t, failed)
	assert.Len(t, pending, 2, "the two new regions are still replicating: %v", got.Replication)

	done, err := ensure.WaitReplicated(w.ctx, w.p, v, time.Minute, 10*time.Millisecond, nil)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, time.Since(start), delay)
	assert.Equal(t, cloud.ProvisioningSucceeded, done.ProvisioningState)
}

// A region that fails after a while: the update was accepted, the wait
// reports the failure with the region's details, and the version, now
// Failed, is never reused.
func TestRegionFailingDuringReplication(t *testing.T) {
	w := newWorld(t, fakearm.Options{}, nil)
	sa, c := w.base("imgflowtest")
	v, _ := w.version(sa, c)
	w.f.SetReplicationDelay(100 * time.Millisecond)
	w.f.FailReplication("eastus", "Replication failed: the region has no capacity.")
	got, outcome, err := ensure.Replicate(w.ctx, w.p, ensure.ReplicateRequest{ResourceGroup: "rg", Gallery: "gal", Definition: "def", Version: "1.0.0",
		Regions: []string{"northeurope", "eastus"}})
	require.NoError(t, err)
	assert.Equal(t, cloud.Updated, outcome)
	assert.Equal(t, cloud.ProvisioningUpdating, got.ProvisioningState)

	_, err = ensure.WaitReplicated(w.ctx, w.p, v, time.Minute, 10*time.Millisecond, nil)
	require.ErrorIs(t, err, ensure.ErrVersionFailed)
	require.ErrorIs(t, err, ensure.ErrReplicationIncomplete)
	assert.Contains(t, err.Error(), "failed to replicate to eastus (Replication failed: the region has no capacity.)")
	assert.NotContains(t, err.Error(), "northeurope (")
	_, _, err = ensure.EnsureImageVersion(w.ctx, w.p, *v, time.Now())
	require.ErrorIs(t, err, ensure.ErrVersionFailed)
	assert.Contains(t, err.Error(), "az sig image-version delete --resource-group rg --gallery-name gal --gallery-image-definition def --gallery-image-version 1.0.0")
}

// The create returns once the version exists (Creating); the timeout of
// the wait bounds the whole wait for replication.
func TestCreateVersionReturnsOnceStartedAndTimeoutBoundsTheWait(t *testing.T) {
	w := newWorld(t, fakearm.Options{}, nil)
	sa, c := w.base("imgflowtest")
	v, _ := w.version(sa, c)
	w.f.SetReplicationDelay(time.Hour)

	want := *v
	want.Name = "1.1.0"
	start := time.Now()
	got, outcome, err := ensure.EnsureImageVersion(w.ctx, w.p, want, time.Now())
	require.NoError(t, err)
	assert.Equal(t, cloud.Created, outcome)
	assert.Equal(t, cloud.ProvisioningCreating, got.ProvisioningState)
	_, err = ensure.WaitReplicated(w.ctx, w.p, got, 150*time.Millisecond, 10*time.Millisecond, nil)
	require.ErrorIs(t, err, ensure.ErrReplicationIncomplete)
	assert.Contains(t, err.Error(), "westeurope (Replicating")
	assert.Less(t, time.Since(start), 10*time.Second)
}

// Changing a definition's features needs allowUpdateImage: the fake
// refuses the PUT without it, as Azure does, and the provider sends it.
func TestFeatureUpdateSendsAllowUpdateImage(t *testing.T) {
	w := newWorld(t, fakearm.Options{}, nil)
	w.base("imgflowtest")
	_, _, err := ensure.EnsureGallery(w.ctx, w.p, cloud.Gallery{Name: "gal", ResourceGroup: "rg", Location: loc})
	require.NoError(t, err)
	def := cloud.ImageDefinition{Name: "def", ResourceGroup: "rg", Gallery: "gal", Publisher: "imgflow", Offer: "test", SKU: "def",
		OSType: cloud.OSTypeLinux, OSState: cloud.OSStateGeneralized, HyperVGeneration: cloud.HyperVGenV2, Architecture: cloud.ArchX64,
		Features: map[string]string{"SecurityType": "TrustedLaunchSupported"}}
	_, _, err = ensure.EnsureImageDefinition(w.ctx, w.p, def, time.Now())
	require.NoError(t, err)

	// Without the flag (a client that forgets it): refused.
	cf, err := armcompute.NewClientFactory(w.f.SubscriptionID(), w.f.Credential(), w.f.ClientOptions())
	require.NoError(t, err)
	raw, err := cf.NewGalleryImagesClient().Get(w.ctx, "rg", "gal", "def", nil)
	require.NoError(t, err)
	body := raw.GalleryImage
	body.Properties.Features = append(body.Properties.Features, &armcompute.GalleryImageFeature{Name: to("DiskControllerTypes"), Value: to("SCSI,NVMe")})
	_, err = cf.NewGalleryImagesClient().BeginCreateOrUpdate(w.ctx, "rg", "gal", "def", body, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), cloud.CodePropertyChangeNotAllowed)
	assert.Contains(t, err.Error(), "allowUpdateImage")

	// Through the provider: accepted.
	def.Features = map[string]string{"SecurityType": "TrustedLaunchSupported", "DiskControllerTypes": "SCSI,NVMe"}
	got, outcome, err := ensure.EnsureImageDefinition(w.ctx, w.p, def, time.Now())
	require.NoError(t, err)
	assert.Equal(t, cloud.Updated, outcome)
	assert.Equal(t, def.Features, got.Features)
	// Changes Azure refuses are refused before any request.
	before := len(w.f.Requests())
	bad := def
	bad.OSState = cloud.OSStateSpecialized
	_, _, err = ensure.EnsureImageDefinition(w.ctx, w.p, bad, time.Now())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "os_state Generalized → Specialized")
	for _, r := range w.f.Requests()[before:] {
		assert.NotEqual(t, "PUT", r.Method, "%+v", r)
	}
}

// Compute answers locations as display names ("West Europe"): rerunning
// with location "westeurope" finds the same gallery, definition and
// version unchanged.
func TestDisplayNameLocationsRerunCleanly(t *testing.T) {
	w := newWorld(t, fakearm.Options{}, nil)
	sa, c := w.base("imgflowtest")
	cf, err := armcompute.NewClientFactory(w.f.SubscriptionID(), w.f.Credential(), w.f.ClientOptions())
	require.NoError(t, err)
	for i, want := range []cloud.Outcome{cloud.Created, cloud.Exists} {
		g, outcome, err := ensure.EnsureGallery(w.ctx, w.p, cloud.Gallery{Name: "gal", ResourceGroup: "rg", Location: loc})
		require.NoError(t, err, "run %d", i)
		assert.Equal(t, want, outcome)
		assert.Equal(t, loc, g.Location)
	}
	raw, err := cf.NewGalleriesClient().Get(w.ctx, "rg", "gal", nil)
	require.NoError(t, err)
	assert.Equal(t, "West Europe", *raw.Location, "the fake answers as Azure does")

	v, _ := w.version(sa, c)
	assert.Equal(t, loc, v.Location)
	again, outcome, err := ensure.EnsureImageVersion(w.ctx, w.p, cloud.ImageVersion{Name: v.Name, ResourceGroup: "rg", Gallery: "gal", Definition: "def",
		Source: v.Source}, time.Now())
	require.NoError(t, err)
	assert.Equal(t, cloud.Exists, outcome)
	assert.Equal(t, loc, again.Location)
	d, err := w.p.GetImageDefinition(w.ctx, "rg", "gal", "def")
	require.NoError(t, err)
	assert.Equal(t, loc, d.Location)
}

func to[T any](v T) *T { return &v }
