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
	"github.com/imgflow/imgflow/cloud/azure"
	"github.com/imgflow/imgflow/cloud/azure/azuritetest"
	"github.com/imgflow/imgflow/cloud/azure/fakearm"
	"github.com/imgflow/imgflow/cloud/cloudtest"
	"github.com/imgflow/imgflow/cloud/ensure"
)

// serverEnv points FromEnvironment at a fake ARM served over HTTP and at
// Azurite, as `imgflow run --target azure` is in tests.
func serverEnv(t *testing.T, opts fakearm.Options) (*fakearm.Server, *azuritetest.Server) {
	az := azuritetest.Shared(t)
	opts.Blob = &fakearm.BlobBackend{Endpoint: az.Endpoint, Key: azuritetest.Key}
	srv := fakearm.NewServer(t, opts)
	for k, v := range srv.Env() {
		t.Setenv(k, v)
	}
	t.Setenv(azure.EnvBlobEndpoint, az.URL+"/{account}")
	t.Setenv(azure.EnvStorageKey, azuritetest.DevKey)
	return srv, az
}

// TestFromEnvironmentOverHTTP runs a publishing flow (a Flatcar-like
// community gallery and a gen2-like export) through FromEnvironment
// against the fake ARM over HTTP and Azurite, with a throttled request
// and a region whose replication fails.
func TestFromEnvironmentOverHTTP(t *testing.T) {
	srv, _ := serverEnv(t, fakearm.Options{LROPolls: 1, ReplicationPolls: 1})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := azure.FromEnvironment(ctx, "", nil)
	require.NoError(t, err)
	assert.Equal(t, srv.SubscriptionID(), p.SubscriptionID())

	_, _, err = ensure.EnsureResourceGroup(ctx, p, cloud.ResourceGroup{Name: "flatcar", Location: loc})
	require.NoError(t, err)
	sa, _, err := ensure.EnsureStorageAccount(ctx, p, cloud.StorageAccount{Name: "flatcar", ResourceGroup: "flatcar", Location: loc})
	require.NoError(t, err)
	c := "publish" + randomHex(3)
	require.NoError(t, p.EnsureContainer(ctx, sa.Name, c))
	_, _, err = ensure.EnsureGallery(ctx, p, cloud.Gallery{Name: "flatcar_gallery", ResourceGroup: "flatcar", Location: loc,
		Community: &cloud.CommunityInfo{PublicNamePrefix: "flatcar4capi", PublisherURI: "https://www.flatcar.org/",
			PublisherContact: "infra@flatcar-linux.org", EULA: "https://kinvolk.io/legal/open-source/"}})
	require.NoError(t, err)
	g, _, err := ensure.EnsureCommunity(ctx, p, "flatcar", "flatcar_gallery")
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(g.PublicName(), "flatcar4capi-"), g.PublicName())
	_, _, err = ensure.EnsureImageDefinition(ctx, p, cloudtest.Definition("flatcar", "flatcar_gallery", "flatcar-stable-amd64", "flatcar-stable-amd64"), time.Now())
	require.NoError(t, err)

	img := makeVHD(t, 4<<20, 64<<10, 0)
	r := ref(sa, c, "flatcar-stable.vhd")
	f, err := openFile(img.path)
	require.NoError(t, err)
	defer f.Close()
	_, err = p.UploadPageBlob(ctx, r, cloud.PageSource{Reader: f, Size: int64(len(img.content)), Ranges: img.ranges}, false)
	require.NoError(t, err)

	// Throttled once, answered after the retry.
	srv.Inject(fakearm.Fault{API: "GalleryImageVersionsClient.BeginCreateOrUpdate", Method: http.MethodPut, Status: http.StatusTooManyRequests,
		Code: "TooManyRequests", RetryAfter: 20 * time.Millisecond})
	v, outcome, err := ensure.EnsureImageVersion(ctx, p, cloud.ImageVersion{Name: "4152.2.3", ResourceGroup: "flatcar", Gallery: "flatcar_gallery",
		Definition: "flatcar-stable-amd64", Source: cloud.ImageSource{Kind: cloud.SourceVHD, URI: r.URL(), StorageAccountID: sa.ID}}, time.Now())
	require.NoError(t, err)
	assert.Equal(t, cloud.Created, outcome)
	assert.Zero(t, srv.PendingFaults())

	// The region fails at once: the PATCH's version reads Failed.
	srv.FailReplication("southeastasia", "Replication to Southeast Asia failed.")
	_, _, err = ensure.Replicate(ctx, p, ensure.ReplicateRequest{ResourceGroup: "flatcar", Gallery: "flatcar_gallery", Definition: "flatcar-stable-amd64",
		Version: "4152.2.3", Regions: []string{"eastus", "southeastasia"}})
	require.ErrorIs(t, err, ensure.ErrReplicationIncomplete)
	require.ErrorIs(t, err, ensure.ErrVersionFailed)
	assert.Contains(t, err.Error(), "southeastasia (Replication to Southeast Asia failed.)")
	assert.Contains(t, err.Error(), "az sig image-version delete --resource-group flatcar --gallery-name flatcar_gallery")

	// Export to a VHD through a disk, as sig_to_vhd does.
	d, err := p.CreateDiskFromImageVersion(ctx, cloud.Disk{Name: "export", ResourceGroup: "flatcar", SourceImageVersionID: v.ID})
	require.NoError(t, err)
	sas, err := p.GrantDiskAccess(ctx, "flatcar", "export", time.Hour)
	require.NoError(t, err)
	dest := ref(sa, c, "export.vhd")
	b, err := p.CopyBlob(ctx, sas, dest, false)
	require.NoError(t, err)
	assert.Equal(t, d.SizeBytes, b.Size)
	require.NoError(t, p.RevokeDiskAccess(ctx, "flatcar", "export"))
	require.NoError(t, p.DeleteDisk(ctx, "flatcar", "export"))

	// Every ARM call went over HTTP to the fake, polls included.
	var puts, polls int
	for _, rq := range srv.Requests() {
		if rq.Method == http.MethodPut {
			puts++
		}
		if rq.Poll {
			polls++
		}
	}
	assert.Positive(t, puts)
	assert.Positive(t, polls)
}

func TestFromEnvironmentErrors(t *testing.T) {
	ctx := context.Background()
	t.Run("no subscription", func(t *testing.T) {
		t.Setenv(azure.EnvSubscription, "")
		_, err := azure.FromEnvironment(ctx, "", nil)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "--subscription")
		assert.Contains(t, err.Error(), azure.EnvSubscription)
	})
	t.Run("unknown subscription", func(t *testing.T) {
		serverEnv(t, fakearm.Options{})
		_, err := azure.FromEnvironment(ctx, "11111111-2222-3333-4444-555555555555", nil)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "not found or not accessible")
		assert.True(t, cloud.HasCode(err, cloud.CodeSubscriptionNotFound), "%v", err)
	})
	t.Run("argument wins", func(t *testing.T) {
		srv, _ := serverEnv(t, fakearm.Options{})
		t.Setenv(azure.EnvSubscription, "not-this-one")
		p, err := azure.FromEnvironment(ctx, srv.SubscriptionID(), nil)
		require.NoError(t, err)
		assert.Equal(t, srv.SubscriptionID(), p.SubscriptionID())
	})
}
