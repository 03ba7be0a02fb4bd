package conformance_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azure"
	"github.com/imgflow/imgflow/cloud/azure/azuritetest"
	"github.com/imgflow/imgflow/cloud/azure/fakearm"
	"github.com/imgflow/imgflow/cloud/conformance"
	"github.com/imgflow/imgflow/cloud/local"
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
// Azurite), as `imgflow plan --target azure` uses it. The cases that
// create the suite's storage accounts do not run: their names are
// Azurite's accounts, whose blob endpoints answer before the fake ARM
// has them, so the overlay takes them for accounts of someone else
// (StorageAccountAlreadyTaken), as it would on Azure.
func TestAzureDryRun(t *testing.T) {
	az := azuritetest.Shared(t)
	conformance.RunDryRun(t, func(t *testing.T) cloud.Provider { return newFakeAzure(t, az) },
		"EnsureTwice", "VersionFromVHD", "VersionFromVersion", "ManagedImage", "Replication", "DiskExport", "BlobCopy", "BlobErrors")
}

// newFakeAzure is an empty subscription of the Azure provider over an
// in-process fake ARM whose blobs live in Azurite.
func newFakeAzure(t *testing.T, az *azuritetest.Server) cloud.Provider {
	f := fakearm.New(fakearm.Options{
		LROPolls:         1,
		ReplicationDelay: 20 * time.Millisecond,
		Blob:             &fakearm.BlobBackend{Endpoint: az.Endpoint, Key: azuritetest.Key},
	})
	p, err := azure.New(context.Background(), azure.Options{
		SubscriptionID: f.SubscriptionID(),
		Credential:     f.Credential(),
		ARM:            f.ClientOptions(),
		BlobEndpoint:   az.Endpoint,
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
