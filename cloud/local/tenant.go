package local

import (
	"fmt"
	"strings"
	"sync"

	"github.com/imgflow/imgflow/cloud"
)

// Tenant is the simulated subscriptions of one tenant: the local
// providers opened with it find each other's resources where Azure lets
// one subscription use another's of the same tenant, with the caller's
// access: the source of an image version or managed image (a managed
// image, a version, a VHD in a storage account), the version a disk or a
// VM is made from. Each subscription keeps its own state directory.
//
// A provider reads a peer's last saved state without the peer's lock
// (a state, once current, is never changed: updates replace it), so two
// subscriptions using each other's resources at once cannot deadlock.
type Tenant struct {
	mu    sync.Mutex
	peers map[string]*Provider
	// open opens a subscription not open yet (OpenWith).
	open func(sub string) *Provider
}

// OpenWith makes Peer open a subscription of the tenant that is not open
// yet with open (nil when it cannot be): a resumed run replays the steps
// that named it, yet a disk may still be made from its version.
func (t *Tenant) OpenWith(open func(sub string) *Provider) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.open = open
}

// NewTenant returns an empty tenant.
func NewTenant() *Tenant { return &Tenant{peers: map[string]*Provider{}} }

func (t *Tenant) add(p *Provider) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.peers[key(p.SubscriptionID())] = p
}

// Peer returns the open provider of subscription sub, nil when the
// tenant has none.
func (t *Tenant) Peer(sub string) *Provider {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	p, open := t.peers[key(sub)], t.open
	t.mu.Unlock()
	if p != nil || open == nil || cloud.ValidateSubscriptionID(sub) != nil {
		return p
	}
	return open(sub) // outside t.mu: opening adds the provider
}

func (t *Tenant) all() []*Provider {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]*Provider, 0, len(t.peers))
	for _, p := range t.peers {
		out = append(out, p)
	}
	return out
}

// setState makes st the current state; see Tenant for why it is
// published apart from the lock.
func (p *Provider) setState(st *State) {
	p.st = st
	p.published.Store(st)
}

// peerState is the provider and current state of another subscription
// of the tenant, nil when sub is this one's or the tenant has no such.
func (p *Provider) peerState(own *State, sub string) (*Provider, *State) {
	if sub == "" || strings.EqualFold(sub, own.SubscriptionID) {
		return nil, nil
	}
	q := p.tenant.Peer(sub)
	if q == nil || q == p {
		return nil, nil
	}
	st := q.published.Load()
	if st == nil {
		return nil, nil
	}
	return q, st
}

// accountPeer is the provider and state of the other subscription of the
// tenant holding storage account name (names are global), nil if none.
func (p *Provider) accountPeer(own *State, account string) (*Provider, *State) {
	for _, q := range p.tenant.all() {
		if q == p {
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

// sourcePeer is the provider and state holding src when it is in another
// subscription of the tenant: an ARM id's subscription, or a VHD's
// storage account this subscription lacks.
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

// newSubscription is the id of a new state: Options.SubscriptionID, else
// a random GUID.
func (p *Provider) newSubscription() (string, error) {
	if p.newSub != "" {
		return p.newSub, nil
	}
	return p.rand.guid()
}

// checkSubscription refuses a state of another subscription than
// Options.SubscriptionID asks for.
func (p *Provider) checkSubscription(st *State) error {
	if p.newSub != "" && !strings.EqualFold(p.newSub, st.SubscriptionID) {
		return fmt.Errorf("the local state of %s is subscription %s, not %s", p.statePath, st.SubscriptionID, p.newSub)
	}
	return nil
}
