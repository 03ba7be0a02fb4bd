package overlay

import (
	"context"

	"github.com/imgflow/imgflow/cloud/azsim"
)

// JoinTenant lets p find the sources its writes refer to in the overlays
// of the other subscriptions of the tenant, as Azure lets an image
// version, a disk or a VM use a managed image or version of another
// subscription of the tenant (see azsim.Tenant): peer returns the
// overlay of a subscription, nil when the run has none. Call it before p
// is used.
func (p *Provider) JoinTenant(peer func(ctx context.Context, sub string) *Provider) {
	p.SetTenant(peers(peer))
}

// peers is a tenant of overlays as the simulation sees it.
type peers func(ctx context.Context, sub string) *Provider

func (f peers) Peer(ctx context.Context, sub string) *azsim.Provider {
	if q := f(ctx, sub); q != nil {
		return q.Provider
	}
	return nil
}

// Peers is none: a dry run's VHD sources are in the build's subscription.
func (f peers) Peers() []*azsim.Provider { return nil }
