package fakearm

import (
	"context"
	"errors"
	"net/http"
	"strings"

	azfake "github.com/Azure/azure-sdk-for-go/sdk/azcore/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources/v3"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armsubscriptions"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/storage/armstorage/v2"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
)

func apiNameKey() any { return runtime.CtxAPINameKey{} }

func asError(err error, target **Error) bool { return errors.As(err, target) }

// armError is a rule's refusal (package azrules, a *cloud.Error) as
// the fake answers it; other errors are internal ones.
func armError(err error) *Error {
	if err == nil {
		return nil
	}
	var fe *Error
	if errors.As(err, &fe) {
		return fe
	}
	var ce *cloud.Error
	if errors.As(err, &ce) {
		return &Error{Status: ce.StatusCode, Code: ce.Code, Message: ce.Message}
	}
	return newErr(http.StatusInternalServerError, "InternalExecutionError", "%v", err)
}

// resolveLocation is Regions.Resolve with the fake's error.
func (f *Fake) resolveLocation(name, resourceType string) (string, *Error) {
	loc, err := f.regions.Resolve(name, resourceType, "")
	return loc, armError(err)
}

func (f *Fake) group(name string) (*armresources.ResourceGroup, *Error) {
	g, ok := f.groups[key(name)]
	if !ok {
		return nil, armError(azrules.ResourceGroupNotFound(f.sub, name))
	}
	return g, nil
}

func (f *Fake) resourceGroupsGet(ctx context.Context, name string, _ *armresources.ResourceGroupsClientGetOptions) (resp azfake.Responder[armresources.ResourceGroupsClientGetResponse], errResp azfake.ErrorResponder) {
	return answer(f, func() (armresources.ResourceGroupsClientGetResponse, *Error) {
		g, err := f.group(name)
		if err != nil {
			return armresources.ResourceGroupsClientGetResponse{}, err
		}
		return armresources.ResourceGroupsClientGetResponse{ResourceGroup: clone(*g)}, nil
	})
}

func (f *Fake) resourceGroupsCheckExistence(ctx context.Context, name string, _ *armresources.ResourceGroupsClientCheckExistenceOptions) (resp azfake.Responder[armresources.ResourceGroupsClientCheckExistenceResponse], errResp azfake.ErrorResponder) {
	return reply(f, func() (armresources.ResourceGroupsClientCheckExistenceResponse, int, *Error) {
		// HEAD answers 404 without an error body for a missing group.
		if _, ok := f.groups[key(name)]; !ok {
			return armresources.ResourceGroupsClientCheckExistenceResponse{}, http.StatusNotFound, nil
		}
		return armresources.ResourceGroupsClientCheckExistenceResponse{Success: true}, http.StatusNoContent, nil
	})
}

func (f *Fake) resourceGroupsCreateOrUpdate(ctx context.Context, name string, in armresources.ResourceGroup, _ *armresources.ResourceGroupsClientCreateOrUpdateOptions) (resp azfake.Responder[armresources.ResourceGroupsClientCreateOrUpdateResponse], errResp azfake.ErrorResponder) {
	return reply(f, func() (armresources.ResourceGroupsClientCreateOrUpdateResponse, int, *Error) {
		g, status, err := f.putGroup(name, in)
		if err != nil {
			return armresources.ResourceGroupsClientCreateOrUpdateResponse{}, 0, err
		}
		return armresources.ResourceGroupsClientCreateOrUpdateResponse{ResourceGroup: clone(*g)}, status, nil
	})
}

// putGroup creates a resource group (201) or updates its tags (200); a
// group cannot move.
func (f *Fake) putGroup(name string, in armresources.ResourceGroup) (*armresources.ResourceGroup, int, *Error) {
	loc, err := f.resolveLocation(deref(in.Location), "resourceGroups")
	if err != nil {
		return nil, 0, err
	}
	status := http.StatusOK
	g, ok := f.groups[key(name)]
	if ok {
		if deref(g.Location) != loc {
			return nil, 0, newErr(http.StatusConflict, cloud.CodeInvalidResourceGroupLocation,
				"Invalid resource group location '%s'. The Resource group already exists in location '%s'.", deref(in.Location), deref(g.Location))
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
	return g, status, nil
}

// subscriptionNotFound is ARM's answer for a subscription other than the
// fake's.
func subscriptionNotFound(sub string) *Error {
	return newErr(http.StatusNotFound, cloud.CodeSubscriptionNotFound, "The subscription '%s' could not be found.", sub)
}

func (f *Fake) subscriptionsGet(ctx context.Context, sub string, _ *armsubscriptions.ClientGetOptions) (resp azfake.Responder[armsubscriptions.ClientGetResponse], errResp azfake.ErrorResponder) {
	return answer(f, func() (armsubscriptions.ClientGetResponse, *Error) {
		if !strings.EqualFold(sub, f.sub) {
			return armsubscriptions.ClientGetResponse{}, subscriptionNotFound(sub)
		}
		return armsubscriptions.ClientGetResponse{Subscription: armsubscriptions.Subscription{
			ID: to("/subscriptions/" + f.sub), SubscriptionID: to(f.sub), DisplayName: to("imgflow fake subscription"),
			State: to(armsubscriptions.SubscriptionStateEnabled),
		}}, nil
	})
}

func (f *Fake) subscriptionsNewListLocationsPager(sub string, _ *armsubscriptions.ClientListLocationsOptions) (resp azfake.PagerResponder[armsubscriptions.ClientListLocationsResponse]) {
	return list(f, "/subscriptions/"+sub+"/locations", func() (armsubscriptions.ClientListLocationsResponse, *Error) {
		var page armsubscriptions.ClientListLocationsResponse
		if !strings.EqualFold(sub, f.sub) {
			return page, subscriptionNotFound(sub)
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
		return page, nil
	})
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

func (f *Fake) accountsGetProperties(ctx context.Context, rg, name string, _ *armstorage.AccountsClientGetPropertiesOptions) (resp azfake.Responder[armstorage.AccountsClientGetPropertiesResponse], errResp azfake.ErrorResponder) {
	return answer(f, func() (armstorage.AccountsClientGetPropertiesResponse, *Error) {
		g, err := f.group(rg)
		if err != nil {
			return armstorage.AccountsClientGetPropertiesResponse{}, err
		}
		a, ok := f.accounts[key(cloud.StorageAccountID(f.sub, rg, name))]
		if !ok {
			return armstorage.AccountsClientGetPropertiesResponse{}, armError(azrules.ResourceNotFound("", "Microsoft.Storage/storageAccounts", name, deref(g.Name)))
		}
		return armstorage.AccountsClientGetPropertiesResponse{Account: clone(*a)}, nil
	})
}

func (f *Fake) accountsBeginCreate(ctx context.Context, rg, name string, in armstorage.AccountCreateParameters, _ *armstorage.AccountsClientBeginCreateOptions) (resp azfake.PollerResponder[armstorage.AccountsClientCreateResponse], errResp azfake.ErrorResponder) {
	return start(f, http.StatusAccepted, func() (armstorage.AccountsClientCreateResponse, *Error) {
		a, err := f.putAccount(ctx, rg, name, in)
		if err != nil || a == nil {
			return armstorage.AccountsClientCreateResponse{}, err
		}
		return armstorage.AccountsClientCreateResponse{Account: clone(*a)}, nil
	})
}

// putAccount creates a storage account or updates its tags; nil without
// an error when a fault fails the operation after it was accepted.
// Account names are global: one of another resource group is taken.
func (f *Fake) putAccount(ctx context.Context, rg, name string, in armstorage.AccountCreateParameters) (*armstorage.Account, *Error) {
	g, err := f.group(rg)
	if err != nil {
		return nil, err
	}
	id := cloud.StorageAccountID(f.sub, deref(g.Name), name)
	if other := f.findAccount(name); (other != nil && !strings.EqualFold(deref(other.ID), id)) || (other == nil && f.nameTaken(name)) {
		return nil, newErr(http.StatusConflict, cloud.CodeStorageAccountAlreadyTaken, "The storage account named %s is already taken.", name)
	}
	if msg := f.unservedMessage(name); msg != "" {
		return nil, newErr(http.StatusBadRequest, "AccountNameInvalid", "%s", msg)
	}
	want := deref(in.Location)
	if want == "" {
		want = deref(g.Location)
	}
	loc, err := f.resolveLocation(want, "Microsoft.Storage/storageAccounts")
	if err != nil {
		return nil, err
	}
	if fe := f.lroFault(ctx, http.MethodPut, id); fe != nil {
		return nil, nil
	}
	a, ok := f.accounts[key(id)]
	if ok {
		if deref(a.Location) != loc {
			return nil, armError(azrules.LocationChanged("", name, deref(g.Name), deref(a.Location), loc))
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
		f.accountNames.Store(key(name), true)
	}
	a.Tags = copyTags(in.Tags)
	return a, nil
}
