package fakearm_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azure/fakearm"
)

func TestServerAnswersARMErrors(t *testing.T) {
	srv := fakearm.NewServer(t, fakearm.Options{})
	get := func(path string) (int, map[string]any) {
		resp, err := http.Get(srv.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		var m map[string]any
		_ = json.Unmarshal(body, &m)
		return resp.StatusCode, m
	}
	status, body := get("/subscriptions/" + srv.SubscriptionID() + "/resourcegroups/nope?api-version=2024-11-01")
	assert.Equal(t, http.StatusNotFound, status)
	assert.Equal(t, cloud.CodeResourceGroupNotFound, body["error"].(map[string]any)["code"])

	status, body = get("/subscriptions/" + srv.SubscriptionID() + "/providers/Microsoft.Network/virtualNetworks?api-version=1")
	assert.Equal(t, http.StatusNotFound, status)
	assert.Contains(t, body["error"].(map[string]any)["message"], "no operation for GET")

	status, body = get("/subscriptions/" + srv.SubscriptionID() + "/locations?api-version=2022-12-01")
	assert.Equal(t, http.StatusOK, status)
	assert.NotEmpty(t, body["value"])
}

// TestWithoutBlobBackend: with no blob service, VHD sources are only
// checked for their account, and a disk's access URL has Azure's shape.
func TestWithoutBlobBackend(t *testing.T) {
	f := fakearm.New(fakearm.Options{})
	ctx := context.Background()
	opts := f.ClientOptions()
	rg, err := armresources.NewResourceGroupsClient(f.SubscriptionID(), f.Credential(), opts)
	require.NoError(t, err)
	_, err = rg.CreateOrUpdate(ctx, "rg", armresources.ResourceGroup{Location: to("westeurope")}, nil)
	require.NoError(t, err)
	cf, err := armcompute.NewClientFactory(f.SubscriptionID(), f.Credential(), opts)
	require.NoError(t, err)
	done := func(err error) {
		t.Helper()
		require.NoError(t, err)
	}
	poll := &runtime.PollUntilDoneOptions{Frequency: time.Millisecond}

	gp, err := cf.NewGalleriesClient().BeginCreateOrUpdate(ctx, "rg", "gal", armcompute.Gallery{Location: to("westeurope")}, nil)
	done(err)
	_, err = gp.PollUntilDone(ctx, poll)
	done(err)
	dp, err := cf.NewGalleryImagesClient().BeginCreateOrUpdate(ctx, "rg", "gal", "def", armcompute.GalleryImage{Location: to("westeurope"),
		Properties: &armcompute.GalleryImageProperties{
			Identifier: &armcompute.GalleryImageIdentifier{Publisher: to("p"), Offer: to("o"), SKU: to("s")},
			OSType:     to(armcompute.OperatingSystemTypesLinux), OSState: to(armcompute.OperatingSystemStateTypesGeneralized),
			HyperVGeneration: to(armcompute.HyperVGenerationV2),
		}}, nil)
	done(err)
	_, err = dp.PollUntilDone(ctx, poll)
	done(err)

	// The VHD's account must exist in the subscription.
	vhd := armcompute.GalleryImageVersion{Location: to("westeurope"), Properties: &armcompute.GalleryImageVersionProperties{
		StorageProfile: &armcompute.GalleryImageVersionStorageProfile{OSDiskImage: &armcompute.GalleryOSDiskImage{
			Source: &armcompute.GalleryDiskImageSource{URI: to("https://acct.blob.core.windows.net/vhds/os.vhd")}}}}}
	_, err = cf.NewGalleryImageVersionsClient().BeginCreateOrUpdate(ctx, "rg", "gal", "def", "1.0.0", vhd, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "storage account acct not found")
	assert.Zero(t, f.PendingFaults())
}

func to[T any](v T) *T { return &v }
