package local_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/local"
)

func TestMarketplaceVersions(t *testing.T) {
	p, err := local.NewMemory(local.Options{Marketplace: map[cloud.MarketplaceImage][]string{
		{Publisher: "Canonical", Offer: "0001-com-ubuntu-server-jammy", SKU: "22_04-lts-gen2"}: {"22.04.202607290", "22.04.202608140"},
	}})
	require.NoError(t, err)
	defer p.Close()
	ctx := context.Background()
	got, err := p.ListMarketplaceImageVersions(ctx, "eastus", cloud.MarketplaceImage{Publisher: "canonical", Offer: "0001-com-ubuntu-server-JAMMY", SKU: "22_04-lts-gen2"})
	require.NoError(t, err, "names compare without case")
	assert.Equal(t, []string{"22.04.202607290", "22.04.202608140"}, got)

	_, err = p.ListMarketplaceImageVersions(ctx, "eastus", cloud.MarketplaceImage{Publisher: "Canonical", Offer: "0001-com-ubuntu-server-jammy", SKU: "nope"})
	assert.True(t, cloud.IsNotFound(err), "%v", err)
	assert.True(t, cloud.HasCode(err, cloud.CodeNotFound), "%v", err)
	_, err = p.ListMarketplaceImageVersions(ctx, "europe", cloud.MarketplaceImage{Publisher: "Canonical", Offer: "0001-com-ubuntu-server-jammy", SKU: "22_04-lts-gen2"})
	assert.Error(t, err, "a logical geography has no images")
}

func TestSimulatedMarketplaceHasTheAKSImages(t *testing.T) {
	p, err := local.NewMemory(local.Options{})
	require.NoError(t, err)
	defer p.Close()
	for _, img := range []cloud.MarketplaceImage{
		{Publisher: "Canonical", Offer: "0001-com-ubuntu-server-jammy", SKU: "22_04-lts-gen2"},
		{Publisher: "Canonical", Offer: "ubuntu-24_04-lts", SKU: "cvm"},
		{Publisher: "MicrosoftCBLMariner", Offer: "azure-linux-3", SKU: "azure-linux-3-arm64"},
	} {
		got, err := p.ListMarketplaceImageVersions(context.Background(), "eastus", img)
		require.NoError(t, err, img.String())
		assert.Len(t, got, 2, img.String())
	}
}
