package ensure_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/cloudtest"
	"github.com/imgflow/imgflow/cloud/ensure"
	"github.com/imgflow/imgflow/cloud/local"
)

// blobTarget is an in-memory local target with the storage account
// "ensureblobs" in westeurope.
func blobTarget(t *testing.T) *local.Provider {
	t.Helper()
	ctx := context.Background()
	p, err := local.NewMemory(local.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	_, _, err = ensure.EnsureResourceGroup(ctx, p, cloud.ResourceGroup{Name: "rg", Location: "westeurope"})
	require.NoError(t, err)
	_, _, err = ensure.EnsureStorageAccount(ctx, p, cloud.StorageAccount{Name: "ensureblobs", ResourceGroup: "rg", Location: "westeurope"})
	require.NoError(t, err)
	return p
}

func TestEnsurePageBlobUploadsOnceAndRefusesOtherContent(t *testing.T) {
	ctx := context.Background()
	p := blobTarget(t)
	ref := cloud.BlobRef{Account: "ensureblobs", Container: "vhds", Name: "a.vhd"}
	content := make([]byte, 8192)
	copy(content[512:], "data")

	b, outcome, err := ensure.EnsurePageBlob(ctx, p, ref, cloudtest.PageSource(content), false)
	require.NoError(t, err)
	assert.Equal(t, cloud.Created, outcome, "the container is made on demand")
	assert.Equal(t, int64(len(content)), b.Size)

	_, outcome, err = ensure.EnsurePageBlob(ctx, p, ref, cloudtest.PageSource(content), false)
	require.NoError(t, err)
	assert.Equal(t, cloud.Exists, outcome, "the same content is left alone")

	other := bytes.Clone(content)
	copy(other[1024:], "other")
	_, _, err = ensure.EnsurePageBlob(ctx, p, ref, cloudtest.PageSource(other), false)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "already exists with other content: pass overwrite=True")

	_, outcome, err = ensure.EnsurePageBlob(ctx, p, ref, cloudtest.PageSource(other), true)
	require.NoError(t, err)
	assert.Equal(t, cloud.Updated, outcome)
	got, err := p.ReadBlob(ctx, ref, 0, int64(len(other)))
	require.NoError(t, err)
	assert.Equal(t, other, got)
}

func TestEnsureBlobCopyCopiesOnceAndRefusesOtherContent(t *testing.T) {
	ctx := context.Background()
	p := blobTarget(t)
	src := cloud.BlobRef{Account: "ensureblobs", Container: "vhds", Name: "src.vhd"}
	content := make([]byte, 4096)
	copy(content, "source")
	_, _, err := ensure.EnsurePageBlob(ctx, p, src, cloudtest.PageSource(content), false)
	require.NoError(t, err)
	dest := cloud.BlobRef{Account: "ensureblobs", Container: "copies", Name: "dest.vhd"}

	_, outcome, err := ensure.EnsureBlobCopy(ctx, p, src, src.URL(), dest, false)
	require.NoError(t, err)
	assert.Equal(t, cloud.Created, outcome)
	_, outcome, err = ensure.EnsureBlobCopy(ctx, p, src, src.URL(), dest, false)
	require.NoError(t, err)
	assert.Equal(t, cloud.Exists, outcome, "a copy of the same content is not made again")

	other := cloud.BlobRef{Account: "ensureblobs", Container: "vhds", Name: "other.vhd"}
	_, _, err = ensure.EnsurePageBlob(ctx, p, other, cloudtest.PageSource(bytes.Repeat([]byte{1}, 4096)), false)
	require.NoError(t, err)
	_, _, err = ensure.EnsureBlobCopy(ctx, p, other, other.URL(), dest, false)
	assert.ErrorContains(t, err, "already exists with other content")

	missing := cloud.BlobRef{Account: "ensureblobs", Container: "vhds", Name: "missing.vhd"}
	_, _, err = ensure.EnsureBlobCopy(ctx, p, missing, missing.URL()+"?sv=2024&sig=SECRET", dest, true)
	require.Error(t, err)
	assert.True(t, cloud.IsNotFound(err), err)
	assert.NotContains(t, err.Error(), "SECRET", "the source's SAS is never shown")
}
