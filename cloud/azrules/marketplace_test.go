package azrules_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
)

func TestLatestMarketplaceVersionComparesNumbers(t *testing.T) {
	// Text order would pick 3.9.1; Azure's latest is the highest number.
	assert.Equal(t, "3.10.0", azrules.LatestMarketplaceVersion([]string{"3.9.1", "3.10.0", "3.2.5"}))
	assert.Equal(t, "22.04.202608140", azrules.LatestMarketplaceVersion([]string{"22.04.202607290", "22.04.202608140"}))
	assert.Empty(t, azrules.LatestMarketplaceVersion(nil))
}

func TestResolveMarketplaceVersion(t *testing.T) {
	img := cloud.MarketplaceImage{Publisher: "Canonical", Offer: "0001-com-ubuntu-server-jammy", SKU: "22_04-lts-gen2"}
	versions := []string{"22.04.202608140", "22.04.202607290"}

	got, err := azrules.ResolveMarketplaceVersion(versions, img, "eastus", "latest")
	require.NoError(t, err)
	assert.Equal(t, "22.04.202608140", got, "latest is the highest listed")
	got, err = azrules.ResolveMarketplaceVersion(versions, img, "eastus", "22.04.202607290")
	require.NoError(t, err)
	assert.Equal(t, "22.04.202607290", got, "a pinned version is the build's")

	_, err = azrules.ResolveMarketplaceVersion(versions, img, "eastus", "22.04.202001010")
	require.Error(t, err)
	assert.True(t, cloud.IsNotFound(err))
	assert.ErrorContains(t, err, "no version 22.04.202001010 in eastus (it has 22.04.202607290, 22.04.202608140)")
	_, err = azrules.ResolveMarketplaceVersion(nil, img, "eastus", "latest")
	assert.ErrorContains(t, err, "Canonical:0001-com-ubuntu-server-jammy:22_04-lts-gen2 has no version in eastus")
}
