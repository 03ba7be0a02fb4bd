package conformance_test

import (
	"context"
	"testing"
	"time"

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
	conformance.Run(t, func(t *testing.T) cloud.Provider {
		f := fakearm.New(fakearm.Options{
			Locations:        local.DefaultLocations(),
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
	})
}
