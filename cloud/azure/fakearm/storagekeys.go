package fakearm

import (
	"context"
	"slices"
	"time"

	azfake "github.com/Azure/azure-sdk-for-go/sdk/azcore/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/storage/armstorage/v2"
)

// accountsListKeys answers POST …/storageAccounts/{name}/listKeys as
// Storage_ListKeys does: key1 and key2 with full permissions. Both are
// the blob backend's key of the account (Azurite has one key per
// account), so a caller that falls back to shared-key auth can reach the
// data. A principal without Microsoft.Storage/storageAccounts/listKeys/action
// is simulated by injecting a 403 AuthorizationFailed fault for
// "AccountsClient.ListKeys".
func (f *Fake) accountsListKeys(_ context.Context, rg, name string, _ *armstorage.AccountsClientListKeysOptions) (resp azfake.Responder[armstorage.AccountsClientListKeysResponse], errResp azfake.ErrorResponder) {
	return answer(f, func() (armstorage.AccountsClientListKeysResponse, *Error) {
		a, err := f.account(rg, name)
		if err != nil {
			return armstorage.AccountsClientListKeysResponse{}, err
		}
		value := ""
		if f.opts.Blob != nil && f.opts.Blob.Key != nil {
			value = f.opts.Blob.Key(deref(a.Name))
		}
		created := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		full := armstorage.KeyPermissionFull
		keys := []*armstorage.AccountKey{
			{KeyName: to("key1"), Value: to(value), Permissions: &full, CreationTime: &created},
			{KeyName: to("key2"), Value: to(value), Permissions: &full, CreationTime: &created},
		}
		return armstorage.AccountsClientListKeysResponse{AccountListKeysResult: armstorage.AccountListKeysResult{Keys: keys}}, nil
	})
}

// accountsNewListPager answers GET /subscriptions/{sub}/providers/Microsoft.Storage/storageAccounts
// (Storage_List): every account of the subscription, in one page.
func (f *Fake) accountsNewListPager(*armstorage.AccountsClientListOptions) (resp azfake.PagerResponder[armstorage.AccountsClientListResponse]) {
	return list(f, "", func() (armstorage.AccountsClientListResponse, *Error) {
		var page armstorage.AccountsClientListResponse
		var names []string
		f.accountNames.Range(func(k, _ any) bool { names = append(names, k.(string)); return true })
		slices.Sort(names)
		for _, n := range names {
			if a := f.findAccount(n); a != nil {
				page.Value = append(page.Value, a)
			}
		}
		return page, nil
	})
}

// HasStorageAccount reports whether a storage account of that name exists
// in any resource group (names are global): an emulator's blob endpoint
// answers only for those, as Azure's DNS does.
func (f *Fake) HasStorageAccount(name string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.findAccount(name) != nil
}
