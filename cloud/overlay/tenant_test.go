package overlay_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/local"
	"github.com/imgflow/imgflow/cloud/overlay"
)

// A plan of AgentBaker's shape: the managed image recorded in the build
// subscription's overlay, the version from it in the gallery
// subscription's, then a disk from that version back in the build's.
func TestTenantOverlaysSeeEachOthersChanges(t *testing.T) {
	f := newFixture(t)
	gbase, err := local.NewMemory(local.Options{SubscriptionID: "00000000-0000-0000-0000-00000000beef"})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, gbase.Close()) })
	build, gal := f.overlay(t), overlay.New(gbase)
	_, err = gal.CreateResourceGroup(ctx, cloud.ResourceGroup{Name: "rg1", Location: "westeurope"})
	require.NoError(t, err)
	_, err = gal.CreateGallery(ctx, cloud.Gallery{Name: "gal1", ResourceGroup: "rg1", Location: "westeurope"})
	require.NoError(t, err)
	_, err = gal.CreateImageDefinition(ctx, f.def)
	require.NoError(t, err)
	img, err := build.CreateManagedImage(ctx, cloud.ManagedImage{Name: "img", ResourceGroup: "rg1", OSType: cloud.OSTypeLinux,
		HyperVGeneration: cloud.HyperVGenV2, Source: f.vhdSource(f.vhd)})
	require.NoError(t, err)
	want := cloud.ImageVersion{Name: "2.0.0", ResourceGroup: "rg1", Gallery: "gal1", Definition: "flatcar",
		Source: cloud.ImageSource{Kind: cloud.SourceManagedImage, ID: img.ID}}

	_, err = gal.CreateImageVersion(ctx, want)
	var ce *cloud.Error
	require.ErrorAs(t, err, &ce, "alone, the gallery's overlay cannot see the build's")
	assert.Equal(t, http.StatusNotFound, ce.StatusCode)

	peers := map[string]*overlay.Provider{build.SubscriptionID(): build, gal.SubscriptionID(): gal}
	for _, o := range peers {
		o.JoinTenant(func(_ context.Context, sub string) *overlay.Provider { return peers[sub] })
	}
	v, err := gal.CreateImageVersion(ctx, want)
	require.NoError(t, err)
	assert.Equal(t, cloud.ImageVersionID(gbase.SubscriptionID(), "rg1", "gal1", "flatcar", "2.0.0"), v.ID)
	_, err = build.CreateDiskFromImageVersion(ctx, cloud.Disk{Name: "export", ResourceGroup: "rg1", Location: "westeurope", SourceImageVersionID: v.ID})
	require.NoError(t, err, "a disk of the build subscription from the other's planned version")
	assert.Empty(t, gbase.Snapshot().ResourceGroups, "the base is only read")
}
