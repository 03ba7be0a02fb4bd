package local

import (
	"context"
	"strings"
	"sync"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azsim"
)

// Tenant is the simulated subscriptions of one tenant: the local
// providers opened with it find each other's resources where Azure lets
// one subscription use another's of the same tenant (see azsim.Tenant).
// Each subscription keeps its own state directory.
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
	t.peers[strings.ToLower(p.SubscriptionID())] = p
}

// Peer returns the open provider of subscription sub, nil when the
// tenant has none.
func (t *Tenant) Peer(sub string) *Provider {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	p, open := t.peers[strings.ToLower(sub)], t.open
	t.mu.Unlock()
	if p != nil || open == nil || cloud.ValidateSubscriptionID(sub) != nil {
		return p
	}
	return open(sub) // outside t.mu: opening adds the provider
}

// simTenant is t as the simulations see it.
type simTenant struct{ t *Tenant }

func (s simTenant) Peer(_ context.Context, sub string) *azsim.Provider {
	// Opening a local state waits on nothing remote, hence no context.
	if q := s.t.Peer(sub); q != nil {
		return q.Provider
	}
	return nil
}

func (s simTenant) Peers() []*azsim.Provider {
	s.t.mu.Lock()
	defer s.t.mu.Unlock()
	out := make([]*azsim.Provider, 0, len(s.t.peers))
	for _, p := range s.t.peers {
		out = append(out, p.Provider)
	}
	return out
}
