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
	"github.com/imgflow/imgflow/cloud/azure/internal/armconv"
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

// group is the simulation's resource group as ARM answers it.
func (f *Fake) group(name string) (*armresources.ResourceGroup, *Error) {
	g, err := f.sim.GetResourceGroup(context.Background(), name)
	if err != nil {
		return nil, armError(err)
	}
	out := armconv.ResourceGroup(*g)
	return &out, nil
}

func (f *Fake) resourceGroupsGet(ctx context.Context, name string, _ *armresources.ResourceGroupsClientGetOptions) (resp azfake.Responder[armresources.ResourceGroupsClientGetResponse], errResp azfake.ErrorResponder) {
	return answer(f, func() (armresources.ResourceGroupsClientGetResponse, *Error) {
		g, err := f.group(name)
		if err != nil {
			return armresources.ResourceGroupsClientGetResponse{}, err
		}
		return armresources.ResourceGroupsClientGetResponse{ResourceGroup: *g}, nil
	})
}

func (f *Fake) resourceGroupsCheckExistence(ctx context.Context, name string, _ *armresources.ResourceGroupsClientCheckExistenceOptions) (resp azfake.Responder[armresources.ResourceGroupsClientCheckExistenceResponse], errResp azfake.ErrorResponder) {
	return reply(f, func() (armresources.ResourceGroupsClientCheckExistenceResponse, int, *Error) {
		// HEAD answers 404 without an error body for a missing group.
		if _, err := f.group(name); err != nil {
			return armresources.ResourceGroupsClientCheckExistenceResponse{}, http.StatusNotFound, nil
		}
		return armresources.ResourceGroupsClientCheckExistenceResponse{Success: true}, http.StatusNoContent, nil
	})
}

// resourceGroupsCreateOrUpdate creates a resource group (201) or updates
// its tags (200), in the simulation.
func (f *Fake) resourceGroupsCreateOrUpdate(ctx context.Context, name string, in armresources.ResourceGroup, _ *armresources.ResourceGroupsClientCreateOrUpdateOptions) (resp azfake.Responder[armresources.ResourceGroupsClientCreateOrUpdateResponse], errResp azfake.ErrorResponder) {
	return reply(f, func() (armresources.ResourceGroupsClientCreateOrUpdateResponse, int, *Error) {
		status := http.StatusOK
		if _, err := f.group(name); err != nil {
			status = http.StatusCreated
		}
		want := armconv.ResourceGroupOf(&in, name)
		want.Name, want.Location = name, deref(in.Location)
		g, err := f.sim.CreateResourceGroup(simCtx(ctx), want)
		if err != nil {
			return armresources.ResourceGroupsClientCreateOrUpdateResponse{}, 0, armError(err)
		}
		return armresources.ResourceGroupsClientCreateOrUpdateResponse{ResourceGroup: armconv.ResourceGroup(*g)}, status, nil
	})
}

// subscriptionNotFound is ARM's answer for a subscription other than the
// fake's.
func subscriptionNotFound(sub string) *Error {
	return armError(azrules.SubscriptionNotFound(sub))
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
		locs, err := f.sim.ListLocations(context.Background())
		if err != nil {
			return page, armError(err)
		}
		for _, l := range locs {
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
// (names are global), through the fake's index of names.
func (f *Fake) findAccount(name string) *armstorage.Account {
	id, ok := f.accountNames.Load(key(name))
	if !ok {
		return nil
	}
	rid, err := cloud.ParseResourceID(id.(string))
	if err != nil {
		return nil
	}
	a, ferr := f.account(rid.ResourceGroup, rid.Names[0])
	if ferr != nil {
		return nil
	}
	return a
}

// account is the simulation's storage account as ARM answers it, its
// blob endpoint the blob backend's.
func (f *Fake) account(rg, name string) (*armstorage.Account, *Error) {
	sa, err := f.sim.GetStorageAccount(context.Background(), rg, name)
	if err != nil {
		return nil, armError(err)
	}
	sa.BlobEndpoint = f.blobEndpoint(sa.Name)
	out := armconv.StorageAccount(*sa)
	return &out, nil
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
		a, err := f.account(rg, name)
		if err != nil {
			return armstorage.AccountsClientGetPropertiesResponse{}, err
		}
		return armstorage.AccountsClientGetPropertiesResponse{Account: *a}, nil
	})
}

func (f *Fake) accountsBeginCreate(ctx context.Context, rg, name string, in armstorage.AccountCreateParameters, _ *armstorage.AccountsClientBeginCreateOptions) (resp azfake.PollerResponder[armstorage.AccountsClientCreateResponse], errResp azfake.ErrorResponder) {
	return start(f, http.StatusAccepted, func() (armstorage.AccountsClientCreateResponse, *Error) {
		a, err := f.putAccount(ctx, rg, name, in)
		if err != nil || a == nil {
			return armstorage.AccountsClientCreateResponse{}, err
		}
		return armstorage.AccountsClientCreateResponse{Account: *a}, nil
	})
}

// putAccount creates a storage account or updates its tags in the
// simulation; nil without an error when a fault fails the operation
// after it was accepted. What lies outside the subscription stays here:
// a name another subscription holds (preflight.go) and one the blob
// backend does not serve.
func (f *Fake) putAccount(ctx context.Context, rg, name string, in armstorage.AccountCreateParameters) (*armstorage.Account, *Error) {
	if _, err := f.group(rg); err != nil {
		return nil, err
	}
	if f.findAccount(name) == nil && f.nameTaken(name) {
		return nil, armError(azrules.AccountNameTaken(cloud.StorageAccountID(f.sub, rg, name), name))
	}
	if msg := f.unservedMessage(name); msg != "" {
		return nil, newErr(http.StatusBadRequest, "AccountNameInvalid", "%s", msg)
	}
	if fe := f.lroFault(ctx, http.MethodPut, cloud.StorageAccountID(f.sub, rg, name)); fe != nil {
		return nil, nil
	}
	sa, err := f.sim.CreateStorageAccount(simCtx(ctx), cloud.StorageAccount{Name: name, ResourceGroup: rg, Location: deref(in.Location), Tags: armconv.TagsOf(in.Tags)})
	if err != nil {
		return nil, armError(err)
	}
	f.accountNames.Store(key(name), sa.ID)
	return f.account(sa.ResourceGroup, name)
}
