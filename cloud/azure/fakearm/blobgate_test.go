package fakearm_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources/v3"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/storage/armstorage/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud/azure/fakearm"
)

// azuriteLike answers as Azurite 3.37 does for the accounts in served:
// containers are created, blobs are missing (BlobNotFound); any other
// account gets its authenticators' 404 ResourceNotFound.
func azuriteLike(served ...string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		account, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		code := "ResourceNotFound"
		for _, s := range served {
			if s == account {
				if !strings.Contains(rest, "/") && r.Method == http.MethodPut {
					w.WriteHeader(http.StatusCreated)
					return
				}
				code = "BlobNotFound"
			}
		}
		w.Header().Set("x-ms-error-code", code)
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `<?xml version="1.0" encoding="utf-8"?><Error><Code>`+code+`</Code><Message>The specified resource does not exist.</Message></Error>`)
	})
}

// createAccounts creates storage accounts in group rg of the fake through ARM.
func createAccounts(t *testing.T, f *fakearm.Fake, names ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rg, err := armresources.NewResourceGroupsClient(f.SubscriptionID(), f.Credential(), f.ClientOptions())
	require.NoError(t, err)
	_, err = rg.CreateOrUpdate(ctx, "rg", armresources.ResourceGroup{Location: to("westeurope")}, nil)
	require.NoError(t, err)
	sa, err := armstorage.NewAccountsClient(f.SubscriptionID(), f.Credential(), f.ClientOptions())
	require.NoError(t, err)
	for _, name := range names {
		p, err := sa.BeginCreate(ctx, "rg", name, armstorage.AccountCreateParameters{Location: to("westeurope"),
			Kind: to(armstorage.KindStorageV2), SKU: &armstorage.SKU{Name: to(armstorage.SKUNameStandardLRS)}}, nil)
		require.NoError(t, err)
		_, err = p.PollUntilDone(ctx, &runtime.PollUntilDoneOptions{Frequency: time.Millisecond})
		require.NoError(t, err)
	}
}

// The gate passes the emulator's answers for an account the fake holds,
// answers for an account nobody created as Azure does, and says so when
// the fake holds an account the emulator does not serve, instead of
// passing on a ResourceNotFound that reads as a missing container.
func TestBlobGateNamesAnAccountTheEmulatorDoesNotServe(t *testing.T) {
	f := fakearm.New(fakearm.Options{})
	createAccounts(t, f, "served", "unserved")
	backend := httptest.NewServer(azuriteLike("served"))
	t.Cleanup(backend.Close)
	gate := f.ServeBlobs(t, backend.URL)

	do := func(method, path string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(method, gate+path, nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp, string(body)
	}

	resp, _ := do(http.MethodPut, "/served/system?restype=container")
	assert.Equal(t, http.StatusCreated, resp.StatusCode, "a served account's answers pass")
	resp, _ = do(http.MethodHead, "/served/system/os.vhd")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.Equal(t, "BlobNotFound", resp.Header.Get("x-ms-error-code"), "a missing blob stays missing")

	resp, body := do(http.MethodPut, "/unserved/system?restype=container")
	assert.Equal(t, http.StatusNotImplemented, resp.StatusCode)
	assert.Equal(t, fakearm.CodeNotServedByBlobEmulator, resp.Header.Get("x-ms-error-code"))
	assert.Contains(t, body, "<Code>NotServedByBlobEmulator</Code>")
	assert.Contains(t, body, "storage account unserved exists in the fake ARM but the blob emulator does not serve it")
	assert.Contains(t, body, "start it with unserved too (imgflow-emulator --accounts")
	resp, body = do(http.MethodHead, "/unserved/system/os.vhd")
	assert.Equal(t, http.StatusNotImplemented, resp.StatusCode)
	assert.Equal(t, fakearm.CodeNotServedByBlobEmulator, resp.Header.Get("x-ms-error-code"))
	assert.Empty(t, body)

	resp, body = do(http.MethodPut, "/nobody/system?restype=container")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "an account nobody created is not found, as on Azure")
	assert.Equal(t, "ResourceNotFound", resp.Header.Get("x-ms-error-code"))
	assert.Contains(t, body, "<Code>ResourceNotFound</Code>")

	// Deleting the group deletes its accounts: the gate forgets them.
	rg, err := armresources.NewResourceGroupsClient(f.SubscriptionID(), f.Credential(), f.ClientOptions())
	require.NoError(t, err)
	p, err := rg.BeginDelete(context.Background(), "rg", nil)
	require.NoError(t, err)
	_, err = p.PollUntilDone(context.Background(), &runtime.PollUntilDoneOptions{Frequency: time.Millisecond})
	require.NoError(t, err)
	resp, _ = do(http.MethodPut, "/served/other?restype=container")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "a deleted account is gone, as on Azure")
	assert.Equal(t, "ResourceNotFound", resp.Header.Get("x-ms-error-code"))
}
