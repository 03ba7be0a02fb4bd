package azure

import (
	"context"
	"slices"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources/v3"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armsubscriptions"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/storage/armstorage/v2"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azure/internal/armconv"
)

// ListLocations implements cloud.Provider with the subscription's
// locations (metadata.regionType tells physical regions from logical
// geographies). The list is read once per provider.
func (p *Provider) ListLocations(ctx context.Context) ([]cloud.Location, error) {
	p.locMu.Lock()
	defer p.locMu.Unlock()
	if p.locations != nil {
		return slices.Clone(p.locations), nil
	}
	pager := p.subs.NewListLocationsPager(p.sub, &armsubscriptions.ClientListLocationsOptions{IncludeExtendedLocations: to(false)})
	var out []cloud.Location
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, opError("list locations of subscription", p.sub, azErr(err, "/subscriptions/"+p.sub))
		}
		for _, l := range page.Value {
			if l == nil || l.Name == nil {
				continue
			}
			loc := cloud.Location{Name: *l.Name, DisplayName: deref(l.DisplayName)}
			if md := l.Metadata; md != nil {
				loc.RegionType = strOf(md.RegionType)
				loc.Category = strOf(md.RegionCategory)
			}
			out = append(out, loc)
		}
	}
	if err := p.markVersionRegions(ctx, out); err != nil {
		return nil, err
	}
	idx := make(map[string]string, 2*len(out))
	for _, l := range out {
		idx[foldLocation(l.Name)] = l.Name
		if l.DisplayName != "" {
			idx[foldLocation(l.DisplayName)] = l.Name
		}
	}
	p.locations, p.locIndex = out, idx
	return slices.Clone(out), nil
}

// regionName maps a region as Azure reports it (gallery target regions
// and replication status come back as display names, "West Europe") to
// its name ("westeurope").
func (p *Provider) regionName(ctx context.Context, s string) string {
	if s == "" {
		return ""
	}
	p.locMu.Lock()
	idx := p.locIndex
	p.locMu.Unlock()
	if idx == nil {
		if _, err := p.ListLocations(ctx); err == nil {
			p.locMu.Lock()
			idx = p.locIndex
			p.locMu.Unlock()
		}
	}
	if n, ok := idx[foldLocation(s)]; ok {
		return n
	}
	return foldLocation(s)
}

// GetResourceGroup implements cloud.Provider.
func (p *Provider) GetResourceGroup(ctx context.Context, name string) (*cloud.ResourceGroup, error) {
	id := cloud.ResourceGroupID(p.sub, name)
	res, err := p.groups.Get(ctx, name, nil)
	if err != nil {
		return nil, opError("get resource group", name, azErr(err, id))
	}
	return rgOut(&res.ResourceGroup, name), nil
}

// CreateResourceGroup implements cloud.Provider (a PUT: creates the group
// or replaces its tags).
func (p *Provider) CreateResourceGroup(ctx context.Context, rg cloud.ResourceGroup) (*cloud.ResourceGroup, error) {
	id := cloud.ResourceGroupID(p.sub, rg.Name)
	res, err := p.groups.CreateOrUpdate(ctx, rg.Name, armresources.ResourceGroup{Location: to(rg.Location), Tags: tagsIn(rg.Tags)}, nil)
	if err != nil {
		return nil, opError("create resource group", rg.Name, azErr(err, id))
	}
	return rgOut(&res.ResourceGroup, rg.Name), nil
}

func rgOut(g *armresources.ResourceGroup, name string) *cloud.ResourceGroup {
	out := armconv.ResourceGroupOf(g, name)
	return &out
}

// GetStorageAccount implements cloud.Provider.
func (p *Provider) GetStorageAccount(ctx context.Context, rg, name string) (*cloud.StorageAccount, error) {
	id := cloud.StorageAccountID(p.sub, rg, name)
	res, err := p.accounts.GetProperties(ctx, rg, name, nil)
	if err != nil {
		return nil, opError("get storage account", name, azErr(err, id))
	}
	return p.accountOut(&res.Account, rg, name), nil
}

// CreateStorageAccount implements cloud.Provider: a StorageV2,
// Standard_LRS account without public blob access, in the resource
// group's location unless sa.Location says otherwise.
func (p *Provider) CreateStorageAccount(ctx context.Context, sa cloud.StorageAccount) (*cloud.StorageAccount, error) {
	id := cloud.StorageAccountID(p.sub, sa.ResourceGroup, sa.Name)
	loc := sa.Location
	if loc == "" {
		g, err := p.GetResourceGroup(ctx, sa.ResourceGroup)
		if err != nil {
			return nil, opError("create storage account", sa.Name, err)
		}
		loc = g.Location
	}
	params := armstorage.AccountCreateParameters{
		Kind:     to(armstorage.KindStorageV2),
		Location: to(loc),
		SKU:      &armstorage.SKU{Name: to(armstorage.SKUNameStandardLRS)},
		Tags:     tagsIn(sa.Tags),
		Properties: &armstorage.AccountPropertiesCreateParameters{
			AllowBlobPublicAccess:  to(false),
			MinimumTLSVersion:      to(armstorage.MinimumTLSVersionTLS12),
			EnableHTTPSTrafficOnly: to(true),
		},
	}
	op := "create storage account " + sa.Name
	poller, err := p.accounts.BeginCreate(ctx, sa.ResourceGroup, sa.Name, params, nil)
	if err != nil {
		return nil, opError("create storage account", sa.Name, azErr(err, id))
	}
	res, err := wait(ctx, p, op, poller)
	if err != nil {
		return nil, opError("create storage account", sa.Name, azErr(err, id))
	}
	return p.accountOut(&res.Account, sa.ResourceGroup, sa.Name), nil
}

func (p *Provider) accountOut(a *armstorage.Account, rg, name string) *cloud.StorageAccount {
	out := armconv.StorageAccountOf(a, rg, name)
	p.rememberAccount(out.Name, out.ResourceGroup) // for ListKeys (storageauth.go)
	if out.BlobEndpoint == "" {
		out.BlobEndpoint = p.blobEndpoint(out.Name)
	}
	return &out
}
