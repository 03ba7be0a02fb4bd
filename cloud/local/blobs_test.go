package local

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"net/http"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/cloudtest"
	"github.com/imgflow/imgflow/cloud/transfer"
	"github.com/imgflow/imgflow/vhd"
)

func md5hex(b []byte) string {
	s := md5.Sum(b)
	return hex.EncodeToString(s[:])
}

// digestOf is the sparse digest of content.
func digestOf(content []byte) string {
	d, err := transfer.SparseDigest(context.Background(), bytes.NewReader(content), int64(len(content)), nil)
	if err != nil {
		panic(err)
	}
	return d
}

func TestBlobErrors(t *testing.T) {
	f := newFixture(t)
	p := f.p
	missingAccount := cloud.BlobRef{Account: "nosuch", Container: "c", Name: "b"}
	_, err := p.GetBlob(ctx, missingAccount)
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeResourceNotFound, "storage account nosuch not found")
	err = p.EnsureContainer(ctx, "nosuch", "c")
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeResourceNotFound)

	noContainer := cloud.BlobRef{Account: account, Container: "missing", Name: "b"}
	_, err = p.UploadPageBlob(ctx, noContainer, cloud.PageSource{Reader: bytes.NewReader(nil), Size: 0}, false)
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeContainerNotFound)
	_, err = p.CopyBlob(ctx, f.vhd.URL(), noContainer, false)
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeContainerNotFound)

	missing := cloud.BlobRef{Account: account, Container: "vhds", Name: "missing"}
	_, err = p.GetBlob(ctx, missing)
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeBlobNotFound)
	_, err = p.ReadBlob(ctx, missing, 0, 1)
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeBlobNotFound)
	err = p.DeleteBlob(ctx, missing)
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeBlobNotFound)

	_, err = p.UploadPageBlob(ctx, missing, cloud.PageSource{Reader: bytes.NewReader(make([]byte, 1000)), Size: 1000}, false)
	cloudtest.RequireError(t, err, http.StatusBadRequest, cloud.CodeInvalidParameter, "multiple of 512")

	_, err = p.UploadPageBlob(ctx, f.vhd, cloud.PageSource{Reader: bytes.NewReader(make([]byte, 512)), Size: 512}, false)
	cloudtest.RequireError(t, err, http.StatusConflict, cloud.CodeBlobAlreadyExists)
	_, err = p.CopyBlob(ctx, f.vhd.URL(), f.vhd, false)
	cloudtest.RequireError(t, err, http.StatusConflict, cloud.CodeBlobAlreadyExists)

	_, err = p.CopyBlob(ctx, "https://elsewhere.blob.core.windows.net/c/b?sig=x", missing, false)
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeCannotVerifyCopySource)
	_, err = p.CopyBlob(ctx, missing.URL(), cloud.BlobRef{Account: account, Container: "vhds", Name: "dst"}, false)
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeCannotVerifyCopySource)

	_, err = p.ReadBlob(ctx, f.vhd, vhdBytes+512, 1)
	cloudtest.RequireError(t, err, http.StatusRequestedRangeNotSatisfiable, cloud.CodeInvalidRange)
}

func TestUploadReadDelete(t *testing.T) {
	f := newFixture(t)
	p := f.p
	data := cloudtest.FixedVHD(vhdBytes)
	b, err := p.GetBlob(ctx, f.vhd)
	require.NoError(t, err)
	assert.Equal(t, cloud.BlobTypePage, b.Type)
	assert.Equal(t, int64(len(data)), b.Size)
	assert.Equal(t, digestOf(data), b.Digest)
	assert.Empty(t, b.MD5, "no service computes a Content-MD5 here")
	assert.Equal(t, "https://imgflowstore.blob.core.windows.net/vhds/flatcar.vhd", b.URL)

	footer, err := p.ReadBlob(ctx, f.vhd, int64(vhdBytes), 512)
	require.NoError(t, err)
	assert.Equal(t, data[vhdBytes:], footer)
	tail, err := p.ReadBlob(ctx, f.vhd, int64(len(data))-10, 100)
	require.NoError(t, err)
	assert.Len(t, tail, 10, "reads are clamped to the end")

	// Names with directories and dots stay inside the blob directory.
	odd := cloud.BlobRef{Account: account, Container: "vhds", Name: "a/../b/./c.vhd"}
	f.upload(t, odd, data[:512])
	assert.FileExists(t, p.BlobPath(odd))
	assert.Contains(t, p.BlobPath(odd), "vhds")
	got, err := p.ReadBlob(ctx, odd, 0, 512)
	require.NoError(t, err)
	assert.Equal(t, data[:512], got)

	require.NoError(t, p.DeleteBlob(ctx, f.vhd))
	assert.NoFileExists(t, p.BlobPath(f.vhd))
	_, err = p.GetBlob(ctx, f.vhd)
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeBlobNotFound)
}

// TestSparseUpload uploads 64 MiB with 1 MiB of data in two ranges, one of
// which also holds a zero chunk: the file uses about 1 MiB of disk, and
// the digest covers the whole content.
func TestSparseUpload(t *testing.T) {
	f := newFixture(t)
	const size = 64 << 20
	content := make([]byte, size)
	fill := func(off, n int) {
		for i := range n {
			content[off+i] = byte(i*7 + 1)
		}
	}
	fill(0, 512<<10)
	fill(size-(512<<10), 512<<10)
	ranges := []vhd.Range{
		{Offset: size - (512 << 10), Length: 512 << 10}, // unsorted on purpose
		{Offset: 0, Length: 16 << 20},                   // mostly zeros
	}
	ref := cloud.BlobRef{Account: account, Container: "vhds", Name: "sparse.vhd"}
	b, err := f.p.UploadPageBlob(ctx, ref, cloud.PageSource{Reader: bytes.NewReader(content), Size: size, Ranges: ranges}, false)
	require.NoError(t, err)
	assert.Equal(t, int64(size), b.Size)
	assert.Equal(t, digestOf(content), b.Digest)

	onDisk, err := os.ReadFile(f.p.BlobPath(ref))
	require.NoError(t, err)
	assert.True(t, bytes.Equal(content, onDisk), "file content")
	if used, ok := diskUsage(t, f.p.BlobPath(ref)); ok {
		t.Logf("%d bytes on disk for a blob of %d", used, size)
		assert.Less(t, used, int64(size/8), "a 64 MiB blob with 1 MiB of data must stay sparse")
	}

	// Data outside the ranges is not uploaded: it reads as zeros.
	content2 := bytes.Clone(content)
	content2[32<<20] = 0xff
	b2, err := f.p.UploadPageBlob(ctx, ref, cloud.PageSource{Reader: bytes.NewReader(content2), Size: size, Ranges: ranges}, true)
	require.NoError(t, err)
	assert.Equal(t, b.Digest, b2.Digest)

	// Ranges outside the blob are refused.
	_, err = f.p.UploadPageBlob(ctx, ref, cloud.PageSource{Reader: bytes.NewReader(content), Size: size,
		Ranges: []vhd.Range{{Offset: size - 512, Length: 1024}}}, true)
	cloudtest.RequireError(t, err, http.StatusBadRequest, cloud.CodeInvalidParameter)
}

func TestCopyBlob(t *testing.T) {
	f := newFixture(t)
	const size = 32 << 20
	content := make([]byte, size)
	copy(content[5<<20:], "data in the middle")
	copy(content[size-512:], cloudtest.VHDFooter(uint64(size-512), uint32(vhd.DiskTypeFixed)))
	src := cloud.BlobRef{Account: account, Container: "vhds", Name: "src.vhd"}
	f.upload(t, src, content)

	// Into another account and container, with a SAS on the source.
	_, err := f.p.CreateStorageAccount(ctx, cloud.StorageAccount{Name: "dest", ResourceGroup: rgName})
	require.NoError(t, err)
	require.NoError(t, f.p.EnsureContainer(ctx, "dest", "copies"))
	dst := cloud.BlobRef{Account: "dest", Container: "copies", Name: "copy.vhd"}
	b, err := f.p.CopyBlob(ctx, src.URL()+"?sv=2024-01-01&sig=abc", dst, false)
	require.NoError(t, err)
	assert.Equal(t, cloud.BlobTypePage, b.Type)
	assert.Equal(t, int64(size), b.Size)
	assert.Equal(t, digestOf(content), b.Digest)

	got, err := os.ReadFile(f.p.BlobPath(dst))
	require.NoError(t, err)
	assert.True(t, bytes.Equal(content, got), "copied content")
	if used, ok := diskUsage(t, f.p.BlobPath(dst)); ok {
		assert.Less(t, used, int64(12<<20), "the copy keeps the holes")
	}
	footer, err := f.p.ReadBlob(ctx, dst, size-512, 512)
	require.NoError(t, err)
	assert.Equal(t, content[size-512:], footer)

	// Overwrite allowed when asked.
	_, err = f.p.CopyBlob(ctx, f.vhd.URL(), dst, true)
	require.NoError(t, err)
	b, err = f.p.GetBlob(ctx, dst)
	require.NoError(t, err)
	assert.Equal(t, int64(vhdBytes+512), b.Size)
}
