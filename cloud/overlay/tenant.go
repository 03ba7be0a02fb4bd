package overlay

import (
	"context"
	"strings"
)

// JoinTenant lets p find the sources its writes refer to in the overlays
// of the other subscriptions of the tenant, as Azure lets an image
// version, a disk or a VM use a managed image or version of another
// subscription of the tenant: peer returns the overlay of a
// subscription, nil when the run has none. Call it before p is used.
func (p *Provider) JoinTenant(peer func(ctx context.Context, sub string) *Provider) { p.peer = peer }

// peerOf is the overlay of another subscription sub, nil when it is p's
// own or the tenant has none.
func (p *Provider) peerOf(ctx context.Context, sub string) *Provider {
	if p.peer == nil || strings.EqualFold(sub, p.sub) {
		return nil
	}
	if q := p.peer(ctx, sub); q != nil && q != p {
		return q
	}
	return nil
}
