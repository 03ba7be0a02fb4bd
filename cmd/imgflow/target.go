package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azure"
	"github.com/imgflow/imgflow/cloud/local"
	"github.com/imgflow/imgflow/cloud/overlay"
	"github.com/imgflow/imgflow/internal/tenant"
	"github.com/imgflow/imgflow/journal"
	"github.com/imgflow/imgflow/packer"
)

// target is where a command runs: the provider that changes things, a
// fresh dry-run view of it for the validation pass and plan, and where
// run journals are kept.
type target struct {
	name     string
	provider cloud.Provider
	// runsDir holds the run journals.
	runsDir string
	// stateDir is --state: the local target's state, journals, artifacts.
	stateDir string
	// packer runs packer_build for real; nil simulates it (local target).
	packer builtins.PackerBuilder
	// subs are the other subscriptions of the target's tenant a run
	// reaches (a gallery in another subscription), opened when named.
	subs  *tenant.Cache
	close func() error
}

// envSimulatePacker is a TEST-ONLY hook: set to "simulate", packer_build
// on the Azure target creates what packer would have (packer/localsim)
// through the Azure provider instead of running packer, so AKS workflows
// run end to end against a fake ARM.
const envSimulatePacker = "IMGFLOW_PACKER"

// targetFlags are the flags that choose and reach a target.
type targetFlags struct {
	name         string
	stateDir     string
	subscription string
	// storageAuth is --storage-auth: aad, key or auto (Azure only).
	storageAuth string
	// credential is --credential (Azure only).
	credential string
	// cloud is --cloud (Azure only).
	cloud string
	// readOnly opens the local target for display (plan): its state
	// directory is left as it is.
	readOnly bool
}

// envStorageAuth sets the default of --storage-auth.
const envStorageAuth = "IMGFLOW_AZURE_STORAGE_AUTH"

// envCredential sets the default of --credential.
const envCredential = "IMGFLOW_AZURE_CREDENTIAL"

// envCloud sets the default of --cloud.
const envCloud = "IMGFLOW_AZURE_CLOUD"

// openTarget connects to the chosen target. The Azure target checks its
// credential and subscription here, before any workflow step runs.
func openTarget(ctx context.Context, e *env, ws *builtins.Workspace, f targetFlags) (*target, error) {
	if f.stateDir == "" {
		f.stateDir = filepath.Join(ws.Root, ".imgflow")
	}
	runs := filepath.Join(f.stateDir, "runs")
	switch f.name {
	case "local":
		// Another subscription is a state directory of its own under
		// the target's (tenant.LocalDir); they form one tenant.
		t := local.NewTenant()
		p, err := local.Open(f.stateDir, local.Options{ReadOnly: f.readOnly, Tenant: t})
		if err != nil {
			return nil, err
		}
		subs := tenant.NewLocal(f.stateDir, t, local.Options{ReadOnly: f.readOnly})
		return &target{name: f.name, provider: p, runsDir: runs, stateDir: f.stateDir, subs: subs,
			close: func() error { return errors.Join(subs.Close(), p.Close()) }}, nil
	case "azure":
		auth, err := azure.ParseStorageAuth(f.storageAuth)
		if err != nil {
			return nil, fmt.Errorf("--storage-auth: %w", err)
		}
		kind, err := azure.ParseCredentialKind(f.credential)
		if err != nil {
			return nil, fmt.Errorf("--credential: %w", err)
		}
		azCloud, err := azure.ParseCloud(f.cloud)
		if err != nil {
			return nil, fmt.Errorf("--cloud: %w", err)
		}
		printer := e.progressPrinter()
		p, err := azure.Connect(ctx, f.subscription, azure.Login{Credential: kind, Cloud: azCloud}, &azure.Options{
			Log:         func(msg string) { fmt.Fprintln(e.stderr, msg) },
			Transfers:   printer,
			Waits:       printer,
			StorageAuth: auth,
		})
		if err != nil {
			return nil, err
		}
		subs := tenant.NewCache(func(ctx context.Context, sub string) (cloud.Provider, error) { return p.ForSubscription(ctx, sub) })
		t := &target{name: f.name, provider: p, runsDir: runs, stateDir: f.stateDir, subs: subs,
			packer: &packer.Runner{Stdout: e.stdout, Prefix: "[packer] ", CloudEnvironment: azCloud.PackerName}, close: func() error { return nil }}
		if os.Getenv(envSimulatePacker) == "simulate" {
			t.packer = nil // packer_build simulated against the target (tests)
		}
		return t, nil
	}
	return nil, fmt.Errorf("unknown target %q: use local or azure", f.name)
}

// dryRun returns a new dry-run view of the target, the same for every
// target: reads see the target, changes are checked with its rules and
// recorded only (cloud/overlay).
func (t *target) dryRun() cloud.Provider { return overlay.New(t.provider) }

// subscriptions is interp.Config.Subscriptions for the target: its other
// subscriptions, as dry-run views in the dry passes.
func (t *target) subscriptions() func(cloud.Provider, bool) builtins.Subscriptions {
	if t.subs == nil {
		return nil
	}
	return tenant.ForPass(t.subs)
}

// journals is the store of the run journals in runsDir: a directory, or an
// Azure container URL. A container URL without a SAS is reached as the
// Azure target reaches its blobs (its credential and --storage-auth).
func (t *target) journals() (journal.Store, error) { return t.journalsAt(t.runsDir) }

// journalsAt is the store of the run journals at location (a release
// job's folder under runsDir), reached as journals reaches runsDir.
func (t *target) journalsAt(location string) (journal.Store, error) {
	if !journal.IsURL(location) {
		return journal.Dir(location), nil
	}
	var opts journal.AzureOptions
	if c, ok := t.provider.(journal.ContainerClients); ok {
		opts.Clients = c
	}
	return journal.NewAzureStore(location, &opts)
}

// stateDirOf is the --state directory, by default .imgflow in the
// workspace root.
func stateDirOf(root, stateDir string) (string, error) {
	if stateDir != "" {
		return stateDir, nil
	}
	ws, err := newWorkspace(root)
	if err != nil {
		return "", err
	}
	return filepath.Join(ws.Root, ".imgflow"), nil
}
