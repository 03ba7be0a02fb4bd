package fakearm

import (
	"context"
	"errors"
	"net/http"
	"strings"

	azfake "github.com/Azure/azure-sdk-for-go/sdk/azcore/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources/v3"
	resourcesfake "github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources/v3/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armsubscriptions"
	subsfake "github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armsubscriptions/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/storage/armstorage/v2"
	storagefake "github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/storage/armstorage/v2/fake"

	"github.com/imgflow/imgflow/cloud"
)

// Error codes of the fake (Azure's) besides those in package cloud.
const (
	CodeInvalidResourceGroupLocation        = "InvalidResourceGroupLocation"
	CodeInvalidResourceLocation             = "InvalidResourceLocation"
	CodeLocationNotAvailableForResourceType = "LocationNotAvailableForResourceType"
	CodeStorageAccountAlreadyTaken          = "StorageAccountAlreadyTaken"
	CodeSubscriptionNotFound                = "SubscriptionNotFound"
)

func apiNameKey() any { return runtime.CtxAPINameKey{} }

func asError(err error, target **Error) bool { return errors.As(err, target) }

func rgNotFound(sub, rg string) *Error {
	return newErr(http.StatusNotFound, cloud.CodeResourceGroupNotFound, "Resource group '%s' could not be found.", rg)
}

func resourceNotFound(typ, name, rg string) *Error {
	return newErr(http.StatusNotFound, cloud.CodeResourceNotFound,
		"The Resource '%s/%s' under resource group '%s' was not found.", typ, name, rg)
}

func parentNotFound(parent string) *Error {
	return newErr(http.StatusNotFound, cloud.CodeParentResourceNotFound,
		"Can not perform requested operation on nested resource. Parent resource '%s' not found.", parent)
}

func invalidParameter(format string, args ...any) *Error {
	return newErr(http.StatusBadRequest, cloud.CodeInvalidParameter, format, args...)
}

func locationChanged(name, rg, old, new string) *Error {
	return newErr(http.StatusConflict, CodeInvalidResourceLocation,
		"The resource '%s' already exists in location '%s' in resource group '%s'. A resource with the same name cannot be created in location '%s'. Please select a new resource name.",
		name, old, rg, new)
}

func propertyChange(property string) *Error {
	return newErr(http.StatusConflict, cloud.CodePropertyChangeNotAllowed, "Changing property '%s' is not allowed.", property)
}

// canonical maps a location name or display name to its name ("" when
// unknown).
func (f *Fake) canonical(name string) string {
	if l, ok := f.locIndex[fold(name)]; ok {
		return l.Name
	}
	return fold(name)
}

// displayName is how Azure spells a region in gallery answers.
func (f *Fake) displayName(name string) string {
	if l, ok := f.locIndex[fold(name)]; ok && l.DisplayName != "" {
		return l.DisplayName
	}
	return name
}

// physical resolves a location to a physical region's name.
func (f *Fake) physical(name string) (string, bool) {
	l, ok := f.locIndex[fold(name)]
	if !ok || l.RegionType == cloud.RegionTypeLogical {
		return "", false
	}
	return l.Name, true
}

// resolveLocation is physical with Azure's error.
func (f *Fake) resolveLocation(name, resourceType string) (string, *Error) {
	loc, ok := f.physical(name)
	if !ok {
		return "", newErr(http.StatusBadRequest, CodeLocationNotAvailableForResourceType,
			"The provided location '%s' is not available for resource type '%s'.", name, resourceType)
	}
	return loc, nil
}

func (f *Fake) group(name string) (*armresources.ResourceGroup, *Error) {
	g, ok := f.groups[key(name)]
	if !ok {
		return nil, rgNotFound(f.sub, name)
	}
	return g, nil
}

func (f *Fake) resourceGroupServer() resourcesfake.ResourceGroupsServer {
	return resourcesfake.ResourceGroupsServer{
		Get: func(ctx context.Context, name string, _ *armresources.ResourceGroupsClientGetOptions) (resp azfake.Responder[armresources.ResourceGroupsClientGetResponse], errResp azfake.ErrorResponder) {
			f.mu.Lock()
			defer f.mu.Unlock()
			g, err := f.group(name)
			if err != nil {
				errResp.SetError(err)
				return
			}
			resp.SetResponse(http.StatusOK, armresources.ResourceGroupsClientGetResponse{ResourceGroup: clone(*g)}, nil)
			return
		},
		CheckExistence: func(ctx context.Context, name string, _ *armresources.ResourceGroupsClientCheckExistenceOptions) (resp azfake.Responder[armresources.ResourceGroupsClientCheckExistenceResponse], errResp azfake.ErrorResponder) {
			f.mu.Lock()
			defer f.mu.Unlock()
			if _, ok := f.groups[key(name)]; ok {
				resp.SetResponse(http.StatusNoContent, armresources.ResourceGroupsClientCheckExistenceResponse{Success: true}, nil)
			} else {
				resp.SetResponse(http.StatusNotFound, armresources.ResourceGroupsClientCheckExistenceResponse{}, nil)
			}
			return
		},
		BeginDelete: func(ctx context.Context, name string, _ *armresources.ResourceGroupsClientBeginDeleteOptions) (resp azfake.PollerResponder[armresources.ResourceGroupsClientDeleteResponse], errResp azfake.ErrorResponder) {
			f.mu.Lock()
			defer f.mu.Unlock()
			if err := f.deleteGroup(ctx, name); err != nil {
				errResp.SetError(err)
				return
			}
			resp = accept(f, http.StatusAccepted, armresources.ResourceGroupsClientDeleteResponse{})
			return
		},
		CreateOrUpdate: func(ctx context.Context, name string, in armresources.ResourceGroup, _ *armresources.ResourceGroupsClientCreateOrUpdateOptions) (resp azfake.Responder[armresources.ResourceGroupsClientCreateOrUpdateResponse], errResp azfake.ErrorResponder) {
			f.mu.Lock()
			defer f.mu.Unlock()
			loc, err := f.resolveLocation(deref(in.Location), "resourceGroups")
			if err != nil {
				errResp.SetError(err)
				return
			}
			status := http.StatusOK
			g, ok := f.groups[key(name)]
			if ok {
				if deref(g.Location) != loc {
					errResp.SetError(newErr(http.StatusConflict, CodeInvalidResourceGroupLocation,
						"Invalid resource group location '%s'. The Resource group already exists in location '%s'.", deref(in.Location), deref(g.Location)))
					return
				}
			} else {
				status = http.StatusCreated
				g = &armresources.ResourceGroup{
					ID: to(cloud.ResourceGroupID(f.sub, name)), Name: to(name), Location: to(loc),
					Type:       to("Microsoft.Resources/resourceGroups"),
					Properties: &armresources.ResourceGroupProperties{ProvisioningState: to("Succeeded")},
				}
				f.groups[key(name)] = g
			}
			g.Tags = copyTags(in.Tags)
			resp.SetResponse(status, armresources.ResourceGroupsClientCreateOrUpdateResponse{ResourceGroup: clone(*g)}, nil)
			return
		},
	}
}

func (f *Fake) subscriptionServer() subsfake.Server {
	return subsfake.Server{
		Get: func(ctx context.Context, sub string, _ *armsubscriptions.ClientGetOptions) (resp azfake.Responder[armsubscriptions.ClientGetResponse], errResp azfake.ErrorResponder) {
			if !strings.EqualFold(sub, f.sub) {
				errResp.SetError(newErr(http.StatusNotFound, CodeSubscriptionNotFound, "The subscription '%s' could not be found.", sub))
				return
			}
			resp.SetResponse(http.StatusOK, armsubscriptions.ClientGetResponse{Subscription: armsubscriptions.Subscription{
				ID: to("/subscriptions/" + f.sub), SubscriptionID: to(f.sub), DisplayName: to("imgflow fake subscription"),
				State: to(armsubscriptions.SubscriptionStateEnabled),
			}}, nil)
			return
		},
		NewListLocationsPager: func(sub string, _ *armsubscriptions.ClientListLocationsOptions) (resp azfake.PagerResponder[armsubscriptions.ClientListLocationsResponse]) {
			var page armsubscriptions.ClientListLocationsResponse
			if !strings.EqualFold(sub, f.sub) {
				f.mu.Lock()
				f.failPage("/subscriptions/"+sub+"/locations", newErr(http.StatusNotFound, CodeSubscriptionNotFound, "The subscription '%s' could not be found.", sub))
				f.mu.Unlock()
				resp.AddPage(http.StatusOK, page, nil)
				return
			}
			for _, l := range f.locations {
				page.Value = append(page.Value, &armsubscriptions.Location{
					ID: to("/subscriptions/" + f.sub + "/locations/" + l.Name), Name: to(l.Name), DisplayName: to(l.DisplayName),
					RegionalDisplayName: to(l.DisplayName), Type: to(armsubscriptions.LocationTypeRegion),
					Metadata: &armsubscriptions.LocationMetadata{
						RegionType:     to(armsubscriptions.RegionType(l.RegionType)),
						RegionCategory: to(armsubscriptions.RegionCategory(l.Category)),
					},
				})
			}
			resp.AddPage(http.StatusOK, page, nil)
			return
		},
	}
}

// findAccount finds a storage account by name in any resource group
// (names are global).
func (f *Fake) findAccount(name string) *armstorage.Account {
	for _, a := range f.accounts {
		if strings.EqualFold(deref(a.Name), name) {
			return a
		}
	}
	return nil
}

// blobEndpoint is the primary blob endpoint of an account.
func (f *Fake) blobEndpoint(account string) string {
	if f.opts.Blob != nil && f.opts.Blob.Endpoint != nil {
		return strings.TrimRight(f.opts.Blob.Endpoint(account), "/") + "/"
	}
	return cloud.DefaultBlobEndpoint(account) + "/"
}

func (f *Fake) accountsServer() storagefake.AccountsServer {
	return storagefake.AccountsServer{
		ListKeys:     f.listAccountKeys,
		NewListPager: f.listAccounts,
		GetProperties: func(ctx context.Context, rg, name string, _ *armstorage.AccountsClientGetPropertiesOptions) (resp azfake.Responder[armstorage.AccountsClientGetPropertiesResponse], errResp azfake.ErrorResponder) {
			f.mu.Lock()
			defer f.mu.Unlock()
			g, err := f.group(rg)
			if err != nil {
				errResp.SetError(err)
				return
			}
			a, ok := f.accounts[key(cloud.StorageAccountID(f.sub, rg, name))]
			if !ok {
				errResp.SetError(resourceNotFound("Microsoft.Storage/storageAccounts", name, deref(g.Name)))
				return
			}
			resp.SetResponse(http.StatusOK, armstorage.AccountsClientGetPropertiesResponse{Account: clone(*a)}, nil)
			return
		},
		BeginCreate: func(ctx context.Context, rg, name string, in armstorage.AccountCreateParameters, _ *armstorage.AccountsClientBeginCreateOptions) (resp azfake.PollerResponder[armstorage.AccountsClientCreateResponse], errResp azfake.ErrorResponder) {
			f.mu.Lock()
			defer f.mu.Unlock()
			g, err := f.group(rg)
			if err != nil {
				errResp.SetError(err)
				return
			}
			id := cloud.StorageAccountID(f.sub, deref(g.Name), name)
			if other := f.findAccount(name); other != nil && !strings.EqualFold(deref(other.ID), id) {
				errResp.SetError(newErr(http.StatusConflict, CodeStorageAccountAlreadyTaken, "The storage account named %s is already taken.", name))
				return
			}
			want := deref(in.Location)
			if want == "" {
				want = deref(g.Location)
			}
			loc, lerr := f.resolveLocation(want, "Microsoft.Storage/storageAccounts")
			if lerr != nil {
				errResp.SetError(lerr)
				return
			}
			if fe := f.lroFault(ctx, http.MethodPut, id); fe != nil {
				resp = accept(f, http.StatusAccepted, armstorage.AccountsClientCreateResponse{})
				return
			}
			a, ok := f.accounts[key(id)]
			if ok {
				if deref(a.Location) != loc {
					errResp.SetError(locationChanged(name, deref(g.Name), deref(a.Location), loc))
					return
				}
			} else {
				a = &armstorage.Account{
					ID: to(id), Name: to(name), Location: to(loc), Type: to("Microsoft.Storage/storageAccounts"),
					Kind: in.Kind, SKU: in.SKU,
					Properties: &armstorage.AccountProperties{
						ProvisioningState: to(armstorage.ProvisioningStateSucceeded),
						PrimaryEndpoints:  &armstorage.Endpoints{Blob: to(f.blobEndpoint(name))},
						PrimaryLocation:   to(loc),
					},
				}
				f.accounts[key(id)] = a
			}
			a.Tags = copyTags(in.Tags)
			resp = accept(f, http.StatusAccepted, armstorage.AccountsClientCreateResponse{Account: clone(*a)})
			return
		},
	}
}
