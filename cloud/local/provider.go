// Package local is imgflow's simulated Azure subscription: the default
// target and the fake cloud every test runs against.
//
// It is the one simulation (cloud/azsim) with persistence: the state in a
// directory (state.json, saved atomically under an exclusive lock) and
// blob and compute content in sparse data files beside it, or in memory
// with the data files in a private temporary directory.
package local

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azsim"
)

// TargetName is the name of this target.
const TargetName = "local"

// PendingGUID stands for a GUID only the platform generates (see
// azsim.PendingGUID).
const PendingGUID = azsim.PendingGUID

// The state, as state.json holds it (see azsim.State).
type (
	State               = azsim.State
	ResourceGroupState  = azsim.ResourceGroupState
	GalleryState        = azsim.GalleryState
	DefinitionState     = azsim.DefinitionState
	StorageAccountState = azsim.StorageAccountState
	ContainerState      = azsim.ContainerState
	BlobState           = azsim.BlobState
	DiskGrantState      = azsim.DiskGrantState
)

// Options configure a local provider. The zero value is ready to use.
type Options struct {
	// Rand is the source of GUIDs (the subscription id of a new state,
	// community public names); nil means crypto/rand.
	Rand io.Reader
	// SubscriptionID is the subscription of a new state (NewMemory, or
	// Open of a directory without one); "" draws a GUID from Rand. Open
	// refuses an existing state of another subscription. The fake ARM
	// serves the one it was given.
	SubscriptionID string
	// Tenant, when set, joins the provider to a tenant whose other
	// subscriptions' resources it uses (see Tenant).
	Tenant *Tenant
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
}

// Provider is a simulated Azure subscription. It is safe for concurrent
// use.
type Provider struct {
	*azsim.Provider
	store *fileStore // nil in memory
	files *files

	closeOnce sync.Once
	// lockFile holds the flock of a persistent state directory.
	lockFile *os.File
	// tempDir is the memory provider's private blob directory.
	tempDir string
}

var _ cloud.Provider = (*Provider)(nil)

// errClosed is returned by every method once Close was called.
var errClosed = azsim.ErrClosed

// errReadOnly is returned by every change of a read-only provider.
var errReadOnly = errors.New("local provider is open read-only (for display): nothing can be changed")

// newProvider makes the provider of st (nil: a new subscription) once its
// files and store are set.
func (p *Provider) start(st *State, opts Options) (*Provider, error) {
	aopts := azsim.Options{Target: TargetName, Rand: opts.Rand, Now: opts.Now, Locations: opts.Locations,
		Marketplace: opts.Marketplace, Data: p.files}
	if p.store != nil {
		aopts.Store = p.store
	}
	if opts.Tenant != nil {
		aopts.Tenant = simTenant{opts.Tenant}
	}
	sim, err := azsim.New(st, aopts)
	if err != nil {
		return nil, err
	}
	p.Provider = sim
	opts.Tenant.add(p)
	return p, nil
}

// Open opens (creating it when needed) the persistent state directory dir:
// dir/state.json and blob data under dir/blobs. It takes an exclusive lock
// on dir/lock, so a second Open of the same directory fails until Close,
// and removes the data files that no resource in the state refers to.
func Open(dir string, opts Options) (*Provider, error) {
	p := &Provider{
		store: &fileStore{path: filepath.Join(dir, "state.json"), readOnly: opts.ReadOnly},
		files: &files{dir: filepath.Join(dir, "blobs"), readOnly: opts.ReadOnly},
	}
	if opts.ReadOnly {
		// state.json is replaced by a rename, so reading it without the
		// lock sees one whole state, also while a run holds the directory.
		st, ok, err := loadState(p.store.path, opts.SubscriptionID)
		if err != nil {
			return nil, err
		}
		if !ok && opts.SubscriptionID != "" {
			st = azsim.NewState(opts.SubscriptionID)
		}
		return p.start(st, opts)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create state directory: %w", err)
	}
	lf, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	p.lockFile = lf
	fail := func(err error) (*Provider, error) {
		lf.Close()
		return nil, err
	}
	// Temp files left by a run that died mid-transfer: nobody else can be
	// writing them while we hold the lock.
	if err := p.files.reset(); err != nil {
		return fail(err)
	}
	if err := removeStateTemps(dir); err != nil {
		return fail(err)
	}
	st, ok, err := loadState(p.store.path, opts.SubscriptionID)
	if err != nil {
		return fail(err)
	}
	if !ok {
		sub := opts.SubscriptionID
		if sub == "" {
			if sub, err = azsim.NewGUID(opts.Rand); err != nil {
				return fail(err)
			}
		}
		st = azsim.NewState(sub)
		if err := saveState(p.store.path, st); err != nil {
			return fail(fmt.Errorf("write state: %w", err))
		}
	}
	if err := p.removeOrphanData(st); err != nil {
		return fail(err)
	}
	return p.start(st, opts)
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

// NewMemory returns a provider whose state lives in memory; blob data goes
// to a private temporary directory that Close removes.
func NewMemory(opts Options) (*Provider, error) {
	dir, err := os.MkdirTemp("", "imgflow-local-")
	if err != nil {
		return nil, err
	}
	p := &Provider{tempDir: dir, files: &files{dir: filepath.Join(dir, "blobs"), memory: true}}
	if err := p.files.reset(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	var st *State
	if opts.SubscriptionID != "" {
		st = azsim.NewState(opts.SubscriptionID)
	}
	if _, err := p.start(st, opts); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return p, nil
}

// Close releases the state directory lock, or removes a memory provider's
// blob data. Closing twice is harmless.
func (p *Provider) Close() error {
	var errs []error
	p.closeOnce.Do(func() {
		p.Provider.Close()
		if p.lockFile != nil {
			errs = append(errs, unlockDir(p.lockFile))
		}
		if p.tempDir != "" {
			errs = append(errs, os.RemoveAll(p.tempDir))
		}
	})
	return errors.Join(errs...)
}

// ScratchDir is a directory for the temporary files of a run on this
// state (a simulated build's VHD): Open empties it under the state's lock,
// so what a killed process left goes when the state is next opened (a
// resume, gc), and nobody else writes in it meanwhile.
func (p *Provider) ScratchDir() string { return filepath.Join(p.files.dir, tmpDirName) }

// BlobPath is the file holding a blob's data. The file exists only once
// the blob does.
func (p *Provider) BlobPath(ref cloud.BlobRef) string {
	return p.blobFile(ref.Account, ref.Container, ref.Name)
}

func (p *Provider) blobFile(account, container, name string) string {
	return p.files.path(azsim.BlobKey(account, container, name))
}

// dataFile is the data file of the resource with the given ARM id.
func (p *Provider) dataFile(id string) string { return p.files.path(azsim.ResourceKey(id)) }
