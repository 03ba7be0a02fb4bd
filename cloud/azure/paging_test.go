package azure_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azure/fakearm"
	"github.com/imgflow/imgflow/cloud/ensure"
)

// TestListsFollowNextLink: ARM pages lists; the fake answers two items a
// page, and every list the target makes reads them all.
func TestListsFollowNextLink(t *testing.T) {
	w := newWorld(t, fakearm.Options{PageSize: 2}, nil)
	_, _, err := ensure.EnsureResourceGroup(w.ctx, w.p, cloud.ResourceGroup{Name: "rg", Location: loc})
	require.NoError(t, err)
	for i := range 5 {
		_, err := w.p.CreateGallery(w.ctx, cloud.Gallery{Name: fmt.Sprintf("gal%d", i), ResourceGroup: "rg", Location: loc})
		require.NoError(t, err)
	}
	for i := range 5 {
		_, err := w.p.CreateImageDefinition(w.ctx, cloud.ImageDefinition{Name: fmt.Sprintf("def%d", i), ResourceGroup: "rg", Gallery: "gal0", Location: loc,
			OSType: "Linux", OSState: "Generalized", HyperVGeneration: "V2", Publisher: "p", Offer: "o", SKU: fmt.Sprintf("s%d", i)})
		require.NoError(t, err)
	}
	gals, err := w.p.ListGalleries(w.ctx)
	require.NoError(t, err)
	assert.Len(t, gals, 5)
	defs, err := w.p.ListImageDefinitions(w.ctx, "rg", "gal0")
	require.NoError(t, err)
	assert.Len(t, defs, 5)
	assert.Equal(t, "def4", defs[4].Name)

	pages := map[string]int{}
	for _, r := range w.f.Requests() {
		if r.Method == http.MethodGet && r.Status == http.StatusOK {
			pages[r.API]++
		}
	}
	assert.Equal(t, 3, pages["GalleriesClient.NewListPager"], "5 galleries in pages of 2")
	assert.Equal(t, 3, pages["GalleryImagesClient.NewListByGalleryPager"], "5 definitions in pages of 2")
}
