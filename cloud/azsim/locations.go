package azsim

import (
	"context"
	"slices"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
)

// ListLocations implements cloud.Provider.
func (p *Provider) ListLocations(ctx context.Context) ([]cloud.Location, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if p.rt != nil {
		if err := p.loadLocations(ctx); err != nil {
			return nil, err
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.locations), nil
}

func (p *Provider) loadLocations(ctx context.Context) error {
	p.mu.Lock()
	set := p.rt.locationsSet
	p.mu.Unlock()
	if set {
		return nil
	}
	locs, err := p.rt.base.ListLocations(ctx)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.locations, p.rt.locationsSet = locs, true
	p.locIndex = azrules.IndexRegions(locs) // the base's answer, ours alone
	return nil
}
