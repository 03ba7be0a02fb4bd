package local

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
	return slices.Clone(p.locations), nil
}
