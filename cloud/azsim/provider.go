// Package azsim is imgflow's one simulated Azure: ARM's and Storage's
// request semantics (error codes, ARM ids, idempotent PUTs, immutable
// fields, source checks, nested deletes) written once, over cloud's types
// and an in-memory State.
//
// Three seams make the targets that use it:
//   - Store persists the state after every change, and Data keeps the
//     bytes of blobs and compute resources: the local target
//     (cloud/local) is azsim with state.json and data files;
//   - Base is a target read through when a lookup misses, with what the
//     run deleted remembered (see readthrough.go), and DryRun answers with
//     placeholders for what only the platform generates and keeps a
//     change log: the dry run (cloud/overlay) is azsim over the real
//     target.
package azsim

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/internal/deepcopy"
)

// Options configure a simulation. The zero value is a memory-only
// subscription with a new random id.
type Options struct {
	// Target is what Target returns ("local" unless set).
	Target string
	// Rand is the source of GUIDs (the subscription id of a new state,
	// community public names, SAS signatures); nil means crypto/rand.
	Rand io.Reader
	// Now is the clock for creation times and grant expiry; nil means
	// time.Now.
	Now func() time.Time
	// Locations replaces the list of Azure locations
	// (azrules.DefaultLocations); with a Base, the base's list is used.
	Locations []cloud.Location
	// Marketplace replaces the simulated marketplace
	// (cloud.SimulatedMarketplace): each image's versions, in every
	// physical region.
	Marketplace map[cloud.MarketplaceImage][]string
	// Store persists the state after every change; nil keeps it in
	// memory only.
	Store Store
	// Data keeps the content of blobs and compute resources; nil keeps
	// none (content reads as zeros) or, with a Base, the base's.
	Data Data
	// Base is read through: a lookup the state cannot answer asks it,
	// and nothing is ever written to it.
	Base cloud.Provider
	// DryRun answers with placeholders what only the platform generates
	// (community public names, disk SAS URLs, run command results) and
	// records every change (Changes).
	DryRun bool
	// Replication, when set, says how replication to each new target
	// region of a version goes (see replication.go); nil replicates at
	// once.
	Replication func(region string) Replication
	// Blobs, when set, holds the blobs of the state's storage accounts
	// (the fake ARM's blob backend): the state keeps no containers or
	// blobs of its own, and a VHD source is looked up there; Data then
	// opens their content by BlobKey.
	Blobs Blobs
	// DiskAccess, when set, opens and closes read access to a disk's
	// content where the reader finds it (the fake ARM's blob backend):
	// its SAS URL replaces the simulation's own.
	DiskAccess DiskAccess
	// RunOutput, when set, writes run commands' output blobs (the fake
	// ARM's blob backend); nil keeps none.
	RunOutput RunOutput
	// Tenant finds the other subscriptions of the tenant whose resources
	// this one uses (see Tenant); nil: none.
	Tenant Tenant
}

// Store persists the state of a simulation.
type Store interface {
	// Save persists st, the state after a change, before it becomes
	// current; an error undoes the change.
	Save(st *State) error
}

// Provider is a simulated Azure subscription. It is safe for concurrent
// use.
type Provider struct {
	// mu guards st, closed and changes. Long transfers and base reads
	// run outside it.
	mu      sync.Mutex
	st      *State
	closed  bool
	changes []cloud.Change
	// version counts the changes of st (setState and mutate), so that
	// a change made from one state can tell it is still current.
	version uint64

	target      string
	store       Store
	data        Data
	dryRun      bool
	rand        *lockedReader
	now         func() time.Time
	locations   []cloud.Location
	locIndex    azrules.Regions
	marketplace map[cloud.MarketplaceImage][]string

	replication func(region string) Replication
	blobs       Blobs
	diskAccess  DiskAccess
	runOutput   RunOutput

	// rt reads through to a base target (nil without one).
	rt *readThrough

	// tenant and published: see Tenant.
	tenant    Tenant
	published atomic.Pointer[State]
}

var _ cloud.Provider = (*Provider)(nil)

// ErrClosed is returned by every method once Close was called.
var ErrClosed = errors.New("simulated subscription is closed")

// lockedReader serialises reads of Rand by concurrent calls (math/rand
// sources are not safe for concurrent use).
type lockedReader struct {
	mu sync.Mutex
	r  io.Reader
}

func (l *lockedReader) guid() (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	id, err := uuid.NewRandomFromReader(l.r)
	if err != nil {
		return "", fmt.Errorf("generate GUID: %w", err)
	}
	return id.String(), nil
}

// read returns n bytes of Rand.
func (l *lockedReader) read(n int) ([]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := make([]byte, n)
	if _, err := io.ReadFull(l.r, b); err != nil {
		return nil, fmt.Errorf("read random bytes: %w", err)
	}
	return b, nil
}

// NewGUID returns a GUID from r (crypto/rand when nil), e.g. the
// subscription id of a new state.
func NewGUID(r io.Reader) (string, error) {
	if r == nil {
		r = rand.Reader
	}
	return (&lockedReader{r: r}).guid()
}

// New returns a simulation of st (a new subscription when nil, or the
// base's with a Base).
func New(st *State, opts Options) (*Provider, error) {
	p := &Provider{target: opts.Target, store: opts.Store, data: opts.Data, dryRun: opts.DryRun,
		now: opts.Now, locations: opts.Locations, marketplace: opts.Marketplace, tenant: opts.Tenant,
		replication: opts.Replication, blobs: opts.Blobs, diskAccess: opts.DiskAccess, runOutput: opts.RunOutput}
	r := opts.Rand
	if r == nil {
		r = rand.Reader
	}
	p.rand = &lockedReader{r: r}
	if p.now == nil {
		p.now = time.Now
	}
	if p.target == "" {
		p.target = "local"
	}
	if p.locations == nil {
		p.locations = azrules.DefaultLocations()
		p.locIndex = azrules.IndexRegions(p.locations) // never changed: ListLocations copies
	} else {
		p.locIndex = azrules.NewRegions(p.locations)
	}
	if p.marketplace == nil && opts.Base == nil { // a read-through asks the base's
		p.marketplace = cloud.SimulatedMarketplace()
	}
	if opts.Base != nil {
		p.target = opts.Base.Target()
		st = NewState(opts.Base.SubscriptionID())
		p.rt = newReadThrough(opts.Base)
		if p.data == nil {
			p.data = p.rt.data
		}
	}
	if p.data == nil {
		p.data = noData{}
	}
	if st == nil {
		sub, err := p.rand.guid()
		if err != nil {
			return nil, err
		}
		st = NewState(sub)
	}
	p.setState(st)
	return p, nil
}

// Close makes every later call fail with ErrClosed.
func (p *Provider) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
}

// Snapshot returns a deep copy of the state, for `imgflow state` and tests.
func (p *Provider) Snapshot() *State {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.st.clone()
}

// Changes lists the changes of a DryRun so far, in call order.
func (p *Provider) Changes() []cloud.Change {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.changes)
}

// Target implements cloud.Provider.
func (p *Provider) Target() string { return p.target }

// SubscriptionID implements cloud.Provider.
// It takes no lock (a state's subscription never changes): a tenant's
// lookup asks it of a simulation whose lock its caller holds.
func (p *Provider) SubscriptionID() string {
	return p.published.Load().SubscriptionID
}

// put is the change of a PUT: create when the resource did not exist.
func put(existed bool) string {
	if existed {
		return cloud.OpUpdate
	}
	return cloud.OpCreate
}

// view runs fn on the current state under the lock. fn must not keep or
// return pointers into the state.
func (p *Provider) view(ctx context.Context, fn func(st *State) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrClosed
	}
	return fn(p.st)
}

// tx is one change being made: the next state and what it logs and
// removes once it is saved.
type tx struct {
	st      *State
	changes []cloud.Change
	removed []Key
}

// log records a change of a DryRun.
func (t *tx) log(op, kind, id string) {
	t.changes = append(t.changes, cloud.Change{Op: op, Kind: kind, ID: id})
}

// remove asks for the content at k to be removed once the state without
// its resource is saved.
func (t *tx) remove(k Key) { t.removed = append(t.removed, k) }

// update runs fn on a copy of the state and, when fn succeeds, saves the
// copy and makes it current: a failing call changes nothing.
//
// The content of a deleted resource (tx.remove) goes only once the state
// without the resource is saved: a crash in between leaves unreferenced
// content, which nothing reads (and the local target removes when it
// next opens); the other order would leave a resource whose data is gone.
// It goes under the lock, so a resource created again under the same name
// cannot lose its new content.
func (p *Provider) update(ctx context.Context, fn func(t *tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrClosed
	}
	// A copy, not a JSON round trip: the state file's encoding is not needed
	// for what stays in memory (TestDeepCopyOfAPopulatedState).
	t := &tx{st: deepcopy.Of(p.st)}
	if err := fn(t); err != nil {
		return err
	}
	return p.commit(t)
}

// commit saves t's state and makes it current, then logs its changes
// and removes its deleted content; the caller holds p.mu.
func (p *Provider) commit(t *tx) error {
	if p.store != nil {
		if err := p.store.Save(t.st); err != nil {
			return fmt.Errorf("write state: %w", err)
		}
	}
	p.setState(t.st)
	if p.dryRun {
		p.changes = append(p.changes, t.changes...)
	}
	for _, k := range t.removed {
		if err := p.data.Remove(k); err != nil {
			return err
		}
	}
	return nil
}

// updateFound is update for a change whose target find looks up: when
// find fails on the current state (a delete of what is not there), its
// error is the answer, without the copy of the whole state update makes.
// find must only read.
func (p *Provider) updateFound(ctx context.Context, find func(st *State) error, fn func(t *tx) error) error {
	if err := p.view(ctx, find); err != nil {
		return err
	}
	return p.update(ctx, fn)
}

// stamp is the current time as stored: UTC without a monotonic reading.
func (p *Provider) stamp() time.Time { return p.now().UTC().Round(0) }

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// read returns a copy of the resource fn finds in the state.
func read[T any](ctx context.Context, p *Provider, fn func(st *State) (*T, error)) (*T, error) {
	var out T
	if err := p.view(ctx, func(st *State) error {
		v, err := fn(st)
		if err == nil {
			out = deepcopy.Of(*v)
		}
		return err
	}); err != nil {
		return nil, err
	}
	return &out, nil
}

// write runs fn as a change (update) and returns a copy of the resource
// it leaves.
func write[T any](ctx context.Context, p *Provider, fn func(t *tx) (*T, error)) (*T, error) {
	var out T
	if err := p.update(ctx, func(t *tx) error {
		v, err := fn(t)
		if err == nil {
			out = deepcopy.Of(*v)
		}
		return err
	}); err != nil {
		return nil, err
	}
	return &out, nil
}
