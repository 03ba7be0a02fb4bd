package azure

import (
	"context"
	"fmt"
	"strings"
)

// ForSubscription returns a provider of another subscription sub, reached
// with p's credential and options (the gallery of a build in another
// subscription: AgentBaker's GALLERY_SUBSCRIPTION_ID). Like Connect, it
// checks that the credential can read sub and that sub is Enabled; and
// that sub is in p's tenant, where Azure lets an image version, disk or
// VM of one subscription use another's images.
func (p *Provider) ForSubscription(ctx context.Context, sub string) (*Provider, error) {
	o := p.opts
	o.SubscriptionID = sub
	q, err := New(ctx, o)
	if err != nil {
		return nil, err
	}
	if err := q.checkSubscription(ctx); err != nil {
		return nil, err
	}
	own, err := p.tenantID(ctx)
	if err != nil {
		return nil, err
	}
	other, err := q.tenantID(ctx)
	if err != nil {
		return nil, err
	}
	if own != "" && other != "" && !strings.EqualFold(own, other) {
		return nil, fmt.Errorf("azure: subscription %s is in tenant %s, not in the target's tenant %s: Azure reads image sources across subscriptions of one tenant only", sub, other, own)
	}
	return q, nil
}

// tenantID is the tenant of p's subscription ("" when ARM does not say).
func (p *Provider) tenantID(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, credentialCheckTimeout)
	defer cancel()
	res, err := p.subs.Get(ctx, p.sub, nil)
	if err != nil {
		return "", fmt.Errorf("azure: read subscription %s: %w", p.sub, azErr(err, "/subscriptions/"+p.sub))
	}
	if res.TenantID == nil {
		return "", nil
	}
	return *res.TenantID, nil
}
