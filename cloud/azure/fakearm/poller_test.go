package fakearm_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources/v3"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/storage/armstorage/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azure/fakearm"
)

// sdkWorld is a fake with a resource group, a storage account, a gallery
// and a definition, made through the SDK's clients.
type sdkWorld struct {
	f    *fakearm.Fake
	cf   *armcompute.ClientFactory
	ctx  context.Context
	poll *runtime.PollUntilDoneOptions
}

func newSDKWorld(t *testing.T, opts fakearm.Options) *sdkWorld {
	t.Helper()
	f := fakearm.New(opts)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	w := &sdkWorld{f: f, ctx: ctx, poll: &runtime.PollUntilDoneOptions{Frequency: time.Millisecond}}
	rg, err := armresources.NewResourceGroupsClient(f.SubscriptionID(), f.Credential(), f.ClientOptions())
	require.NoError(t, err)
	_, err = rg.CreateOrUpdate(ctx, "rg", armresources.ResourceGroup{Location: to("westeurope")}, nil)
	require.NoError(t, err)
	sa, err := armstorage.NewAccountsClient(f.SubscriptionID(), f.Credential(), f.ClientOptions())
	require.NoError(t, err)
	sp, err := sa.BeginCreate(ctx, "rg", "acct", armstorage.AccountCreateParameters{Location: to("westeurope"),
		Kind: to(armstorage.KindStorageV2), SKU: &armstorage.SKU{Name: to(armstorage.SKUNameStandardLRS)}}, nil)
	require.NoError(t, err)
	_, err = sp.PollUntilDone(ctx, w.poll)
	require.NoError(t, err)
	w.cf, err = armcompute.NewClientFactory(f.SubscriptionID(), f.Credential(), f.ClientOptions())
	require.NoError(t, err)
	gp, err := w.cf.NewGalleriesClient().BeginCreateOrUpdate(ctx, "rg", "gal", armcompute.Gallery{Location: to("westeurope")}, nil)
	require.NoError(t, err)
	_, err = gp.PollUntilDone(ctx, w.poll)
	require.NoError(t, err)
	dp, err := w.cf.NewGalleryImagesClient().BeginCreateOrUpdate(ctx, "rg", "gal", "def", armcompute.GalleryImage{Location: to("westeurope"),
		Properties: &armcompute.GalleryImageProperties{
			Identifier: &armcompute.GalleryImageIdentifier{Publisher: to("p"), Offer: to("o"), SKU: to("s")},
			OSType:     to(armcompute.OperatingSystemTypesLinux), OSState: to(armcompute.OperatingSystemStateTypesGeneralized),
			HyperVGeneration: to(armcompute.HyperVGenerationV2),
		}}, nil)
	require.NoError(t, err)
	_, err = dp.PollUntilDone(ctx, w.poll)
	require.NoError(t, err)
	return w
}

func (w *sdkWorld) versionBody() armcompute.GalleryImageVersion {
	return armcompute.GalleryImageVersion{Location: to("westeurope"), Properties: &armcompute.GalleryImageVersionProperties{
		PublishingProfile: &armcompute.GalleryImageVersionPublishingProfile{TargetRegions: []*armcompute.TargetRegion{
			{Name: to("westeurope")}, {Name: to("eastus")}}},
		StorageProfile: &armcompute.GalleryImageVersionStorageProfile{OSDiskImage: &armcompute.GalleryOSDiskImage{
			Source: &armcompute.GalleryDiskImageSource{URI: to("https://acct.blob.core.windows.net/vhds/os.vhd"),
				StorageAccountID: to("/subscriptions/" + w.f.SubscriptionID() + "/resourceGroups/rg/providers/Microsoft.Storage/storageAccounts/acct")}}}}}
}

// The SDK's own pollers pick ARM's protocols (never the SDK fake's) and
// drive every long operation imgflow uses to its end: a version PUT ends
// only after its replication, a disk grant returns its SAS through the
// Location form.
func TestSDKPollersDriveARMOperations(t *testing.T) {
	const delay = 150 * time.Millisecond
	w := newSDKWorld(t, fakearm.Options{LROPolls: 2, RegionDelays: map[string]time.Duration{"eastus": delay}})
	start := time.Now()
	vp, err := w.cf.NewGalleryImageVersionsClient().BeginCreateOrUpdate(w.ctx, "rg", "gal", "def", "1.0.0", w.versionBody(), nil)
	require.NoError(t, err)
	v, err := vp.PollUntilDone(w.ctx, w.poll)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, time.Since(start), delay, "the PUT ended before replication did")
	assert.Equal(t, armcompute.GalleryProvisioningStateSucceeded, *v.Properties.ProvisioningState)
	assert.Equal(t, "West Europe", *v.Location)

	d, err := w.cf.NewDisksClient().BeginCreateOrUpdate(w.ctx, "rg", "disk", armcompute.Disk{Location: to("westeurope"),
		Properties: &armcompute.DiskProperties{CreationData: &armcompute.CreationData{CreateOption: to(armcompute.DiskCreateOptionFromImage),
			GalleryImageReference: &armcompute.ImageDiskReference{ID: v.ID}}}}, nil)
	require.NoError(t, err)
	_, err = d.PollUntilDone(w.ctx, w.poll)
	require.NoError(t, err)
	gp, err := w.cf.NewDisksClient().BeginGrantAccess(w.ctx, "rg", "disk", armcompute.GrantAccessData{Access: to(armcompute.AccessLevelRead), DurationInSeconds: to(int32(300))}, nil)
	require.NoError(t, err)
	grant, err := gp.PollUntilDone(w.ctx, w.poll)
	require.NoError(t, err)
	assert.NotEmpty(t, grant.AccessSAS)
	rp, err := w.cf.NewDisksClient().BeginRevokeAccess(w.ctx, "rg", "disk", nil)
	require.NoError(t, err)
	_, err = rp.PollUntilDone(w.ctx, w.poll)
	require.NoError(t, err)
	del, err := w.cf.NewDisksClient().BeginDelete(w.ctx, "rg", "disk", nil)
	require.NoError(t, err)
	_, err = del.PollUntilDone(w.ctx, w.poll)
	require.NoError(t, err)

	var opPolls int
	for _, r := range w.f.Requests() {
		assert.NotContains(t, r.Path, "/get/fake/status", "the SDK fake's protocol leaked")
		if r.Poll {
			assert.Regexp(t, `/providers/Microsoft\.(Compute|Storage)/locations/[a-z0-9]+/(operations|asyncoperations)/[0-9a-f-]+$`, r.Path)
			opPolls++
		}
	}
	assert.Greater(t, opPolls, 6, "every operation was polled, LROPolls times at least")
}

// A failed operation reaches the SDK poller's caller with the service's
// code and message, in both forms.
func TestSDKPollersReportFailures(t *testing.T) {
	w := newSDKWorld(t, fakearm.Options{})
	w.f.Inject(fakearm.Fault{LRO: true, API: "GalleryImagesClient.BeginCreateOrUpdate", Path: "/images/other",
		Code: "InternalExecutionError", Message: "An internal execution error occurred."})
	p, err := w.cf.NewGalleryImagesClient().BeginCreateOrUpdate(w.ctx, "rg", "gal", "other", armcompute.GalleryImage{Location: to("westeurope"),
		Properties: &armcompute.GalleryImageProperties{
			Identifier: &armcompute.GalleryImageIdentifier{Publisher: to("p"), Offer: to("o"), SKU: to("other")},
			OSType:     to(armcompute.OperatingSystemTypesLinux), OSState: to(armcompute.OperatingSystemStateTypesGeneralized),
		}}, nil)
	require.NoError(t, err)
	_, err = p.PollUntilDone(w.ctx, w.poll)
	var re *azcore.ResponseError
	require.True(t, errors.As(err, &re), "%v", err)
	assert.Equal(t, "InternalExecutionError", re.ErrorCode)
	assert.Contains(t, err.Error(), "An internal execution error occurred.")

	// A region that fails fails the version's PUT, with the region named.
	vp, err := w.cf.NewGalleryImageVersionsClient().BeginCreateOrUpdate(w.ctx, "rg", "gal", "def", "1.0.0", w.versionBody(), nil)
	require.NoError(t, err)
	v, err := vp.PollUntilDone(w.ctx, w.poll)
	require.NoError(t, err)
	w.f.FailReplication("eastus", "Replication failed: quota exceeded.")
	vp, err = w.cf.NewGalleryImageVersionsClient().BeginCreateOrUpdate(w.ctx, "rg", "gal", "def", "2.0.0", w.versionBody(), nil)
	require.NoError(t, err)
	_, err = vp.PollUntilDone(w.ctx, w.poll)
	require.True(t, errors.As(err, &re), "%v", err)
	assert.Equal(t, cloud.CodeReplicationFailed, re.ErrorCode)
	assert.Contains(t, err.Error(), "East US: Replication failed: quota exceeded.")
	got, err := w.cf.NewGalleryImageVersionsClient().Get(w.ctx, "rg", "gal", "def", "2.0.0", nil)
	require.NoError(t, err)
	assert.Equal(t, armcompute.GalleryProvisioningStateFailed, *got.Properties.ProvisioningState, "the failed version stays")

	// The Location form (a disk grant) answers the error with its status.
	d, err := w.cf.NewDisksClient().BeginCreateOrUpdate(w.ctx, "rg", "disk", armcompute.Disk{Location: to("westeurope"),
		Properties: &armcompute.DiskProperties{CreationData: &armcompute.CreationData{CreateOption: to(armcompute.DiskCreateOptionFromImage),
			GalleryImageReference: &armcompute.ImageDiskReference{ID: v.ID}}}}, nil)
	require.NoError(t, err)
	_, err = d.PollUntilDone(w.ctx, w.poll)
	require.NoError(t, err)
	w.f.Inject(fakearm.Fault{LRO: true, API: "DisksClient.BeginGrantAccess", Status: http.StatusConflict, Code: "OperationNotAllowed",
		Message: "The disk is attached to a VM."})
	gp, err := w.cf.NewDisksClient().BeginGrantAccess(w.ctx, "rg", "disk", armcompute.GrantAccessData{Access: to(armcompute.AccessLevelRead), DurationInSeconds: to(int32(300))}, nil)
	require.NoError(t, err)
	_, err = gp.PollUntilDone(w.ctx, w.poll)
	require.True(t, errors.As(err, &re), "%v", err)
	assert.Equal(t, http.StatusConflict, re.StatusCode)
	assert.Equal(t, "OperationNotAllowed", re.ErrorCode)
}
