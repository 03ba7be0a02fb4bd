package azure_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azure"
	"github.com/imgflow/imgflow/cloud/azure/azuritetest"
	"github.com/imgflow/imgflow/cloud/azure/fakearm"
	"github.com/imgflow/imgflow/cloud/ensure"
	"github.com/imgflow/imgflow/vhd"
)

// sparseVHD is 16 MiB with 1 MiB of data at the start, 4 KiB at 12 MiB,
// and 4 MiB of written zeros at 4 MiB (allocated but empty).
func sparseVHD(t *testing.T) *image {
	img := makeVHD(t, 16<<20, 1<<20, 0)
	f, err := os.OpenFile(img.path, os.O_RDWR, 0)
	require.NoError(t, err)
	_, err = f.WriteAt(make([]byte, 4<<20), 4<<20)
	require.NoError(t, err)
	_, err = f.WriteAt(bytes.Repeat([]byte{7}, 4096), 12<<20)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	img.content, err = os.ReadFile(img.path)
	require.NoError(t, err)
	img.ranges = []vhd.Range{{Offset: 0, Length: 1 << 20}, {Offset: 4 << 20, Length: 4 << 20}, {Offset: 12 << 20, Length: 4096}, {Offset: 16 << 20, Length: 512}}
	return img
}

func TestUploadSkipsEmptyChunks(t *testing.T) {
	w := newWorld(t, fakearm.Options{}, func(o *azure.Options) { o.ContentMD5 = true })
	sa, c := w.base("imgflowtest")
	img := sparseVHD(t)
	w.resetCounts()
	b := w.upload(img, ref(sa, c, "sparse.vhd"))
	assert.Equal(t, 3, w.blobCount("PUT page"), "data, the 4 KiB and the footer: the zero chunk is not sent")
	assert.Equal(t, img.md5(), b.MD5, "the MD5 covers the whole blob, holes included")
	assert.Equal(t, int64(len(img.content)), b.Size)
	assert.True(t, equalBytes(img.content, w.read(ref(sa, c, "sparse.vhd"))))
}

func TestUploadManyChunks(t *testing.T) {
	w := newWorld(t, fakearm.Options{}, func(o *azure.Options) { o.Parallel = 3 })
	sa, c := w.base("imgflowtest")
	// 24 MiB of data in one range: six 4 MiB chunks, three at a time.
	img := makeVHD(t, 24<<20, 24<<20, 0)
	w.resetCounts()
	b := w.upload(img, ref(sa, c, "dense.vhd"))
	assert.Equal(t, 7, w.blobCount("PUT page"))
	assert.Equal(t, img.digest(t), b.Digest)
	assert.True(t, equalBytes(img.content, w.read(ref(sa, c, "dense.vhd"))))
}

// Extents that cross a 4 MiB boundary go up as one Put Page each, not one
// per aligned chunk they touch; the digest is still the chunk-wise one.
func TestUploadSendsExtentsAcrossChunkBoundariesWhole(t *testing.T) {
	w := newWorld(t, fakearm.Options{}, nil)
	sa, c := w.base("imgflowtest")
	img := makeVHD(t, 32<<20, 4<<20, 2<<20, 12<<20+4096)
	w.resetCounts()
	b := w.upload(img, ref(sa, c, "extents.vhd"))
	assert.Equal(t, 3, w.blobCount("PUT page"), "two 4 MiB extents and the footer (aligned chunks would take 5)")
	assert.Equal(t, img.digest(t), b.Digest)
	assert.True(t, equalBytes(img.content, w.read(ref(sa, c, "extents.vhd"))))
}

func TestUploadFailureLeavesNothing(t *testing.T) {
	w := newWorld(t, fakearm.Options{}, nil)
	sa, c := w.base("imgflowtest")
	r := ref(sa, c, "short.vhd")
	// The reader ends before the blob's size: the upload fails.
	_, err := w.p.UploadPageBlob(w.ctx, r, cloud.PageSource{Reader: bytes.NewReader(make([]byte, 1024)), Size: 8 << 20, Ranges: []vhd.Range{{Offset: 0, Length: 8 << 20}}}, false)
	require.Error(t, err)
	_, err = w.p.GetBlob(w.ctx, r)
	assert.True(t, cloud.HasCode(err, cloud.CodeBlobNotFound), "%v", err)
}

func TestCopyModes(t *testing.T) {
	for _, tc := range []struct {
		name      string
		mode      azure.CopyMode
		localhost bool
		logs      []string
	}{
		{name: "server", mode: azure.CopyServer},
		{name: "auto", mode: azure.CopyAuto},
		// Azurite answers 501 to Put Page From URL: streamed instead.
		{name: "ranges", mode: azure.CopyRanges, logs: []string{"Put Page From URL not implemented"}},
		{name: "stream", mode: azure.CopyStream},
		// Azurite refuses a server-side copy from another host name
		// (CannotVerifyCopySource) while we can read it: the data streams
		// through imgflow, without trying Put Page From URL (the service
		// would have to read the source for that too).
		{name: "auto-cannot-verify-source", mode: azure.CopyAuto, localhost: true,
			logs: []string{"the storage service cannot read the source (404 CannotVerifyCopySource); streaming"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, fakearm.Options{}, func(o *azure.Options) { o.CopyMode = tc.mode })
			sa, c := w.base("imgflowtest")
			img := sparseVHD(t)
			src := ref(sa, c, "src.vhd")
			w.upload(img, src)
			srcURL := src.URL()
			if tc.localhost {
				srcURL = strings.Replace(srcURL, "127.0.0.1", "localhost", 1)
			}
			// Across accounts, as a publish to another storage account.
			sa2, _, err := ensure.EnsureStorageAccount(w.ctx, w.p, cloud.StorageAccount{Name: "imgflowtest2", ResourceGroup: "rg", Location: loc})
			require.NoError(t, err)
			require.NoError(t, w.p.EnsureContainer(w.ctx, sa2.Name, c))
			dest := ref(sa2, c, "dest.vhd")
			w.resetCounts()
			b, err := w.p.CopyBlob(w.ctx, srcURL, dest, false)
			require.NoError(t, err)
			assert.Equal(t, img.digest(t), b.Digest)
			assert.Equal(t, cloud.BlobTypePage, b.Type)
			assert.True(t, equalBytes(img.content, w.read(dest)))
			if tc.mode == azure.CopyStream || tc.logs != nil {
				assert.Equal(t, 3, w.blobCount("PUT page"), "only the source's page ranges with data move")
			}
			if tc.mode == azure.CopyRanges {
				assert.Positive(t, w.blobCount("PUT page from-url"), "Put Page From URL was tried first")
			}
			if tc.localhost {
				assert.Zero(t, w.blobCount("PUT page from-url"), "no Put Page From URL from a source the service cannot read")
				assert.Equal(t, 1, w.blobCount("PUT  from-url"), "one server-side copy attempt (Copy Blob: no comp)")
			}
			logs := strings.Join(w.logLines(), "\n")
			for _, l := range tc.logs {
				assert.Contains(t, logs, l)
			}
			_, err = w.p.CopyBlob(w.ctx, srcURL, dest, false)
			assert.True(t, cloud.HasCode(err, cloud.CodeBlobAlreadyExists), "%v", err)
		})
	}
}

func TestCopyBlockBlob(t *testing.T) {
	w := newWorld(t, fakearm.Options{}, func(o *azure.Options) { o.CopyMode = azure.CopyStream })
	sa, c := w.base("imgflowtest")
	cred, err := azblob.NewSharedKeyCredential(sa.Name, azuritetest.DevKey)
	require.NoError(t, err)
	client, err := azblob.NewClientWithSharedKeyCredential(sa.BlobEndpoint, cred, nil)
	require.NoError(t, err)
	data := bytes.Repeat([]byte("imgflow manifest\n"), 10000)
	sum := md5.Sum(data)
	_, err = client.UploadBuffer(context.Background(), c, "manifest.txt", data, nil)
	require.NoError(t, err)
	b, err := w.p.CopyBlob(w.ctx, ref(sa, c, "manifest.txt").URL(), ref(sa, c, "copy.txt"), false)
	require.NoError(t, err)
	assert.Equal(t, cloud.BlobTypeBlock, b.Type)
	assert.Equal(t, hex.EncodeToString(sum[:]), b.MD5)
	assert.True(t, equalBytes(data, w.read(ref(sa, c, "copy.txt"))))
}

// A blob an upload killed mid-write still leases (for up to 15 s) is
// deleted once the lease ends: a resumed run deleting what the killed
// attempt staged does not fail with LeaseIdMissing.
func TestDeleteBlobWaitsOutAKilledWritersLease(t *testing.T) {
	t.Parallel() // waits out a 15 s lease in a container of its own
	w := newWorld(t, fakearm.Options{}, nil)
	sa, c := w.base("imgflowtest")
	cred, err := azblob.NewSharedKeyCredential(sa.Name, azuritetest.DevKey)
	require.NoError(t, err)
	client, err := azblob.NewClientWithSharedKeyCredential(sa.BlobEndpoint, cred, nil)
	require.NoError(t, err)
	_, err = client.UploadBuffer(context.Background(), c, "staged.vhd", []byte("staged"), nil)
	require.NoError(t, err)
	lc, err := lease.NewBlobClient(client.ServiceClient().NewContainerClient(c).NewBlobClient("staged.vhd"), nil)
	require.NoError(t, err)
	_, err = lc.AcquireLease(context.Background(), 15, nil)
	require.NoError(t, err)
	require.NoError(t, w.p.DeleteBlob(w.ctx, ref(sa, c, "staged.vhd")))
	_, err = client.ServiceClient().NewContainerClient(c).NewBlobClient("staged.vhd").GetProperties(context.Background(), nil)
	assert.Error(t, err, "the blob is gone")
}
