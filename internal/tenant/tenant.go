// Package tenant gives a run the providers of the subscriptions of its
// target's tenant other than the target's own (builtins.Subscriptions):
// one provider per subscription, opened when a workflow first names it
// and reached as the target is (the local target: a state directory of
// its own; Azure: the same credential), and for the dry passes
// (validation, plan) a dry-run overlay per subscription, the overlays
// seeing each other's recorded changes.
package tenant

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/local"
	"github.com/imgflow/imgflow/cloud/overlay"
)

// Opener opens the provider of subscription sub (a valid id, not the
// target's).
type Opener func(ctx context.Context, sub string) (cloud.Provider, error)

// Cache is a builtins.Subscriptions that opens each subscription once.
type Cache struct {
	open Opener

	mu   sync.Mutex
	subs map[string]cloud.Provider
	// order is the opening order, for Close and Opened.
	order []cloud.Provider
}

var _ builtins.Subscriptions = (*Cache)(nil)

// NewCache returns a Cache opening subscriptions with open.
func NewCache(open Opener) *Cache { return &Cache{open: open, subs: map[string]cloud.Provider{}} }

// Provider implements builtins.Subscriptions.
func (c *Cache) Provider(ctx context.Context, sub string) (cloud.Provider, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.subs[strings.ToLower(sub)]; ok {
		return p, nil
	}
	p, err := c.open(ctx, sub)
	if err != nil {
		return nil, err
	}
	c.subs[strings.ToLower(sub)] = p
	c.order = append(c.order, p)
	return p, nil
}

// Opened lists the providers opened so far, in order.
func (c *Cache) Opened() []cloud.Provider {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]cloud.Provider(nil), c.order...)
}

// Close closes the providers that can be (local states release their
// locks).
func (c *Cache) Close() error {
	var errs []error
	for _, p := range c.Opened() {
		if cl, ok := p.(interface{ Close() error }); ok {
			errs = append(errs, cl.Close())
		}
	}
	return errors.Join(errs...)
}

// LocalDir is the state directory of another subscription of the local
// target whose state is in dir: subscriptions/<id> in it, the same
// layout (a Tenant of states).
func LocalDir(dir, sub string) string {
	return filepath.Join(dir, "subscriptions", strings.ToLower(sub))
}

// Local is the Opener of the local target's other subscriptions: a
// state directory each (LocalDir), opened as the target's is (opts,
// ReadOnly for display) and joined to its tenant t.
func Local(dir string, t *local.Tenant, opts local.Options) Opener {
	return func(_ context.Context, sub string) (cloud.Provider, error) {
		o := opts
		o.SubscriptionID, o.Tenant = sub, t
		return local.Open(LocalDir(dir, sub), o)
	}
}

// NewLocal is the Cache of the local target's other subscriptions (see
// Local), which t opens as well when a source in one of them is read
// before any step named it (a resumed run).
func NewLocal(dir string, t *local.Tenant, opts local.Options) *Cache {
	return joined(NewCache(Local(dir, t, opts)), t)
}

// NewMemory is NewLocal for in-memory subscriptions (Memory).
func NewMemory(t *local.Tenant, opts local.Options) *Cache {
	return joined(NewCache(Memory(t, opts)), t)
}

// joined makes t open its subscriptions through c. Opening a local state
// waits on nothing remote, hence no caller's context.
func joined(c *Cache, t *local.Tenant) *Cache {
	t.OpenWith(func(sub string) *local.Provider {
		p, err := c.Provider(context.Background(), sub)
		if err != nil {
			return nil
		}
		lp, _ := p.(*local.Provider)
		return lp
	})
	return c
}

// Memory is the Opener of in-memory subscriptions joined to t (tests,
// imgflow test).
func Memory(t *local.Tenant, opts local.Options) Opener {
	return func(_ context.Context, sub string) (cloud.Provider, error) {
		o := opts
		o.SubscriptionID, o.Tenant = sub, t
		return local.NewMemory(o)
	}
}

// ForPass returns what interp.Config.Subscriptions wants: apply for the
// apply pass, and for each dry pass a fresh set of overlays over apply's
// providers, joined with the pass's own overlay (primary).
func ForPass(apply builtins.Subscriptions) func(primary cloud.Provider, dry bool) builtins.Subscriptions {
	return func(primary cloud.Provider, dry bool) builtins.Subscriptions {
		if !dry {
			return apply
		}
		return newDry(primary, apply)
	}
}

// dry is the overlays of one dry pass.
type dry struct {
	primary *overlay.Provider // nil when the pass's provider is no overlay
	base    builtins.Subscriptions

	mu       sync.Mutex
	overlays map[string]*overlay.Provider
}

func newDry(primary cloud.Provider, base builtins.Subscriptions) *dry {
	d := &dry{base: base, overlays: map[string]*overlay.Provider{}}
	if o, ok := primary.(*overlay.Provider); ok {
		d.primary = o
		o.JoinTenant(d.peer)
	}
	return d
}

// Provider implements builtins.Subscriptions.
func (d *dry) Provider(ctx context.Context, sub string) (cloud.Provider, error) {
	d.mu.Lock()
	if o, ok := d.overlays[strings.ToLower(sub)]; ok {
		d.mu.Unlock()
		return o, nil
	}
	d.mu.Unlock()
	p, err := d.base.Provider(ctx, sub)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if o, ok := d.overlays[strings.ToLower(sub)]; ok {
		return o, nil
	}
	o := overlay.New(p)
	o.JoinTenant(d.peer)
	d.overlays[strings.ToLower(sub)] = o
	return o, nil
}

// peer is the pass's overlay of sub, opened when a source names it first
// (a resumed run replays the steps that named it); nil when it cannot be.
func (d *dry) peer(ctx context.Context, sub string) *overlay.Provider {
	if d.primary != nil && strings.EqualFold(d.primary.SubscriptionID(), sub) {
		return d.primary
	}
	if cloud.ValidateSubscriptionID(sub) != nil {
		return nil
	}
	p, err := d.Provider(ctx, sub)
	if err != nil {
		return nil // the source is then not found, as ARM answers
	}
	o, _ := p.(*overlay.Provider)
	return o
}
