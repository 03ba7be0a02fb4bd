package azsim

import (
	"context"
	"strings"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/internal/deepcopy"
)

// Tenant finds the simulations of the other subscriptions of a tenant,
// whose resources a subscription uses where Azure lets it with the
// caller's access: the source of an image version or managed image (a
// managed image, a version, a VHD in a storage account), the version a
// disk or a VM is made from. The local target's tenant opens each
// subscription's state directory; the dry run's holds each
// subscription's overlay.
//
// A simulation reads a peer's current state without the peer's lock (a
// state, once current, is never changed: changes and read-through loads
// replace it), so two subscriptions using each other's resources at once
// cannot deadlock.
type Tenant interface {
	// Peer is the simulation of subscription sub, nil when the tenant
	// has none.
	Peer(ctx context.Context, sub string) *Provider
	// Peers are the simulations open now (to find a storage account,
	// whose name is global).
	Peers() []*Provider
}

// SetTenant makes p find other subscriptions' resources in t (as
// Options.Tenant). Call it before p is used.
func (p *Provider) SetTenant(t Tenant) { p.tenant = t }

// setState makes st the current state; the caller holds p.mu. See Tenant
// for why it is published apart from the lock.
func (p *Provider) setState(st *State) {
	p.version++
	p.st = st
	p.published.Store(st)
}

// mutate changes the current state, under p.mu, as a read-through load
// does: in place, or on a copy it then publishes when other
// subscriptions may be reading it (see Tenant).
func (p *Provider) mutate(fn func(st *State)) {
	if p.tenant == nil {
		p.version++
		fn(p.st)
		return
	}
	next := deepcopy.Of(p.st)
	fn(next)
	p.setState(next)
}

// peer is the simulation of another subscription sub of the tenant, nil
// when sub is p's own or the tenant has none.
func (p *Provider) peer(ctx context.Context, own, sub string) *Provider {
	if p.tenant == nil || sub == "" || strings.EqualFold(sub, own) {
		return nil
	}
	if q := p.tenant.Peer(ctx, sub); q != nil && q != p {
		return q
	}
	return nil
}

// peerState is the simulation and current state of another subscription
// of the tenant, nil when sub is this one's or the tenant has no such.
func (p *Provider) peerState(own *State, sub string) (*Provider, *State) {
	q := p.peer(context.Background(), own.SubscriptionID, sub)
	if q == nil {
		return nil, nil
	}
	st := q.published.Load()
	if st == nil {
		return nil, nil
	}
	return q, st
}

// accountPeer is the simulation and state of the other subscription of
// the tenant holding storage account name (names are global), nil if
// none.
func (p *Provider) accountPeer(own *State, account string) (*Provider, *State) {
	if p.tenant == nil {
		return nil, nil
	}
	for _, q := range p.tenant.Peers() {
		if q == nil || q == p {
			continue
		}
		st := q.published.Load()
		if st == nil || strings.EqualFold(st.SubscriptionID, own.SubscriptionID) {
			continue
		}
		if _, sa := st.findStorageAccount(account); sa != nil {
			return q, st
		}
	}
	return nil, nil
}

// sourcePeer is the simulation and state holding src when it is in
// another subscription of the tenant: an ARM id's subscription, or a
// VHD's storage account this subscription lacks.
func (p *Provider) sourcePeer(own *State, src cloud.ImageSource) (*Provider, *State) {
	if src.Kind != cloud.SourceVHD {
		return p.peerState(own, idSubscription(src.ID))
	}
	ref, err := cloud.ParseBlobURL(src.URI)
	if err != nil {
		return nil, nil
	}
	if _, sa := own.findStorageAccount(ref.Account); sa != nil {
		return nil, nil
	}
	return p.accountPeer(own, ref.Account)
}

// idSubscription is the subscription of an ARM id, "" if it is not one.
func idSubscription(id string) string {
	rid, err := cloud.ParseResourceID(id)
	if err != nil {
		return ""
	}
	return rid.Subscription
}
