package local

import (
	"context"
	"slices"

	"github.com/imgflow/imgflow/cloud"
)

// ListMarketplaceImageVersions implements cloud.Provider from the
// simulated marketplace: the same versions in every physical region; an
// image it does not have is NotFound, as the compute resource provider
// answers it.
func (p *Provider) ListMarketplaceImageVersions(ctx context.Context, location string, img cloud.MarketplaceImage) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	loc, ok := p.locIndex.Physical(location)
	if !ok {
		return nil, cloud.Errorf(cloud.CodeNotFound, "", "No location '%s': list marketplace images in a physical region.", location)
	}
	for known, versions := range p.marketplace {
		if equalImage(known, img) {
			return slices.Clone(versions), nil
		}
	}
	return nil, cloud.Errorf(cloud.CodeNotFound, "", "Artifact: VMImage was not found: no marketplace image %s in %s.", img, loc)
}

// equalImage compares marketplace names as Azure does, without case.
func equalImage(a, b cloud.MarketplaceImage) bool {
	return key(a.Publisher) == key(b.Publisher) && key(a.Offer) == key(b.Offer) && key(a.SKU) == key(b.SKU)
}
