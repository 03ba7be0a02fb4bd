package conformance_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azure"
	"github.com/imgflow/imgflow/cloud/azure/azuritetest"
	"github.com/imgflow/imgflow/cloud/azure/fakearm"
	"github.com/imgflow/imgflow/cloud/cloudtest"
	"github.com/imgflow/imgflow/cloud/conformance"
	"github.com/imgflow/imgflow/cloud/local"
	"github.com/imgflow/imgflow/cloud/overlay"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

func TestLocal(t *testing.T) {
	conformance.Run(t, func(t *testing.T) cloud.Provider {
		p, err := local.NewMemory(local.Options{})
		require.NoError(t, err)
		t.Cleanup(func() { p.Close() })
		return p
	})
}

// TestAzure runs the suite through the real SDK clients against the fake
// ARM (in process) and Azurite for blobs. The fake answers as ARM does:
// long operations report InProgress before their end, a version's PUT or
// PATCH ends only after its replication, locations come back as display
// names.
func TestAzure(t *testing.T) {
	az := azuritetest.Shared(t)
	conformance.Run(t, func(t *testing.T) cloud.Provider { return newFakeAzure(t, az) })
}

// TestAzureDryRun runs the suite against the dry run of the Azure target
// (the overlay reading through the SDK clients from the fake ARM and
// Azurite), as `imgflow plan --target azure` uses it. Every case runs:
// the suite's storage accounts are Azurite's, and the overlay, seeing
// their blob endpoints answer, would take them for someone else's
// (StorageAccountAlreadyTaken) were Azurite not behind the fake's blob
// gate, which answers only for accounts the fake ARM holds, as Azure's
// DNS does.
func TestAzureDryRun(t *testing.T) {
	az := azuritetest.Shared(t)
	conformance.RunDryRun(t, func(t *testing.T) cloud.Provider { return newFakeAzure(t, az) })
}

// TestAzureDryRunStorageAccountNames: in the dry run of the Azure target,
// a storage account name is taken when the subscription holds it in
// another resource group (its blob endpoint answers), and free when only
// the emulator knows it (Azurite serves it, the fake ARM has no such
// account), as a name nobody created is on Azure.
func TestAzureDryRunStorageAccountNames(t *testing.T) {
	ctx := context.Background()
	base := newFakeAzure(t, azuritetest.Shared(t))
	_, err := base.CreateResourceGroup(ctx, cloud.ResourceGroup{Name: "owner", Location: conformance.Location})
	require.NoError(t, err)
	_, err = base.CreateStorageAccount(ctx, cloud.StorageAccount{Name: "imgflowconf2", ResourceGroup: "owner", Location: conformance.Location})
	require.NoError(t, err)
	// "mine" exists, so that what the dry run did not create shows as a
	// missing account, not a missing group.
	_, err = base.CreateResourceGroup(ctx, cloud.ResourceGroup{Name: "mine", Location: conformance.Location})
	require.NoError(t, err)

	// The Azure target asks Storage (checkNameAvailability) in the
	// preflight after the dry run, which lists every problem at once.
	dry := overlay.New(base)
	_, err = dry.CreateResourceGroup(ctx, cloud.ResourceGroup{Name: "mine", Location: conformance.Location})
	require.NoError(t, err)
	_, err = dry.CreateStorageAccount(ctx, cloud.StorageAccount{Name: "imgflowconf2", ResourceGroup: "mine", Location: conformance.Location})
	require.NoError(t, err, "the dry run records the create; the preflight judges the name")
	err = dry.Preflight(ctx)
	require.Error(t, err, "the subscription holds imgflowconf2 in group owner")
	assert.Contains(t, err.Error(), "imgflowconf2")
	assert.Contains(t, err.Error(), "cannot be created")

	sa, err := dry.CreateStorageAccount(ctx, cloud.StorageAccount{Name: "imgflowtest2", ResourceGroup: "mine", Location: conformance.Location})
	require.NoError(t, err, "Azurite serves imgflowtest2, but nobody created it")
	assert.Equal(t, "mine", sa.ResourceGroup)
	again := overlay.New(base)
	_, err = again.CreateStorageAccount(ctx, cloud.StorageAccount{Name: "imgflowconf2", ResourceGroup: "owner", Location: conformance.Location})
	require.NoError(t, err, "the owner's group may update its own account")
	require.NoError(t, again.Preflight(ctx), "an update is no new name")

	_, err = base.GetStorageAccount(ctx, "mine", "imgflowtest2")
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeResourceNotFound) // the dry run created nothing
}

// newFakeAzure is an empty subscription of the Azure provider over an
// in-process fake ARM whose blobs live in Azurite, reached through the
// fake's blob gate.
func newFakeAzure(t *testing.T, az *azuritetest.Server) cloud.Provider {
	f := fakearm.New(fakearm.Options{
		LROPolls:         1,
		ReplicationDelay: 20 * time.Millisecond,
		Blob:             &fakearm.BlobBackend{Endpoint: az.Endpoint, Key: azuritetest.Key},
	})
	gate := f.ServeBlobs(t, az.URL)
	p, err := azure.New(context.Background(), azure.Options{
		SubscriptionID: f.SubscriptionID(),
		Credential:     f.Credential(),
		ARM:            f.ClientOptions(),
		BlobEndpoint:   func(account string) string { return gate + "/" + account },
		StorageKey:     azuritetest.KeyFunc,
		PollFrequency:  time.Millisecond,
	})
	require.NoError(t, err)
	return p
}

// TestLocalDryRun runs the suite against the dry run of the local target,
// as plan and run's validation pass use it.
func TestLocalDryRun(t *testing.T) {
	conformance.RunDryRun(t, func(t *testing.T) cloud.Provider {
		p, err := local.NewMemory(local.Options{})
		require.NoError(t, err)
		t.Cleanup(func() { p.Close() })
		return p
	})
}

func TestIsReadTellsReadsFromWrites(t *testing.T) {
	for _, op := range []string{"ListLocations", "GetResourceGroup", "ListGalleries", "GetGallery", "ListImageDefinitions",
		"GetImageDefinition", "GetImageVersion", "GetManagedImage", "GetStorageAccount", "GetDisk", "GetBlob", "ReadBlob"} {
		assert.True(t, conformance.IsRead(op), op)
	}
	for _, op := range []string{"CreateResourceGroup", "CreateGallery", "ShareCommunity", "CreateImageDefinition", "DeleteImageDefinition",
		"CreateImageVersion", "UpdateImageVersion", "DeleteImageVersion", "CreateManagedImage", "DeleteManagedImage",
		"CreateStorageAccount", "CreateDiskFromImageVersion", "GrantDiskAccess", "RevokeDiskAccess", "DeleteDisk",
		"EnsureContainer", "UploadPageBlob", "CopyBlob", "SetBlobMetadata", "DeleteBlob"} {
		assert.False(t, conformance.IsRead(op), op)
	}
}
