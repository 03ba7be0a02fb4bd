package azure_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azure"
	"github.com/imgflow/imgflow/cloud/azure/azuritetest"
	"github.com/imgflow/imgflow/cloud/azure/fakearm"
	"github.com/imgflow/imgflow/cloud/ensure"
	"github.com/imgflow/imgflow/vhd"
)

// TestMain serves, besides the default accounts, the workflows' storage
// accounts in the fake's subscription (storage_account_name defaults).
func TestMain(m *testing.M) {
	azuritetest.Main(m, azuritetest.WorkflowAccounts(fakearm.DefaultSubscriptionID)...)
}

const loc = "westeurope"

// world is a provider on a fresh fake ARM with Azurite for blobs.
type world struct {
	t   *testing.T
	ctx context.Context
	p   *azure.Provider
	f   *fakearm.Fake
	az  *azuritetest.Server
	// blobRequests counts blob requests by "METHOD comp" (e.g. "PUT page").
	blobMu       sync.Mutex
	blobRequests map[string]int
	logs         []string
	logMu        sync.Mutex
}

// newWorld builds the world; mod adjusts the provider options.
func newWorld(t *testing.T, fopts fakearm.Options, mod func(*azure.Options)) *world {
	t.Helper()
	az := azuritetest.Shared(t)
	w := &world{t: t, az: az, blobRequests: map[string]int{}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	w.ctx = ctx
	if fopts.Blob == nil {
		fopts.Blob = &fakearm.BlobBackend{Endpoint: az.Endpoint, Key: azuritetest.Key}
	}
	w.f = fakearm.New(fopts)
	opts := azure.Options{
		SubscriptionID: w.f.SubscriptionID(),
		Credential:     w.f.Credential(),
		ARM:            w.f.ClientOptions(),
		BlobEndpoint:   az.Endpoint,
		StorageKey:     azuritetest.KeyFunc,
		PollFrequency:  time.Millisecond,
		Blob:           &azblob.ClientOptions{},
		Log:            w.log,
		Sleep:          w.f.Sleep,
	}
	opts.Blob.PerCallPolicies = []policy.Policy{countPolicy{w}}
	opts.Blob.Retry = policy.RetryOptions{RetryDelay: 5 * time.Millisecond, MaxRetryDelay: 50 * time.Millisecond}
	if mod != nil {
		mod(&opts)
	}
	p, err := azure.New(ctx, opts)
	require.NoError(t, err)
	w.p = p
	return w
}

func (w *world) log(msg string) {
	w.logMu.Lock()
	defer w.logMu.Unlock()
	w.logs = append(w.logs, msg)
}

func (w *world) logLines() []string {
	w.logMu.Lock()
	defer w.logMu.Unlock()
	return append([]string(nil), w.logs...)
}

type countPolicy struct{ w *world }

func (c countPolicy) Do(req *policy.Request) (*http.Response, error) {
	k := req.Raw().Method + " " + req.Raw().URL.Query().Get("comp")
	for h := range req.Raw().Header {
		if strings.EqualFold(h, "x-ms-copy-source") {
			k += " from-url"
		}
	}
	c.w.blobMu.Lock()
	c.w.blobRequests[k]++
	c.w.blobMu.Unlock()
	return req.Next()
}

func (w *world) blobCount(k string) int {
	w.blobMu.Lock()
	defer w.blobMu.Unlock()
	return w.blobRequests[k]
}

func (w *world) resetCounts() {
	w.blobMu.Lock()
	defer w.blobMu.Unlock()
	w.blobRequests = map[string]int{}
}

// base makes a resource group, a storage account and a container unique
// to the test.
func (w *world) base(account string) (*cloud.StorageAccount, string) {
	w.t.Helper()
	_, _, err := ensure.EnsureResourceGroup(w.ctx, w.p, cloud.ResourceGroup{Name: "rg", Location: loc})
	require.NoError(w.t, err)
	sa, _, err := ensure.EnsureStorageAccount(w.ctx, w.p, cloud.StorageAccount{Name: account, ResourceGroup: "rg", Location: loc})
	require.NoError(w.t, err)
	c := "t" + randomHex(6)
	require.NoError(w.t, w.p.EnsureContainer(w.ctx, sa.Name, c))
	return sa, c
}

func ref(sa *cloud.StorageAccount, container, name string) cloud.BlobRef {
	r := cloud.BlobRef{Account: sa.Name, Container: container, Name: name}
	if sa.BlobEndpoint != cloud.DefaultBlobEndpoint(sa.Name) {
		r.Endpoint = sa.BlobEndpoint
	}
	return r
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// image is a fixed VHD file with data chunks at given offsets.
type image struct {
	path    string
	content []byte
	ranges  []vhd.Range
}

func (img *image) md5() string {
	s := md5.Sum(img.content)
	return hex.EncodeToString(s[:])
}

// makeVHD builds a fixed VHD of size virtual bytes with random data of
// length n at each offset.
func makeVHD(t *testing.T, size int64, n int, offsets ...int64) *image {
	t.Helper()
	path := filepath.Join(t.TempDir(), "disk.vhd")
	_, err := vhd.CreateFixed(path, size, false)
	require.NoError(t, err)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	for _, off := range offsets {
		buf := make([]byte, n)
		_, _ = rand.Read(buf)
		_, err := f.WriteAt(buf, off)
		require.NoError(t, err)
	}
	rs, err := vhd.DataRanges(f)
	require.NoError(t, err)
	content, err := os.ReadFile(path)
	require.NoError(t, err)
	return &image{path: path, content: content, ranges: rs}
}

func (w *world) upload(img *image, r cloud.BlobRef) *cloud.Blob {
	w.t.Helper()
	f, err := os.Open(img.path)
	require.NoError(w.t, err)
	defer f.Close()
	b, err := w.p.UploadPageBlob(w.ctx, r, cloud.PageSource{Reader: f, Size: int64(len(img.content)), Ranges: img.ranges}, false)
	require.NoError(w.t, err)
	return b
}

func (w *world) read(r cloud.BlobRef) []byte {
	w.t.Helper()
	b, err := w.p.GetBlob(w.ctx, r)
	require.NoError(w.t, err)
	data, err := w.p.ReadBlob(w.ctx, r, 0, b.Size)
	require.NoError(w.t, err)
	return data
}

// version makes gallery gal, definition def and version 1.0.0 of def from
// a small VHD; it returns the version and the VHD.
func (w *world) version(sa *cloud.StorageAccount, c string) (*cloud.ImageVersion, *image) {
	w.t.Helper()
	_, _, err := ensure.EnsureGallery(w.ctx, w.p, cloud.Gallery{Name: "gal", ResourceGroup: "rg", Location: loc})
	require.NoError(w.t, err)
	_, _, err = ensure.EnsureImageDefinition(w.ctx, w.p, cloud.ImageDefinition{Name: "def", ResourceGroup: "rg", Gallery: "gal",
		Publisher: "imgflow", Offer: "test", SKU: "def", OSType: cloud.OSTypeLinux, OSState: cloud.OSStateGeneralized,
		HyperVGeneration: cloud.HyperVGenV2}, time.Now())
	require.NoError(w.t, err)
	img := makeVHD(w.t, 2<<20, 4096, 0, 1<<20)
	r := ref(sa, c, "os.vhd")
	w.upload(img, r)
	v, _, err := ensure.EnsureImageVersion(w.ctx, w.p, cloud.ImageVersion{Name: "1.0.0", ResourceGroup: "rg", Gallery: "gal", Definition: "def",
		Source: cloud.ImageSource{Kind: cloud.SourceVHD, URI: r.URL(), StorageAccountID: sa.ID}}, time.Now())
	require.NoError(w.t, err)
	return v, img
}

func equalBytes(a, b []byte) bool { return bytes.Equal(a, b) }

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

func openFile(path string) (*os.File, error) { return os.Open(path) }
