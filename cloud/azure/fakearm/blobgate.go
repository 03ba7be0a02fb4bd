package fakearm

import (
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
)

// internalHeader marks the fake's own blob requests (not an x-ms- header,
// so no signature covers it).
const internalHeader = "Imgflow-Fakearm-Internal"

// BlobGate fronts a path-style blob service (Azurite: /{account}/…) the
// way Azure's DNS fronts storage accounts: a request to an account the
// fake does not hold answers 404 ResourceNotFound, as one to a storage
// account nobody created fails on Azure. Azurite serves every account it
// was started with; without the gate, the dry run of the Azure target
// (cloud/overlay), which probes an account's blob endpoint to learn
// whether its name is taken, sees each of them as someone else's
// (StorageAccountAlreadyTaken) before the workflow created it.
//
// The fake's disk account (BlobBackend.DiskAccount) is always served:
// disk grants are SAS URLs into it. Requests carrying InternalPolicy's
// mark (the fake's own, made while it holds its lock) pass unasked.
//
// An account the fake holds but Azurite was not started with cannot be
// served: Azurite's accounts are fixed when it starts (AZURITE_ACCOUNTS).
// The gate answers its requests 501 NotServedByBlobEmulator naming the
// account, rather than passing on Azurite's ResourceNotFound, which reads
// as a missing container or blob.
func (f *Fake) BlobGate(backend string) (http.Handler, error) {
	target, err := url.Parse(backend)
	if err != nil {
		return nil, err
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = explainUnservedAccount
	var always string
	if f.opts.Blob != nil {
		always = f.opts.Blob.diskAccount()
	}
	exists := func(account string) bool {
		_, ok := f.accountNames.Load(strings.ToLower(account))
		return ok
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		account, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		internal := r.Header.Get(internalHeader) != ""
		r.Header.Del(internalHeader)
		if internal || (always != "" && strings.EqualFold(account, always)) || (account != "" && exists(account)) {
			proxy.ServeHTTP(w, r)
			return
		}
		w.Header().Set("x-ms-error-code", "ResourceNotFound")
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusNotFound)
		if r.Method != http.MethodHead {
			_, _ = w.Write([]byte(`<?xml version="1.0" encoding="utf-8"?><Error><Code>ResourceNotFound</Code><Message>The specified resource does not exist.</Message></Error>`))
		}
	}), nil
}

// CodeNotServedByBlobEmulator is the error code of BlobGate's answer for
// an account the fake holds and the blob emulator does not serve. It is
// not an Azure code: Azure serves every account ARM created.
const CodeNotServedByBlobEmulator = "NotServedByBlobEmulator"

// explainUnservedAccount turns Azurite's answer for an account it does
// not serve into one that says so. Azurite (3.37) answers 404
// ResourceNotFound only there, from its authenticators; a missing
// container or blob has its own code. 501 rather than a 404 so that no
// caller takes the account for empty, and rather than a 5xx the SDK
// retries.
func explainUnservedAccount(resp *http.Response) error {
	if resp.StatusCode != http.StatusNotFound || resp.Header.Get("x-ms-error-code") != "ResourceNotFound" {
		return nil
	}
	account, _, _ := strings.Cut(strings.TrimPrefix(resp.Request.URL.Path, "/"), "/")
	msg := fmt.Sprintf("storage account %s exists in the fake ARM but the blob emulator does not serve it: "+
		"Azurite serves only the accounts in AZURITE_ACCOUNTS when it started; start it with %s too (imgflow-emulator --accounts, azuritetest.Main's extra accounts)",
		account, account)
	body := ""
	if resp.Request.Method != http.MethodHead {
		body = `<?xml version="1.0" encoding="utf-8"?><Error><Code>` + CodeNotServedByBlobEmulator + `</Code><Message>` + html.EscapeString(msg) + `</Message></Error>`
	}
	resp.Body.Close()
	resp.StatusCode = http.StatusNotImplemented
	resp.Status = fmt.Sprintf("%d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	resp.Header.Set("x-ms-error-code", CodeNotServedByBlobEmulator)
	resp.Header.Set("Content-Type", "application/xml")
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	resp.ContentLength = int64(len(body))
	resp.Body = io.NopCloser(strings.NewReader(body))
	return nil
}

// InternalPolicy is the blob client policy marking the fake's own
// requests for BlobGate: put it in BlobBackend.Options when
// BlobBackend.Endpoint is the gate.
func InternalPolicy() policy.Policy { return markInternal{} }

type markInternal struct{}

func (markInternal) Do(req *policy.Request) (*http.Response, error) {
	req.Raw().Header.Set(internalHeader, "1")
	return req.Next()
}

// ServeBlobs serves BlobGate in front of backend (Azurite's URL) for the
// test's duration and returns the gated endpoint: its URL, to which an
// account's blob service is URL/{account}. Give it to the Azure target
// (azure.Options.BlobEndpoint, IMGFLOW_AZURE_BLOB_ENDPOINT) so that it
// sees storage accounts as Azure shows them; the fake's own BlobBackend
// may keep reaching Azurite directly.
func (f *Fake) ServeBlobs(t testing.TB, backend string) string {
	t.Helper()
	gate, err := f.BlobGate(backend)
	if err != nil {
		t.Fatalf("fakearm: blob gate: %v", err)
	}
	srv := httptest.NewServer(gate)
	t.Cleanup(srv.Close)
	return srv.URL
}
