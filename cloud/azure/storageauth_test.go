package azure_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azure"
	"github.com/imgflow/imgflow/cloud/azure/azuritetest"
	"github.com/imgflow/imgflow/cloud/azure/fakearm"
	"github.com/imgflow/imgflow/cloud/ensure"
	"github.com/imgflow/imgflow/cloud/overlay"
	"github.com/imgflow/imgflow/internal/testharness"
	"github.com/imgflow/imgflow/interp"
)

// noDataRoleProxy stands in front of Azurite as Azure Storage does for a
// principal with Contributor but no blob data role: a request with a
// bearer token gets 403 AuthorizationPermissionMismatch (with the XML
// error body and x-ms-error-code header the service sends); SharedKey
// and SAS requests reach Azurite.
type noDataRoleProxy struct {
	URL string

	mu            sync.Mutex
	bearer, other int
}

func newNoDataRoleProxy(t *testing.T, az *azuritetest.Server) *noDataRoleProxy {
	target, err := url.Parse(az.URL)
	require.NoError(t, err)
	rp := httputil.NewSingleHostReverseProxy(target)
	p := &noDataRoleProxy{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bearer := strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ")
		p.mu.Lock()
		if bearer {
			p.bearer++
		} else {
			p.other++
		}
		p.mu.Unlock()
		if !bearer {
			rp.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/xml")
		w.Header().Set("x-ms-error-code", cloud.CodeAuthorizationPermissionMismatch)
		w.WriteHeader(http.StatusForbidden)
		if r.Method != http.MethodHead {
			_, _ = w.Write([]byte(`<?xml version="1.0" encoding="utf-8"?><Error><Code>AuthorizationPermissionMismatch</Code>` +
				`<Message>This request is not authorized to perform this operation using this permission.` + "\n" +
				`RequestId:00000000-0000-0000-0000-000000000000` + "\n" + `Time:2026-12-03T09:00:00.0000000Z</Message></Error>`))
		}
	}))
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

func (p *noDataRoleProxy) endpoint(account string) string { return p.URL + "/" + account }

func (p *noDataRoleProxy) counts() (bearer, other int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.bearer, p.other
}

// tokenOnlyWorld is a world whose provider has no configured storage key:
// blob calls authenticate as StorageAuth says, through the proxy.
func tokenOnlyWorld(t *testing.T, auth azure.StorageAuth) (*world, *noDataRoleProxy) {
	proxy := newNoDataRoleProxy(t, azuritetest.Shared(t))
	backend := &fakearm.BlobBackend{Endpoint: proxy.endpoint, Key: azuritetest.Key}
	w := newWorld(t, fakearm.Options{Blob: backend}, func(o *azure.Options) {
		o.StorageKey = nil
		o.StorageAuth = auth
		o.BlobEndpoint = proxy.endpoint
		o.Blob.InsecureAllowCredentialWithHTTP = true // the fake token over Azurite's plain HTTP
	})
	return w, proxy
}

// TestStorageAuthFallsBackToKey: a principal without a blob data role
// (403 AuthorizationPermissionMismatch) but allowed ListKeys gets the
// account key, and the upload works.
func TestStorageAuthFallsBackToKey(t *testing.T) {
	w, proxy := tokenOnlyWorld(t, azure.StorageAuthAuto)
	sa, c := w.base("imgflowtest")
	img := makeVHD(t, 4<<20, 8192, 0, 3<<20)
	r := ref(sa, c, "os.vhd")
	b := w.upload(img, r)
	assert.Equal(t, int64(len(img.content)), b.Size)
	assert.True(t, equalBytes(img.content, w.read(r)))

	bearer, other := proxy.counts()
	assert.Equal(t, 1, bearer, "one token probe, then the key")
	assert.Positive(t, other)
	listKeys := 0
	for _, req := range w.f.Requests() {
		if req.API == "AccountsClient.ListKeys" {
			listKeys++
		}
	}
	assert.Equal(t, 1, listKeys, "the key is listed once per account")
	assert.Condition(t, func() bool {
		for _, l := range w.logLines() {
			if strings.Contains(l, "imgflowtest") && strings.Contains(l, "using the account key") {
				return true
			}
		}
		return false
	}, "the fallback is logged: %q", w.logLines())
}

// TestStorageAuthKeyMode: --storage-auth key never sends a token to the
// blob service.
func TestStorageAuthKeyMode(t *testing.T) {
	w, proxy := tokenOnlyWorld(t, azure.StorageAuthKey)
	sa, c := w.base("imgflowtest")
	w.upload(makeVHD(t, 1<<20, 4096, 0), ref(sa, c, "k.vhd"))
	bearer, _ := proxy.counts()
	assert.Zero(t, bearer)
}

// TestStorageAuthAADNamesRole: --storage-auth aad does not fall back; the
// error names the role and the account's resource id.
func TestStorageAuthAADNamesRole(t *testing.T) {
	w, _ := tokenOnlyWorld(t, azure.StorageAuthAAD)
	_, _, err := ensure.EnsureResourceGroup(w.ctx, w.p, cloud.ResourceGroup{Name: "rg", Location: loc})
	require.NoError(t, err)
	sa, _, err := ensure.EnsureStorageAccount(w.ctx, w.p, cloud.StorageAccount{Name: "imgflowtest", ResourceGroup: "rg", Location: loc})
	require.NoError(t, err)
	err = w.p.EnsureContainer(w.ctx, sa.Name, "vhds")
	require.Error(t, err)
	assert.True(t, cloud.HasCode(err, cloud.CodeAuthorizationPermissionMismatch), err)
	assert.Contains(t, err.Error(), azure.RoleBlobDataContributor)
	assert.Contains(t, err.Error(), sa.ID)
	for _, req := range w.f.Requests() {
		assert.NotEqual(t, "AccountsClient.ListKeys", req.API, "aad never reads keys")
	}
}

// TestStorageAuthDeniedStopsBeforeChanges: without a data role and
// without ListKeys, a workflow stops in its validation pass, before its
// first change, naming the role to grant and the scope.
func TestStorageAuthDeniedStopsBeforeChanges(t *testing.T) {
	w, proxy := tokenOnlyWorld(t, azure.StorageAuthAuto)
	_, _, err := ensure.EnsureResourceGroup(w.ctx, w.p, cloud.ResourceGroup{Name: "imgflow-auth", Location: loc})
	require.NoError(t, err)
	sa, _, err := ensure.EnsureStorageAccount(w.ctx, w.p, cloud.StorageAccount{Name: "imgflowtest", ResourceGroup: "imgflow-auth", Location: loc})
	require.NoError(t, err)
	w.f.Inject(fakearm.Fault{API: "AccountsClient.ListKeys", Status: http.StatusForbidden, Code: "AuthorizationFailed", Times: -1,
		Message: "The client does not have authorization to perform action 'Microsoft.Storage/storageAccounts/listKeys/action'."})
	before := len(w.f.Requests())

	root := t.TempDir()
	img := makeVHD(t, 1<<20, 4096, 0)
	require.NoError(t, os.Rename(img.path, filepath.Join(root, "base.vhd")))
	require.NoError(t, os.WriteFile(filepath.Join(root, "upload.star"), []byte(`
rg = resource_group("imgflow-auth", location = "westeurope")
sa = storage_account("imgflowtest", resource_group = rg)
g = gallery("imgflow_auth", resource_group = rg)
base = vhd_upload("//base.vhd", dest = blob(sa, container = "authvhds", name = "base.vhd"))
`), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h := testharness.New(t, root, "azure-auth")
	h.Info.Time = time.Now()
	res := h.Run(ctx, "//upload.star", nil, interp.Target{Apply: w.p, Validate: overlay.New(w.p)})
	require.Error(t, res.Err)
	assert.Equal(t, "validate", res.Pass)
	msg := res.Err.Error()
	t.Log(msg)
	assert.Contains(t, msg, "upload.star:5", "the error names the workflow line")
	assert.Contains(t, msg, azure.RoleBlobDataContributor)
	assert.Contains(t, msg, sa.ID, "the scope is the account's resource id")
	assert.Contains(t, msg, "listKeys/action")

	for _, req := range w.f.Requests()[before:] {
		assert.Contains(t, []string{http.MethodGet, http.MethodHead, http.MethodPost}, req.Method, "no ARM change: %+v", req)
		if req.Method == http.MethodPost {
			assert.Equal(t, "AccountsClient.ListKeys", req.API)
		}
	}
	_, err = w.p.GetGallery(w.ctx, "imgflow-auth", "imgflow_auth")
	assert.True(t, cloud.IsNotFound(err), "the gallery was not created: %v", err)
	bearer, other := proxy.counts()
	assert.Positive(t, bearer)
	assert.Zero(t, other, "no blob request reached the service with a key")
}

func TestParseStorageAuth(t *testing.T) {
	for in, want := range map[string]azure.StorageAuth{"": azure.StorageAuthAuto, "auto": azure.StorageAuthAuto, "AAD": azure.StorageAuthAAD, " key ": azure.StorageAuthKey} {
		got, err := azure.ParseStorageAuth(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	_, err := azure.ParseStorageAuth("sas")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "use aad, key or auto")
}
