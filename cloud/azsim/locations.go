package azsim

import (
	"context"
	"slices"

	"github.com/imgflow/imgflow/cloud"
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
