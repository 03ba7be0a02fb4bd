package azure

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/internal/redact"
)

// StorageAuth selects how blob calls (uploads, copies, containers,
// metadata) authenticate to a storage account.
//
// Azure AD is the default, but a role on the control plane (Owner,
// Contributor) gives no access to blob data: the principal needs a data
// role such as Storage Blob Data Contributor, or the account's key, which
// principals allowed Microsoft.Storage/storageAccounts/listKeys/action
// (Contributor has it) can read through ARM.
type StorageAuth string

const (
	// StorageAuthAuto uses Azure AD when the credential may read the
	// account's blob data, else the account key from ListKeys; when
	// neither is allowed it stops before the first change, naming the
	// role to grant and its scope.
	StorageAuthAuto StorageAuth = "auto"
	// StorageAuthAAD always uses the token credential (a data role is
	// required).
	StorageAuthAAD StorageAuth = "aad"
	// StorageAuthKey always uses the account key from ListKeys.
	StorageAuthKey StorageAuth = "key"
)

// ParseStorageAuth parses aad, key or auto ("" is auto).
func ParseStorageAuth(s string) (StorageAuth, error) {
	switch a := StorageAuth(strings.ToLower(strings.TrimSpace(s))); a {
	case "":
		return StorageAuthAuto, nil
	case StorageAuthAuto, StorageAuthAAD, StorageAuthKey:
		return a, nil
	}
	return "", fmt.Errorf("storage auth %q: use aad, key or auto", s)
}

// RoleBlobDataContributor is the built-in role giving a principal read
// and write access to blob data.
const RoleBlobDataContributor = "Storage Blob Data Contributor"

// probeContainer is where the access probe looks: a blob that need not
// exist. With data access the answer is 404, without it 403.
const probeContainer = "imgflow-access-probe"

// blobCredential is the shared key credential of an account's blob calls,
// or nil when they use the token credential. The choice is made once per
// account (Options.StorageAuth) and kept; an account denied both ways is
// an error naming the role to grant.
func (p *Provider) blobCredential(ctx context.Context, account, endpoint string) (*azblob.SharedKeyCredential, error) {
	mode := p.opts.StorageAuth
	if p.opts.StorageKey != nil && mode != StorageAuthAAD {
		return p.configuredKey(account)
	}
	p.authMu.Lock()
	defer p.authMu.Unlock()
	if a, ok := p.accountAuth[strings.ToLower(account)]; ok {
		return a, nil
	}
	if mode == StorageAuthKey {
		cred, err := p.listedKey(ctx, account)
		if err != nil {
			return nil, fmt.Errorf("--storage-auth key: %w (the credential needs Microsoft.Storage/storageAccounts/listKeys/action on the account, as Contributor has; or use --storage-auth aad with the role %q)",
				err, RoleBlobDataContributor)
		}
		p.accountAuth[strings.ToLower(account)] = cred
		return cred, nil
	}
	cred, known, err := p.probeToken(ctx, account, endpoint, mode)
	if err != nil {
		return nil, err
	}
	if known {
		p.accountAuth[strings.ToLower(account)] = cred
	}
	return cred, nil
}

// configuredKey is the key Options.StorageKey returns (tests, emulators).
func (p *Provider) configuredKey(account string) (*azblob.SharedKeyCredential, error) {
	p.blobMu.Lock()
	defer p.blobMu.Unlock()
	if c, ok := p.blobCreds[account]; ok {
		return c, nil
	}
	key, err := p.opts.StorageKey(account)
	if err != nil {
		return nil, fmt.Errorf("key of storage account %s: %w", account, err)
	}
	c, err := azblob.NewSharedKeyCredential(account, key)
	if err != nil {
		return nil, fmt.Errorf("key of storage account %s: %w", account, err)
	}
	p.blobCreds[account] = c
	return c, nil
}

// probeToken reads a blob that need not exist with the token credential:
// any answer but 403 means the principal has data access. On 403, auto
// falls back to the account key; aad reports the role to grant. known is
// false when the account does not exist (yet): the choice is made again
// on the next call.
func (p *Provider) probeToken(ctx context.Context, account, endpoint string, mode StorageAuth) (cred *azblob.SharedKeyCredential, known bool, err error) {
	if endpoint == "" {
		endpoint = p.blobEndpoint(account)
	}
	cc, err := container.NewClient(strings.TrimRight(endpoint, "/")+"/"+probeContainer, p.cred, (*container.ClientOptions)(p.blobOptions()))
	if err != nil {
		return nil, false, err
	}
	_, err = cc.NewBlobClient("probe").GetProperties(ctx, nil)
	switch {
	case err == nil:
		return nil, true, nil
	case isStatus(err, http.StatusNotFound):
		// ContainerNotFound: data access. ResourceNotFound: no such
		// account; the caller's own request reports that.
		return nil, !cloud.HasCode(azErr(err, endpoint), cloud.CodeResourceNotFound), nil
	case !isStatus(err, http.StatusForbidden):
		// A transport error (no such host) or a service failure: the
		// caller's own request meets it too.
		return nil, false, nil
	}
	denied := azErr(err, endpoint)
	if mode == StorageAuthAAD {
		return nil, false, p.noDataAccess(ctx, account, denied, nil)
	}
	cred, kerr := p.listedKey(ctx, account)
	if kerr != nil {
		return nil, false, p.noDataAccess(ctx, account, denied, kerr)
	}
	p.logf("storage account %s: the credential has no blob data role (%s); using the account key from ListKeys (grant %q on the account to use Azure AD)",
		account, errCode(denied), RoleBlobDataContributor)
	return cred, true, nil
}

// listedKey reads the account's first key through ARM (ListKeys).
func (p *Provider) listedKey(ctx context.Context, account string) (*azblob.SharedKeyCredential, error) {
	rg, err := p.accountGroup(ctx, account)
	if err != nil {
		return nil, err
	}
	res, err := p.accounts.ListKeys(ctx, rg, account, nil)
	if err != nil {
		return nil, opError("list keys of storage account", account, azErr(err, cloud.StorageAccountID(p.sub, rg, account)))
	}
	for _, k := range res.Keys {
		if k != nil && deref(k.Value) != "" {
			return azblob.NewSharedKeyCredential(account, *k.Value)
		}
	}
	return nil, opError("list keys of storage account", account, fmt.Errorf("the service returned no key"))
}

// accountGroup finds the resource group of a storage account: one this
// provider has seen (storage_account()), else by listing the
// subscription's accounts.
func (p *Provider) accountGroup(ctx context.Context, account string) (string, error) {
	p.blobMu.Lock()
	rg, ok := p.accountGroups[strings.ToLower(account)]
	p.blobMu.Unlock()
	if ok {
		return rg, nil
	}
	pager := p.accounts.NewListPager(nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return "", opError("find storage account", account, azErr(err, "/subscriptions/"+p.sub))
		}
		for _, a := range page.Value {
			if a != nil && strings.EqualFold(deref(a.Name), account) {
				if rg := rgFromID(deref(a.ID)); rg != "" {
					p.rememberAccount(account, rg)
					return rg, nil
				}
			}
		}
	}
	return "", opError("find storage account", account+" in subscription "+p.sub, azrules.AccountNotFound(account, account))
}

// rememberAccount records an account's resource group for ListKeys.
func (p *Provider) rememberAccount(account, rg string) {
	if account == "" || rg == "" {
		return
	}
	p.blobMu.Lock()
	defer p.blobMu.Unlock()
	p.accountGroups[strings.ToLower(account)] = rg
}

// noDataAccess is the error of an account the credential cannot reach:
// the role to grant and its scope (the account's resource id), so the
// fix is one `az role assignment create`.
func (p *Provider) noDataAccess(ctx context.Context, account string, denied, keyErr error) error {
	scope := "/subscriptions/" + p.sub + "/resourceGroups/<resource group>/providers/Microsoft.Storage/storageAccounts/" + account
	if rg, err := p.accountGroup(ctx, account); err == nil {
		scope = cloud.StorageAccountID(p.sub, rg, account)
	}
	msg := fmt.Sprintf("the credential may not access blob data in storage account %s (%s)", account, errCode(denied))
	if keyErr != nil {
		msg += fmt.Sprintf(" nor list its keys (%s)", errCode(keyErr))
	}
	msg += fmt.Sprintf(": grant the role %q on scope %s (az role assignment create --assignee <principal> --role %q --scope %s)",
		RoleBlobDataContributor, scope, RoleBlobDataContributor, scope)
	if keyErr != nil {
		msg += ", or allow Microsoft.Storage/storageAccounts/listKeys/action there"
	} else {
		msg += ", or run with --storage-auth auto to use the account key"
	}
	// Azure's refusal (its status and code) with what to do about it.
	out := &cloud.Error{StatusCode: http.StatusForbidden, Resource: account, Message: msg}
	if ce, ok := asCloudError(denied); ok {
		out.StatusCode, out.Code = ce.StatusCode, ce.Code
	}
	return out
}

// errCode is an error's status and Azure code, e.g. "403 AuthorizationFailed".
func errCode(err error) string {
	if ce, ok := asCloudError(err); ok {
		return fmt.Sprintf("%d %s", ce.StatusCode, ce.Code)
	}
	return redact.Error(err).Error()
}

func asCloudError(err error) (*cloud.Error, bool) {
	var ce *cloud.Error
	ok := errors.As(err, &ce)
	return ce, ok
}
