package azure_test

import (
	"context"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	azcloud "github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud/azure"
	"github.com/imgflow/imgflow/cloud/azure/azuritetest"
	"github.com/imgflow/imgflow/cloud/azure/fakeaad"
	"github.com/imgflow/imgflow/cloud/azure/fakearm"
	"github.com/imgflow/imgflow/internal/testharness"
	"github.com/imgflow/imgflow/interp"
)

// Lifetimes of the loopback issuer, and the replication time that makes
// a run outlive several tokens and assertions (more than three), as a
// build of hours and a replication of up to 6 h outlive Azure's
// hour-long tokens. The run reads the replication every
// replicationPoll, not every 15 s as against Azure: a run then lasts
// about replicationTime rather than the 15 s of the first poll.
const (
	tokenLifetime     = time.Second
	assertionLifetime = 2 * time.Second
	replicationTime   = 3*assertionLifetime + time.Second
	replicationPoll   = 250 * time.Millisecond
)

// expiringWorld is a world whose ARM calls (the fake behind AuthGate)
// and blob calls (Azurite behind BlobAuthGate, --storage-auth aad) need a
// live token of issuer, and whose provider authenticates with cred.
func expiringWorld(t *testing.T, issuer *fakeaad.Issuer, cred azcore.TokenCredential) *world {
	az := azuritetest.Shared(t)
	target, err := url.Parse(az.URL)
	require.NoError(t, err)
	blobs := httptest.NewServer(fakearm.BlobAuthGate(httputil.NewSingleHostReverseProxy(target), issuer, azuritetest.Key))
	t.Cleanup(blobs.Close)
	armAudience := azcloud.AzurePublic.Services[azcloud.ResourceManager].Audience
	endpoint := func(account string) string { return blobs.URL + "/" + account }
	return newWorld(t, fakearm.Options{RegionDelays: map[string]time.Duration{"eastus": replicationTime}, Blob: &fakearm.BlobBackend{Endpoint: endpoint, Key: azuritetest.Key}}, func(o *azure.Options) {
		o.Credential = cred
		o.PollFrequency = 100 * time.Millisecond
		o.ARM.Transport = fakearm.AuthGate(o.ARM.Transport, issuer, armAudience)
		o.StorageKey = nil
		o.StorageAuth = azure.StorageAuthAAD
		o.BlobEndpoint = endpoint
		o.Blob.InsecureAllowCredentialWithHTTP = true // the loopback blob gate is plain HTTP
	})
}

// issuerCredential makes the credential kind with env as the job's
// environment, against issuer.
func issuerCredential(t *testing.T, issuer *fakeaad.Issuer, kind azure.CredentialKind, env map[string]string) *azure.Credential {
	cred, err := azure.NewCredential(azure.CredentialOptions{
		Kind:                     kind,
		Getenv:                   func(k string) string { return env[k] },
		Client:                   azcore.ClientOptions{Cloud: issuer.Cloud(azcloud.AzurePublic), Transport: issuer.Transport()},
		DisableInstanceDiscovery: true,
	})
	require.NoError(t, err)
	return cred
}

// runFlatcar runs workflows/flatcar.star on w and returns the result and
// how long it took.
func runFlatcar(t *testing.T, w *world) (*interp.Result, time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	h := azureHarness(t, "azure-expiring")
	h.Info.ReplicationPoll = replicationPoll
	res := h.Run(ctx, "//workflows/flatcar.star",
		testharness.Vars("version", "4152.2.3", "vhd", "//testdata/flatcar/flatcar-linux-test-amd64.vhd"), interp.Target{Apply: w.p})
	return res, time.Since(start)
}

// TestFederatedCredentialOutlivesExpiries: with tokens that expire every
// second and CI assertions every two, a Flatcar publishing run on the
// emulator (ARM and blob data refusing expired tokens) completes with the
// credentials auto picks in GitHub Actions and Azure Pipelines: each
// asks the CI engine for a fresh assertion whenever a token expires.
func TestFederatedCredentialOutlivesExpiries(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  func(*fakeaad.Issuer) map[string]string
		kind azure.CredentialKind
	}{
		{"github", (*fakeaad.Issuer).GitHubEnv, azure.CredentialGitHubOIDC},
		{"azure pipelines", (*fakeaad.Issuer).PipelinesEnv, azure.CredentialAzurePipelines},
	} {
		t.Run(tc.name, func(t *testing.T) {
			issuer := fakeaad.New(t, fakeaad.Options{TokenLifetime: tokenLifetime, AssertionLifetime: assertionLifetime})
			env := tc.env(issuer)
			for k, v := range env {
				t.Setenv(k, v) // AzurePipelinesCredential reads SYSTEM_OIDCREQUESTURI itself
			}
			cred := issuerCredential(t, issuer, azure.CredentialAuto, env)
			assert.Equal(t, tc.kind, cred.Kind)
			assert.True(t, cred.Refreshes)
			w := expiringWorld(t, issuer, cred)
			res, took := runFlatcar(t, w)
			require.NoError(t, res.Err)
			issued, refused := issuer.Counts()
			t.Logf("run took %s, %d tokens issued", took, issued)
			assert.Greater(t, took, 3*assertionLifetime, "the run outlives several tokens and assertions")
			assert.Zero(t, refused, "no token request was refused")
			assert.GreaterOrEqual(t, issued, 4, "tokens were renewed as they expired")
		})
	}
}

// TestCLILoginFailsAfterExpiry is the failure the federated credentials
// avoid: a credential that keeps the one assertion it was logged in with
// (the Azure CLI after azure/login or AzureCLI@2) gets tokens until that
// assertion expires; then Entra ID refuses it (AADSTS700024) and the run
// fails at its next call.
func TestCLILoginFailsAfterExpiry(t *testing.T) {
	issuer := fakeaad.New(t, fakeaad.Options{TokenLifetime: tokenLifetime, AssertionLifetime: assertionLifetime})
	assertion := issuer.Assertion() // azure/login's one OIDC token
	cred, err := azidentity.NewClientAssertionCredential(fakeaad.TenantID, fakeaad.ClientID,
		func(context.Context) (string, error) { return assertion, nil },
		&azidentity.ClientAssertionCredentialOptions{ClientOptions: azcore.ClientOptions{Cloud: issuer.Cloud(azcloud.AzurePublic), Transport: issuer.Transport(),
			Retry: policy.RetryOptions{MaxRetries: -1}}, DisableInstanceDiscovery: true})
	require.NoError(t, err)
	w := expiringWorld(t, issuer, cred)
	res, took := runFlatcar(t, w)
	require.Error(t, res.Err, "the run cannot outlive the login's assertion (took %s)", took)
	assert.Contains(t, res.Err.Error(), "AADSTS700024")
	_, refused := issuer.Counts()
	assert.Positive(t, refused)
}

// TestCredentialChoice: auto picks the federated credential of the CI
// engine whose variables are there, and says what is missing on a CI
// engine without them; an explicit kind wins.
func TestCredentialChoice(t *testing.T) {
	issuer := fakeaad.New(t, fakeaad.Options{})
	t.Setenv("SYSTEM_OIDCREQUESTURI", issuer.PipelinesEnv()["SYSTEM_OIDCREQUESTURI"])
	with := func(base map[string]string, drop ...string) map[string]string {
		out := map[string]string{}
		for k, v := range base {
			out[k] = v
		}
		for _, k := range drop {
			delete(out, k)
		}
		return out
	}
	gh, ado := issuer.GitHubEnv(), issuer.PipelinesEnv()
	for _, tc := range []struct {
		name      string
		kind      azure.CredentialKind
		env       map[string]string
		want      azure.CredentialKind
		refreshes bool
		note      string
	}{
		{"github", azure.CredentialAuto, gh, azure.CredentialGitHubOIDC, true, ""},
		{"github without id-token", azure.CredentialAuto, with(gh, "ACTIONS_ID_TOKEN_REQUEST_URL", "ACTIONS_ID_TOKEN_REQUEST_TOKEN"), azure.CredentialDefault, false,
			"on GitHub Actions without ACTIONS_ID_TOKEN_REQUEST_URL, ACTIONS_ID_TOKEN_REQUEST_TOKEN (the job needs `permissions: id-token: write`"},
		{"azure pipelines", azure.CredentialAuto, ado, azure.CredentialAzurePipelines, true, ""},
		{"azure pipelines with AZURE_ ids", azure.CredentialAuto, map[string]string{"SYSTEM_OIDCREQUESTURI": "x", "SYSTEM_ACCESSTOKEN": "t",
			"AZURE_CLIENT_ID": fakeaad.ClientID, "AZURE_TENANT_ID": fakeaad.TenantID, "AZURE_SERVICE_CONNECTION_ID": fakeaad.ServiceConnectionID}, azure.CredentialAzurePipelines, true, ""},
		{"azure pipelines without the access token", azure.CredentialAuto, with(ado, "SYSTEM_ACCESSTOKEN"), azure.CredentialDefault, false,
			"on Azure Pipelines without SYSTEM_ACCESSTOKEN"},
		{"workload identity", azure.CredentialAuto, map[string]string{"AZURE_FEDERATED_TOKEN_FILE": "/var/run/token", "AZURE_CLIENT_ID": "c", "AZURE_TENANT_ID": fakeaad.TenantID},
			azure.CredentialWorkloadIdentity, true, ""},
		{"laptop", azure.CredentialAuto, map[string]string{}, azure.CredentialDefault, false, "DefaultAzureCredential may end on the Azure CLI"},
		{"secret", azure.CredentialAuto, map[string]string{"AZURE_CLIENT_SECRET": "s"}, azure.CredentialDefault, true, ""},
		{"explicit cli in github", azure.CredentialCLI, gh, azure.CredentialCLI, false, "in CI use --credential github-oidc or azure-pipelines"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cred := issuerCredential(t, issuer, tc.kind, tc.env)
			assert.Equal(t, tc.want, cred.Kind)
			assert.Equal(t, tc.refreshes, cred.Refreshes)
			if tc.note == "" {
				assert.Empty(t, cred.Note)
			} else {
				assert.Contains(t, cred.Note, tc.note)
			}
		})
	}
	_, err := azure.NewCredential(azure.CredentialOptions{Kind: azure.CredentialGitHubOIDC, Getenv: func(string) string { return "" }})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "id-token: write")
	_, err = azure.ParseCredentialKind("githb-oidc")
	assert.ErrorContains(t, err, "use auto, github-oidc, azure-pipelines")
}
