package azsim

import (
	"context"
	"maps"
	"slices"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/internal/deepcopy"
)

// lookupRG returns the resource group or ResourceGroupNotFound.
func (p *Provider) lookupRG(st *State, rg string) (*ResourceGroupState, error) {
	g, ok := st.ResourceGroups[key(rg)]
	if !ok {
		return nil, azrules.ResourceGroupNotFound(st.SubscriptionID, rg)
	}
	return g, nil
}

// GetResourceGroup implements cloud.Provider.
func (p *Provider) GetResourceGroup(ctx context.Context, name string) (*cloud.ResourceGroup, error) {
	if err := p.load(p.loadGroup(ctx, name)); err != nil {
		return nil, err
	}
	return read(ctx, p, func(st *State) (*cloud.ResourceGroup, error) {
		rg, err := p.lookupRG(st, name)
		if err != nil {
			return nil, err
		}
		return &rg.ResourceGroup, nil
	})
}

// CreateResourceGroup implements cloud.Provider: a PUT that creates the
// group or updates its tags; the location of an existing group is fixed.
func (p *Provider) CreateResourceGroup(ctx context.Context, in cloud.ResourceGroup) (*cloud.ResourceGroup, error) {
	if err := p.load(p.loadGroup(ctx, in.Name)); err != nil {
		return nil, err
	}
	return write(ctx, p, func(t *tx) (*cloud.ResourceGroup, error) {
		st := t.st
		id := cloud.ResourceGroupID(st.SubscriptionID, in.Name)
		loc, err := p.locIndex.Resolve(in.Location, "resourceGroups", id)
		if err != nil {
			return nil, err
		}
		rg, ok := st.ResourceGroups[key(in.Name)]
		if ok {
			if rg.Location != loc {
				return nil, cloud.Conflict(cloud.CodeInvalidResourceGroupLocation, rg.ID,
					"Invalid resource group location '%s'. The Resource group already exists in location '%s'.", in.Location, rg.Location)
			}
		} else {
			rg = (&ResourceGroupState{ResourceGroup: cloud.ResourceGroup{ID: id, Name: in.Name, Location: loc}}).normalize()
			st.ResourceGroups[key(in.Name)] = rg
		}
		t.log(put(ok), cloud.KindResourceGroup, rg.ID)
		rg.Tags = deepcopy.Of(in.Tags)
		return &rg.ResourceGroup, nil
	})
}

// GetStorageAccount implements cloud.Provider.
func (p *Provider) GetStorageAccount(ctx context.Context, rgName, name string) (*cloud.StorageAccount, error) {
	if err := p.load(p.loadAccount(ctx, rgName, name)); err != nil {
		return nil, err
	}
	return read(ctx, p, func(st *State) (*cloud.StorageAccount, error) {
		rg, err := p.lookupRG(st, rgName)
		if err != nil {
			return nil, err
		}
		sa, ok := rg.StorageAccounts[key(name)]
		if !ok {
			return nil, azrules.ResourceNotFound(cloud.StorageAccountID(st.SubscriptionID, rg.Name, name),
				"Microsoft.Storage/storageAccounts", name, rg.Name)
		}
		return &sa.StorageAccount, nil
	})
}

// CreateStorageAccount implements cloud.Provider. Account names are
// global: one used by another resource group is taken.
func (p *Provider) CreateStorageAccount(ctx context.Context, in cloud.StorageAccount) (*cloud.StorageAccount, error) {
	if err := p.load(p.loadNewAccount(ctx, in.ResourceGroup, in.Name)); err != nil {
		return nil, err
	}
	return write(ctx, p, func(t *tx) (*cloud.StorageAccount, error) {
		st := t.st
		rg, err := p.lookupRG(st, in.ResourceGroup)
		if err != nil {
			return nil, err
		}
		id := cloud.StorageAccountID(st.SubscriptionID, rg.Name, in.Name)
		if owner, _ := st.findStorageAccount(in.Name); owner != nil && owner != rg {
			return nil, azrules.AccountNameTaken(id, in.Name)
		}
		loc, err := p.locIndex.Resolve(orDefault(in.Location, rg.Location), "Microsoft.Storage/storageAccounts", id)
		if err != nil {
			return nil, err
		}
		sa, ok := rg.StorageAccounts[key(in.Name)]
		if ok {
			if sa.Location != loc {
				return nil, azrules.LocationChanged(sa.ID, sa.Name, rg.Name, sa.Location, loc)
			}
		} else {
			sa = (&StorageAccountState{StorageAccount: cloud.StorageAccount{ID: id, Name: in.Name, ResourceGroup: rg.Name,
				Location: loc, BlobEndpoint: cloud.DefaultBlobEndpoint(in.Name)}}).normalize()
			rg.StorageAccounts[key(in.Name)] = sa
		}
		t.log(put(ok), cloud.KindStorageAccount, sa.ID)
		sa.Tags = deepcopy.Of(in.Tags)
		return &sa.StorageAccount, nil
	})
}

// sortedKeys returns a map's keys in order, for deterministic listings.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// AccountGroup is the resource group of the storage account of that name
// the state holds, "" when none (or its group is unknown).
func (p *Provider) AccountGroup(name string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if rg, _ := p.st.findStorageAccount(name); rg != nil {
		return rg.Name
	}
	return ""
}

func (p *Provider) loadGroup(ctx context.Context, rg string) error {
	_, err := p.groupFromBase(ctx, rg)
	return err
}

func (p *Provider) groupFromBase(ctx context.Context, name string) (bool, error) {
	if p.rt == nil {
		return false, nil
	}
	if err := p.loadLocations(ctx); err != nil {
		return false, err
	}
	return fetch(ctx, p, cloud.ResourceGroupID(p.rt.sub, name),
		func(st *State) (bool, bool) {
			rg := st.ResourceGroups[key(name)]
			return rg != nil, rg != nil && rg.Base
		},
		func() (*cloud.ResourceGroup, error) { return p.rt.base.GetResourceGroup(ctx, name) },
		func(st *State, v *cloud.ResourceGroup) {
			st.ResourceGroups[key(name)] = (&ResourceGroupState{ResourceGroup: *v, Base: true}).normalize()
		})
}

// group finds a loaded resource group (as gallery and definition do
// their resources); a missing one is an empty one, so that a lookup
// below it finds nothing.
func group(st *State, rg string) *ResourceGroupState {
	if g := st.ResourceGroups[key(rg)]; g != nil {
		return g
	}
	return (&ResourceGroupState{}).normalize()
}

// loadAccount reads a storage account of a resource group; one known
// from its blobs only moves into its group.
func (p *Provider) loadAccount(ctx context.Context, rg, name string) error {
	if ok, err := p.groupFromBase(ctx, rg); !ok {
		return err
	}
	_, err := fetch(ctx, p, cloud.StorageAccountID(p.rt.sub, rg, name),
		func(st *State) (bool, bool) { return group(st, rg).StorageAccounts[key(name)] != nil, true },
		func() (*cloud.StorageAccount, error) { return p.rt.base.GetStorageAccount(ctx, rg, name) },
		func(st *State, v *cloud.StorageAccount) {
			sa := (&StorageAccountState{StorageAccount: *v, Base: true}).normalize()
			if remote := group(st, remoteGroup); remote != nil && remote.StorageAccounts[key(name)] != nil {
				sa.Containers = remote.StorageAccounts[key(name)].Containers
				delete(remote.StorageAccounts, key(name))
			}
			group(st, rg).StorageAccounts[key(name)] = sa
		})
	return err
}

// loadNewAccount prepares a storage account's creation: storage account
// names are global, so one the base's blob endpoint serves is someone
// else's, unless the base can ask Storage itself (a cloud.Preflighter:
// its preflight judges the name).
func (p *Provider) loadNewAccount(ctx context.Context, rg, name string) error {
	if p.rt == nil {
		return nil
	}
	if err := p.loadAccount(ctx, rg, name); err != nil {
		return err
	}
	if _, asks := p.rt.base.(cloud.Preflighter); asks {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.mutate(func(st *State) {
			if remote := group(st, remoteGroup); remote != nil {
				delete(remote.StorageAccounts, key(name))
			}
		})
		return nil
	}
	return p.loadBlob(ctx, cloud.BlobRef{Account: name, Container: probeContainer, Name: probeBlob})
}
