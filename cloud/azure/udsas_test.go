package azure_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azure"
	"github.com/imgflow/imgflow/cloud/azure/azuritetest"
	"github.com/imgflow/imgflow/cloud/azure/fakearm"
	"github.com/imgflow/imgflow/internal/testtool"
)

// oauthAccount is the storage account of the OAuth Azurite instance: a
// principal with a blob data role on it and no shared key access.
const oauthAccount = "imgflowoauth"

// oauthWorld is a world with two blob services: the shared Azurite for
// the image data the fake ARM moves by server-side copies, reached with
// the account key the provider lists through ARM (--storage-auth auto on
// a service that refuses the token); and an Azurite instance serving
// HTTPS and OAuth for oauthAccount, reached with the token alone, so
// that every SAS imgflow signs for it is a user delegation SAS that
// Azurite checks as Azure Storage does. (Azurite's server-side copies
// cannot fetch from the OAuth instance's production-style host names,
// hence the split.)
func oauthWorld(t *testing.T) (*world, *azuritetest.Server) {
	t.Helper()
	az, err := azuritetest.Start(azuritetest.Options{OAuth: true, Accounts: []string{oauthAccount}})
	if err != nil {
		testtool.Unavailable(t, "azurite with OAuth is not available: "+err.Error(), "`make deps` installs it")
	}
	t.Cleanup(func() { _ = az.Stop() })
	shared := azuritetest.Shared(t)
	endpoint := func(account string) string {
		if account == oauthAccount {
			return az.AccountEndpoint(account)
		}
		return shared.Endpoint(account)
	}
	// One transport reaches both: HTTPClient dials the OAuth instance for
	// its host names and anything else as usual.
	transport := az.HTTPClient()
	backend := &fakearm.BlobBackend{Endpoint: endpoint, Key: azuritetest.Key,
		Options: &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: transport}}}
	w := newWorld(t, fakearm.Options{LROPolls: 1, Blob: backend}, func(o *azure.Options) {
		o.Credential = azuritetest.TokenCredential{ObjectID: "6c1a8d0e-3f7b-4f4e-9d7a-0b3b1f0c2a11", TenantID: "72f988bf-86f1-41af-91ab-2d7cd011db47"}
		o.StorageKey = nil
		o.StorageAuth = azure.StorageAuthAuto
		o.BlobEndpoint = endpoint
		o.Blob.Transport = transport
		o.Blob.InsecureAllowCredentialWithHTTP = true // the token's probe of the shared, plain-HTTP Azurite
	})
	return w, az
}

// TestRunCommandOutputBlobsWithAUserDelegationSAS: on an account reached
// with a token, imgflow signs the output blobs' SAS with a user
// delegation key; the fake VM's agent creates and appends to the blobs
// through it, Azurite checking its signature, and imgflow reads the whole
// report back.
func TestRunCommandOutputBlobsWithAUserDelegationSAS(t *testing.T) {
	w, az := oauthWorld(t)
	w.scanVM()
	c := "t" + randomHex(6)
	require.NoError(t, w.p.EnsureContainer(w.ctx, oauthAccount, c), "the token has data access to the OAuth account")
	blob := func(name string) cloud.BlobRef {
		return cloud.BlobRef{Account: oauthAccount, Container: c, Name: name, Endpoint: az.AccountEndpoint(oauthAccount)}
	}
	out, errBlob := blob("vm2/trivy.stdout"), blob("vm2/trivy.stderr")
	script := scanScript(`{"kind":"trivy_rootfs","severity":"HIGH,CRITICAL","fail_on":"CRITICAL",` +
		`"advisories":[{"id":"CVE-2026-0001","package":"bcc","version":"0.29.0","severity":"CRITICAL"}]}`)
	before := w.blobCount("POST userdelegationkey")
	res, err := w.p.RunCommand(w.ctx, "imgflow-testvm-2", "vm2", cloud.RunCommand{Name: "trivy", Script: script, Timeout: time.Minute,
		OutputBlob: &out, ErrorBlob: &errBlob})
	require.NoError(t, err)
	require.Equal(t, cloud.RunSucceeded, res.ExecutionState, res.Error)
	assert.Greater(t, len(res.Output), cloud.RunCommandOutputMax, "the whole report, from the blob the agent wrote with the SAS")
	assert.True(t, json.Valid([]byte(res.Output)))
	assert.Contains(t, res.Error, "CRITICAL CVE-2026-0001 in bcc 0.29.0", "the error stream, from its own blob")
	assert.Equal(t, 2, w.blobCount("POST userdelegationkey")-before, "each output blob's SAS is signed with a user delegation key")
	for _, r := range []cloud.BlobRef{out, errBlob} {
		_, err := w.p.GetBlob(w.ctx, r)
		assert.True(t, cloud.IsNotFound(err), "imgflow deletes %s once read: %v", r.Name, err)
	}
	for _, l := range w.logLines() {
		assert.NotContains(t, strings.ToLower(l), "sig=", "no SAS in the logs")
	}

	// The test means something only if Azurite checks the signature:
	// a user delegation SAS with a wrong one is refused.
	require.NoError(t, w.p.EnsureContainer(w.ctx, oauthAccount, c))
	forged := az.AccountEndpoint(oauthAccount) + "/" + c + "/x?sv=2026-12-06&sr=b&sp=racw&se=2099-01-01T00:00:00Z&spr=https" +
		"&skoid=6c1a8d0e-3f7b-4f4e-9d7a-0b3b1f0c2a11&sktid=72f988bf-86f1-41af-91ab-2d7cd011db47" +
		"&skt=2026-01-01T00:00:00Z&ske=2099-01-01T00:00:00Z&sks=b&skv=2026-06-06&sig=AAAA"
	req, err := http.NewRequestWithContext(w.ctx, http.MethodPut, forged, strings.NewReader("x"))
	require.NoError(t, err)
	req.Header.Set("x-ms-blob-type", "BlockBlob")
	resp, err := az.HTTPClient().Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode, "Azurite refuses a user delegation SAS whose signature does not hold")
}
