package azure_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azure"
	"github.com/imgflow/imgflow/cloud/azure/azuritetest"
)

// hostRecorder is a transport that records the hosts it is asked to reach
// and answers 404 to everything.
type hostRecorder struct {
	mu    sync.Mutex
	hosts []string
}

func (h *hostRecorder) Do(req *http.Request) (*http.Response, error) {
	h.mu.Lock()
	h.hosts = append(h.hosts, req.URL.Host)
	h.mu.Unlock()
	return &http.Response{StatusCode: http.StatusNotFound, Status: "404 Not Found", Request: req,
		Header: http.Header{"Content-Type": {"application/json"}, "X-Ms-Error-Code": {"NotFound"}},
		Body:   io.NopCloser(strings.NewReader(`{"error":{"code":"NotFound","message":"recorded"}}`))}, nil
}

func (h *hostRecorder) seen() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.hosts...)
}

// scopeRecorder is a credential that records the scopes it is asked for.
type scopeRecorder struct {
	mu     sync.Mutex
	scopes []string
}

func (s *scopeRecorder) GetToken(_ context.Context, o policy.TokenRequestOptions) (azcore.AccessToken, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scopes = append(s.scopes, o.Scopes...)
	return azcore.AccessToken{Token: "t"}, nil
}

// TestCloudsReachTheirHosts: --cloud sends ARM calls to the cloud's
// endpoint with a token for its audience, blob calls to its storage
// suffix, and the federated credential to its sign-in authority.
func TestCloudsReachTheirHosts(t *testing.T) {
	for _, tc := range []struct {
		flag                        string
		arm, scope, blob, authority string
		packer                      string
	}{
		{"", "management.azure.com", "https://management.core.windows.net//.default", "acct.blob.core.windows.net", "login.microsoftonline.com", "Public"},
		{"usgov", "management.usgovcloudapi.net", "https://management.core.usgovcloudapi.net//.default", "acct.blob.core.usgovcloudapi.net", "login.microsoftonline.us", "USGovernment"},
		{"AzureUSGovernmentCloud", "management.usgovcloudapi.net", "https://management.core.usgovcloudapi.net//.default", "acct.blob.core.usgovcloudapi.net", "login.microsoftonline.us", "USGovernment"},
		{"AzureChina", "management.chinacloudapi.cn", "https://management.core.chinacloudapi.cn//.default", "acct.blob.core.chinacloudapi.cn", "login.chinacloudapi.cn", "China"},
		{"china", "management.chinacloudapi.cn", "https://management.core.chinacloudapi.cn//.default", "acct.blob.core.chinacloudapi.cn", "login.chinacloudapi.cn", "China"},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			c, err := azure.ParseCloud(tc.flag)
			require.NoError(t, err)
			assert.Equal(t, tc.packer, c.PackerName)
			rec, cred := &hostRecorder{}, &scopeRecorder{}
			p, err := azure.New(context.Background(), azure.Options{
				SubscriptionID: "00000000-0000-0000-0000-000000000001", Credential: cred, Cloud: c,
				ARM:        &arm.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: rec, Retry: policy.RetryOptions{MaxRetries: -1}}, DisableRPRegistration: true},
				Blob:       &azblob.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: rec, Retry: policy.RetryOptions{MaxRetries: -1}}},
				StorageKey: azuritetest.KeyFunc,
			})
			require.NoError(t, err)
			_, err = p.GetGallery(context.Background(), "rg", "g")
			require.Error(t, err)
			_ = p.EnsureContainer(context.Background(), "acct", "c")
			assert.Equal(t, []string{tc.arm, tc.blob}, rec.seen())
			assert.Equal(t, []string{tc.scope}, cred.scopes)
			assert.Equal(t, "https://"+tc.blob, c.BlobEndpoint("acct"))

			login := &hostRecorder{}
			env := map[string]string{"AZURE_CLIENT_ID": "c", "AZURE_TENANT_ID": "72f988bf-0000-4000-8000-00000000cafe",
				"ACTIONS_ID_TOKEN_REQUEST_URL": "https://token.actions.example/x", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "t"}
			fed, err := azure.NewCredential(azure.CredentialOptions{Kind: azure.CredentialGitHubOIDC, Getenv: func(k string) string { return env[k] },
				Client: azcore.ClientOptions{Cloud: c.Config, Transport: login, Retry: policy.RetryOptions{MaxRetries: -1}}})
			require.NoError(t, err)
			_, _ = fed.GetToken(context.Background(), policy.TokenRequestOptions{Scopes: []string{tc.scope}})
			assert.Contains(t, login.seen(), tc.authority, "the credential signs in at the cloud's authority")
		})
	}
	_, err := azure.ParseCloud("AzureGermany")
	assert.ErrorContains(t, err, "use AzurePublic, AzureUSGovernment, AzureChina")
	assert.Equal(t, "https://acct.blob.core.windows.net", cloud.DefaultBlobEndpoint("acct"))
}
