package azure_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud/azure"
	"github.com/imgflow/imgflow/cloud/azure/azuritetest"
	"github.com/imgflow/imgflow/cloud/azure/fakearm"
)

// mdProxy plays the storage front of managed disks: requests to
// md-….blob.storage.azure.net go to a blob of Azurite, their SAS swapped
// for one Azurite accepts. Azurite itself cannot reach that host, as a
// storage account cannot always reach a disk's.
type mdProxy struct {
	az                       *azuritetest.Server
	account, container, blob string
	query                    url.Values
}

func (m mdProxy) RoundTrip(req *http.Request) (*http.Response, error) {
	if !strings.HasSuffix(req.URL.Hostname(), ".blob.storage.azure.net") {
		return http.DefaultTransport.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	target, _ := url.Parse(m.az.Endpoint(m.account) + "/" + m.container + "/" + m.blob)
	q := r.URL.Query()
	for _, k := range []string{"sv", "sr", "si", "sig", "spr", "se", "st", "sp"} {
		q.Del(k)
	}
	for k, v := range m.query {
		q[k] = v
	}
	target.RawQuery = q.Encode()
	r.URL, r.Host = target, target.Host
	return http.DefaultTransport.RoundTrip(r)
}

func TestCopyFromManagedDiskURL(t *testing.T) {
	az := azuritetest.Shared(t)
	w := newWorld(t, fakearm.Options{}, nil)
	sa, c := w.base("imgflowtest")
	img := sparseVHD(t)
	w.upload(img, ref(sa, c, "disk.vhd"))

	cred, err := azblob.NewSharedKeyCredential(sa.Name, azuritetest.DevKey)
	require.NoError(t, err)
	qp, err := sas.BlobSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ExpiryTime: time.Now().Add(time.Hour),
		Permissions: (&sas.BlobPermissions{Read: true}).String(), ContainerName: c, BlobName: "disk.vhd"}.SignWithSharedKey(cred)
	require.NoError(t, err)
	q, err := url.ParseQuery(qp.Encode())
	require.NoError(t, err)

	w = newWorld(t, fakearm.Options{}, func(o *azure.Options) {
		o.Blob.Transport = &http.Client{Transport: mdProxy{az: az, account: sa.Name, container: c, blob: "disk.vhd", query: q}}
	})
	// The storage account lives in the earlier world's fake; Azurite is shared.
	const secret = "c2VjcmV0LXNpZ25hdHVyZQ%3D%3D"
	diskURL := "https://md-5k0fz2qcqmrs.z37.blob.storage.azure.net/wc4f3vzp1zx0/abcd?sv=2018-03-28&sr=b&si=0f3a4a55-7a2b-4b9e-9a4c-1c0d3f0e8b11&sig=" + secret
	dest := ref(sa, c, "exported.vhd")
	b, err := w.p.CopyBlob(w.ctx, diskURL, dest, false)
	require.NoError(t, err)
	assert.Equal(t, img.digest(t), b.Digest)
	assert.True(t, equalBytes(img.content, w.read(dest)))
	logs := strings.Join(w.logLines(), "\n")
	assert.Contains(t, logs, "the storage service cannot read the source (404 CannotVerifyCopySource); streaming")
	assert.Contains(t, logs, "md-5k0fz2qcqmrs.z37.blob.storage.azure.net/wc4f3vzp1zx0/abcd?<redacted>")
	assert.NotContains(t, logs, "c2VjcmV0")
}
