package azure_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azure"
	"github.com/imgflow/imgflow/cloud/azure/fakearm"
)

// The provider lists a marketplace image's versions with
// VirtualMachineImages List, and the SDK decodes the fake's array.
func TestMarketplaceVersionsOnTheFake(t *testing.T) {
	img := cloud.MarketplaceImage{Publisher: "Canonical", Offer: "0001-com-ubuntu-server-jammy", SKU: "22_04-lts-gen2"}
	f := fakearm.New(fakearm.Options{Marketplace: map[cloud.MarketplaceImage][]string{img: {"22.04.202607290", "22.04.202608140"}}})
	ctx := context.Background()
	p, err := azure.New(ctx, azure.Options{SubscriptionID: f.SubscriptionID(), Credential: f.Credential(), ARM: f.ClientOptions(), PollFrequency: time.Millisecond})
	require.NoError(t, err)

	got, err := p.ListMarketplaceImageVersions(ctx, "eastus", img)
	require.NoError(t, err)
	assert.Equal(t, []string{"22.04.202607290", "22.04.202608140"}, got)
	assert.Contains(t, f.Requests()[len(f.Requests())-1].Path,
		"/providers/Microsoft.Compute/locations/eastus/publishers/Canonical/artifacttypes/vmimage/offers/0001-com-ubuntu-server-jammy/skus/22_04-lts-gen2/versions")

	_, err = p.ListMarketplaceImageVersions(ctx, "eastus", cloud.MarketplaceImage{Publisher: "Canonical", Offer: "nope", SKU: "nope"})
	assert.True(t, cloud.IsNotFound(err), "%v", err)
	assert.ErrorContains(t, err, "NotFound")
}
