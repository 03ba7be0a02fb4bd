package azsim

import (
	"context"

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
	if p.rt != nil { // nothing in a workflow changes the marketplace
		return p.rt.base.ListMarketplaceImageVersions(ctx, location, img)
	}
	loc, err := p.locIndex.Resolve(location, "Microsoft.Compute/virtualMachines", "")
	if err != nil {
		return nil, err
	}
	if _, versions, ok := cloud.FindMarketplaceImage(p.marketplace, img); ok {
		return versions, nil
	}
	return nil, cloud.Errorf(cloud.CodeNotFound, "", "Artifact: VMImage was not found: no marketplace image %s in %s.", img, loc)
}
