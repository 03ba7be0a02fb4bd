package azsim_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azsim"
)

// countingBase is an empty simulated subscription whose reads are counted.
func countingBase(t *testing.T) (cloud.Provider, func() []string) {
	base, err := azsim.New(nil, azsim.Options{})
	require.NoError(t, err)
	var mu sync.Mutex
	var ops []string
	counted := cloud.Intercept(base, cloud.Hooks{Before: func(_ context.Context, op string) error {
		mu.Lock()
		defer mu.Unlock()
		ops = append(ops, op)
		return nil
	}})
	return counted, func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := ops
		ops = nil
		return out
	}
}

// Below a resource the run created, the base has nothing: it is not
// asked. What the run deleted is not asked again either, so it stays
// deleted.
func TestReadThroughAsksTheBaseOnlyWhatItMayHave(t *testing.T) {
	ctx := context.Background()
	base, ops := countingBase(t)
	_, err := base.CreateResourceGroup(ctx, cloud.ResourceGroup{Name: "old", Location: "westeurope"})
	require.NoError(t, err)
	ops()
	dry, err := azsim.New(nil, azsim.Options{Base: base, DryRun: true})
	require.NoError(t, err)

	_, err = dry.CreateResourceGroup(ctx, cloud.ResourceGroup{Name: "new", Location: "westeurope"})
	require.NoError(t, err)
	assert.Equal(t, []string{"ListLocations", "GetResourceGroup"}, ops())
	_, err = dry.GetGallery(ctx, "new", "g")
	require.True(t, cloud.IsNotFound(err), "%v", err)
	assert.Empty(t, ops(), "nothing below a group the run created is in the base")

	_, err = dry.GetResourceGroup(ctx, "old")
	require.NoError(t, err)
	assert.Equal(t, []string{"GetResourceGroup"}, ops())
	require.NoError(t, dry.DeleteResourceGroup(ctx, "old"))
	_, err = dry.GetResourceGroup(ctx, "old")
	require.True(t, cloud.IsNotFound(err), "the run deleted it: %v", err)
	assert.Empty(t, ops(), "asked once")
	_, err = base.GetResourceGroup(ctx, "old")
	require.NoError(t, err, "the base keeps it")

	assert.Equal(t, []cloud.Change{
		{Op: cloud.OpCreate, Kind: cloud.KindResourceGroup, ID: cloud.ResourceGroupID(dry.SubscriptionID(), "new")},
		{Op: cloud.OpDelete, Kind: cloud.KindResourceGroup, ID: cloud.ResourceGroupID(dry.SubscriptionID(), "old")},
	}, dry.Changes())
}

// A read-through simulation keeps no marketplace of its own: it answers
// with the base's, whatever the simulated default holds.
func TestReadThroughMarketplaceIsTheBases(t *testing.T) {
	ctx := context.Background()
	mine := cloud.MarketplaceImage{Publisher: "p", Offer: "o", SKU: "s"}
	base, err := azsim.New(nil, azsim.Options{Marketplace: map[cloud.MarketplaceImage][]string{mine: {"1.0.0"}}})
	require.NoError(t, err)
	over, err := azsim.New(nil, azsim.Options{Base: base, DryRun: true})
	require.NoError(t, err)
	got, err := over.ListMarketplaceImageVersions(ctx, "westus", mine)
	require.NoError(t, err)
	assert.Equal(t, []string{"1.0.0"}, got)
	_, err = over.ListMarketplaceImageVersions(ctx, "westus",
		cloud.MarketplaceImage{Publisher: "Canonical", Offer: "0001-com-ubuntu-server-jammy", SKU: "22_04-lts-gen2"})
	assert.True(t, cloud.IsNotFound(err), "not in the base's marketplace: %v", err)
}
