// Package local is imgflow's simulated Azure subscription: the default
// target and the fake cloud every test runs against.
//
// It implements cloud.Provider with Azure's semantics for the operations
// imgflow uses (error codes, ARM ids, idempotent PUTs, immutable fields,
// source checks), keeps its state in a directory (state.json plus blob
// data files) or in memory, and replicates image versions instantly.
package local

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/internal/deepcopy"
)

// TargetName is the name of this target.
const TargetName = "local"

// Options configure a local provider. The zero value is ready to use.
type Options struct {
	// Rand is the source of GUIDs (the subscription id of a new state,
	// community public names); nil means crypto/rand.
	Rand io.Reader
	// Now is the clock for creation times; nil means time.Now.
	Now func() time.Time
	// Locations replaces the list of Azure locations
	// (azrules.DefaultLocations, the fake ARM's too).
	Locations []cloud.Location
	// Marketplace replaces the simulated marketplace
	// (cloud.SimulatedMarketplace): each image's versions, in every
	// physical region.
	Marketplace map[cloud.MarketplaceImage][]string
	// ReadOnly opens a state directory for display (imgflow state,
	// plan): nothing in it is created, locked, cleaned or written, and
	// every change fails. A missing directory reads as an empty state.
	ReadOnly bool
	// SubscriptionID is the id of a new state's subscription (default: a
	// random GUID). An existing state of another subscription is an
	// error.
	SubscriptionID string
	// Tenant, when set, joins the provider to a tenant whose other
	// subscriptions it reads sources from (see Tenant).
	Tenant *Tenant
}

// Provider is a simulated Azure subscription. It is safe for concurrent
// use.
type Provider struct {
	// mu guards st and closed. Long blob transfers run outside it.
	mu     sync.Mutex
	st     *State
	closed bool

	// statePath is dir/state.json; "" when nothing is persisted (memory).
	statePath string
	// blobDir holds blob data (<account>/<container>/<blob>).
	blobDir string
	// lockFile holds the flock of a persistent state directory.
	lockFile *os.File
	// tempDir is the memory provider's private blob directory.
	tempDir string
	// beforeDataRemoval, set only by tests, runs between saving the state
	// of a delete and removing the deleted resource's data file; an error
	// stops the delete there, as a crash would.
	beforeDataRemoval func(dataFile string) error

	// readOnly: see Options.ReadOnly.
	readOnly bool

	rand      *lockedReader
	now       func() time.Time
	locations []cloud.Location
	locIndex  azrules.Regions
	// marketplace is read-only once the provider is made.
	marketplace map[cloud.MarketplaceImage][]string

	// tenant and published: see Tenant.
	tenant    *Tenant
	published atomic.Pointer[State]
	// newSub is Options.SubscriptionID.
	newSub string
}

var _ cloud.Provider = (*Provider)(nil)

// errClosed is returned by every method once Close was called.
var errClosed = errors.New("local provider is closed")

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

func newProvider(opts Options) *Provider {
	p := &Provider{now: opts.Now, locations: opts.Locations, marketplace: opts.Marketplace, tenant: opts.Tenant, newSub: opts.SubscriptionID}
	r := opts.Rand
	if r == nil {
		r = rand.Reader
	}
	p.rand = &lockedReader{r: r}
	if p.now == nil {
		p.now = time.Now
	}
	if p.locations == nil {
		p.locations = azrules.DefaultLocations()
	}
	p.locIndex = azrules.NewRegions(p.locations)
	if p.marketplace == nil {
		p.marketplace = cloud.SimulatedMarketplace()
	}
	return p
}

// Open opens (creating it when needed) the persistent state directory dir:
// dir/state.json and blob data under dir/blobs. It takes an exclusive lock
// on dir/lock, so a second Open of the same directory fails until Close,
// and removes the data files that no resource in the state refers to.
func Open(dir string, opts Options) (*Provider, error) {
	if opts.ReadOnly {
		return openReadOnly(dir, opts)
	}
	p := newProvider(opts)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create state directory: %w", err)
	}
	lf, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	p.lockFile = lf
	p.statePath = filepath.Join(dir, "state.json")
	p.blobDir = filepath.Join(dir, "blobs")
	fail := func(err error) (*Provider, error) {
		lf.Close()
		return nil, err
	}
	// Temp files left by a run that died mid-transfer: nobody else can be
	// writing them while we hold the lock.
	if err := os.RemoveAll(filepath.Join(p.blobDir, tmpDirName)); err != nil {
		return fail(fmt.Errorf("clean blob directory: %w", err))
	}
	if err := os.MkdirAll(filepath.Join(p.blobDir, tmpDirName), 0o755); err != nil {
		return fail(fmt.Errorf("create blob directory: %w", err))
	}
	if err := removeStateTemps(dir); err != nil {
		return fail(err)
	}
	st, ok, err := loadState(p.statePath)
	if err != nil {
		return fail(err)
	}
	if !ok {
		sub, err := p.newSubscription()
		if err != nil {
			return fail(err)
		}
		st = newState(sub)
		if err := saveState(p.statePath, st); err != nil {
			return fail(fmt.Errorf("write state: %w", err))
		}
	}
	if err := p.checkSubscription(st); err != nil {
		return fail(err)
	}
	if err := p.removeOrphanData(st); err != nil {
		return fail(err)
	}
	p.setState(st)
	p.tenant.add(p)
	return p, nil
}

// openReadOnly opens dir for display: state.json is replaced by a rename,
// so reading it without the lock sees one whole state, also while a run
// holds the directory.
func openReadOnly(dir string, opts Options) (*Provider, error) {
	p := newProvider(opts)
	p.readOnly = true
	p.statePath = filepath.Join(dir, "state.json")
	p.blobDir = filepath.Join(dir, "blobs")
	st, ok, err := loadState(p.statePath)
	if err != nil {
		return nil, err
	}
	if !ok {
		sub, err := p.newSubscription()
		if err != nil {
			return nil, err
		}
		st = newState(sub)
	}
	if err := p.checkSubscription(st); err != nil {
		return nil, err
	}
	p.setState(st)
	p.tenant.add(p)
	return p, nil
}

// removeStateTemps removes the temp files of state saves that a killed
// process left (see saveState); the caller holds the directory lock.
func removeStateTemps(dir string) error {
	temps, err := filepath.Glob(filepath.Join(dir, ".state-*.json"))
	if err != nil {
		return err
	}
	for _, t := range temps {
		if err := os.Remove(t); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("remove a state save's temp file: %w", err)
		}
	}
	return nil
}

// errReadOnly is returned by every change of a read-only provider.
var errReadOnly = errors.New("local provider is open read-only (for display): nothing can be changed")

// NewMemory returns a provider whose state lives in memory; blob data goes
// to a private temporary directory that Close removes.
func NewMemory(opts Options) (*Provider, error) {
	p := newProvider(opts)
	sub, err := p.newSubscription()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "imgflow-local-")
	if err != nil {
		return nil, err
	}
	p.tempDir = dir
	p.blobDir = filepath.Join(dir, "blobs")
	if err := os.MkdirAll(filepath.Join(p.blobDir, tmpDirName), 0o755); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	p.setState(newState(sub))
	p.tenant.add(p)
	return p, nil
}

// Close releases the state directory lock, or removes a memory provider's
// blob data. Closing twice is harmless.
func (p *Provider) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	var errs []error
	if p.lockFile != nil {
		errs = append(errs, unlockDir(p.lockFile))
	}
	if p.tempDir != "" {
		errs = append(errs, os.RemoveAll(p.tempDir))
	}
	return errors.Join(errs...)
}

// Snapshot returns a deep copy of the state, for `imgflow state` and tests.
func (p *Provider) Snapshot() *State {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.st.clone()
}

// ScratchDir is a directory for the temporary files of a run on this
// state (a simulated build's VHD): Open empties it under the state's lock,
// so what a killed process left goes when the state is next opened (a
// resume, gc), and nobody else writes in it meanwhile.
func (p *Provider) ScratchDir() string { return filepath.Join(p.blobDir, tmpDirName) }

// BlobPath is the file holding a blob's data. The file exists only once
// the blob does.
func (p *Provider) BlobPath(ref cloud.BlobRef) string {
	return p.blobFile(ref.Account, ref.Container, ref.Name)
}

// Target implements cloud.Provider.
func (p *Provider) Target() string { return TargetName }

// SubscriptionID implements cloud.Provider.
func (p *Provider) SubscriptionID() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.st.SubscriptionID
}

// tmpDirName is where blob data is written before being renamed into
// place; a leading dot cannot clash with a storage account name.
const tmpDirName = ".tmp"

func (p *Provider) blobFile(account, container, name string) string {
	parts := []string{p.blobDir, pathSegment(key(account)), pathSegment(container)}
	for _, seg := range strings.Split(name, "/") {
		parts = append(parts, pathSegment(seg))
	}
	return filepath.Join(parts...)
}

// pathSegment maps one "/"-separated part of a blob name to a file name
// that cannot escape its directory; escaping keeps the mapping one-to-one.
func pathSegment(s string) string {
	switch s {
	case "":
		return "%"
	case ".":
		return "%2E"
	case "..":
		return "%2E%2E"
	}
	return url.PathEscape(s)
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
		return errClosed
	}
	return fn(p.st)
}

// update runs fn on a copy of the state and, when fn succeeds, saves the
// copy and makes it current: a failing call changes nothing.
func (p *Provider) update(ctx context.Context, fn func(st *State) error) error {
	return p.updateRemoving(ctx, func(st *State) (string, error) { return "", fn(st) })
}

// updateRemoving is update for a delete: fn removes a resource from the
// state and returns its data file ("" for none), which is removed only
// once the state without the resource is saved. A crash in between leaves
// an unreferenced data file, which nothing reads and the next Open removes
// (removeOrphanData); the other order would leave a resource whose data
// is gone. The file goes under the lock, so a resource created again
// under the same name cannot lose its new file.
func (p *Provider) updateRemoving(ctx context.Context, fn func(st *State) (dataFile string, err error)) error {
	return p.updateRemovingAll(ctx, func(st *State) ([]string, error) {
		file, err := fn(st)
		if file == "" {
			return nil, err
		}
		return []string{file}, err
	})
}

// updateRemovingAll is updateRemoving for a delete of several resources
// with data files (a resource group and everything in it).
func (p *Provider) updateRemovingAll(ctx context.Context, fn func(st *State) (dataFiles []string, err error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errClosed
	}
	if p.readOnly {
		return errReadOnly
	}
	// A copy, not a JSON round trip: the state file's encoding is not needed
	// for what stays in memory (TestDeepCopyOfAPopulatedState).
	next := deepcopy.Of(p.st)
	files, err := fn(next)
	if err != nil {
		return err
	}
	if p.statePath != "" {
		if err := saveState(p.statePath, next); err != nil {
			return fmt.Errorf("write state: %w", err)
		}
	}
	p.setState(next)
	for _, file := range files {
		if file == "" {
			continue
		}
		if p.beforeDataRemoval != nil {
			if err := p.beforeDataRemoval(file); err != nil {
				return err
			}
		}
		// The resource is deleted whatever happens to its file: a file that
		// cannot be removed is only unreferenced.
		_ = os.Remove(file)
	}
	return nil
}

// stamp is the current time as stored: UTC without a monotonic reading.
func (p *Provider) stamp() time.Time { return p.now().UTC().Round(0) }
