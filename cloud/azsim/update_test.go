package azsim_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azsim"
	"github.com/imgflow/imgflow/cloud/cloudtest"
	"github.com/imgflow/imgflow/cloud/transfer"
	"github.com/imgflow/imgflow/vhd"
)

type countingStore struct{ saves int }

func (s *countingStore) Save(*azsim.State) error { s.saves++; return nil }

// A delete of what is not there, and an ensure of a container that is,
// answer from the current state as the change would (its error, or
// nothing to do) without copying the whole state or saving it: a plan
// makes a dozen such calls, and the copy was most of what they cost.
func TestCallsThatChangeNothingCopyNothing(t *testing.T) {
	ctx := context.Background()
	store := &countingStore{}
	p, err := azsim.New(nil, azsim.Options{Store: store})
	require.NoError(t, err)
	for i := range 40 { // a state whose copy costs hundreds of allocations
		_, err := p.CreateResourceGroup(ctx, cloud.ResourceGroup{Name: fmt.Sprintf("rg%d", i), Location: "westus",
			Tags: cloud.Tags{"a": "1", "b": "2"}})
		require.NoError(t, err)
	}
	_, err = p.CreateStorageAccount(ctx, cloud.StorageAccount{Name: "acct", ResourceGroup: "rg0", Location: "westus"})
	require.NoError(t, err)
	require.NoError(t, p.EnsureContainer(ctx, "acct", "c"))
	before := p.Snapshot()
	saves := store.saves

	missing := cloud.BlobRef{Account: "acct", Container: "c", Name: "missing.vhd"}
	cloudtest.RequireError(t, p.DeleteBlob(ctx, missing), http.StatusNotFound, cloud.CodeBlobNotFound)
	cloudtest.RequireError(t, p.DeleteDisk(ctx, "rg0", "nodisk"), http.StatusNotFound, cloud.CodeResourceNotFound)
	cloudtest.RequireError(t, p.RevokeDiskAccess(ctx, "rg0", "nodisk"), http.StatusNotFound, cloud.CodeResourceNotFound)
	cloudtest.RequireError(t, p.DeleteResourceGroup(ctx, "norg"), http.StatusNotFound, cloud.CodeResourceGroupNotFound)
	require.NoError(t, p.EnsureContainer(ctx, "acct", "c"))

	for name, call := range map[string]func(){
		"delete a missing blob":         func() { _ = p.DeleteBlob(ctx, missing) },
		"delete a missing disk":         func() { _ = p.DeleteDisk(ctx, "rg0", "nodisk") },
		"delete a missing group":        func() { _ = p.DeleteResourceGroup(ctx, "norg") },
		"ensure an existing container":  func() { _ = p.EnsureContainer(ctx, "acct", "c") },
		"revoke a missing disk's grant": func() { _ = p.RevokeDiskAccess(ctx, "rg0", "nodisk") },
	} {
		assert.Less(t, testing.AllocsPerRun(10, call), 40.0, name)
	}
	assert.Equal(t, saves, store.saves, "nothing saved")
	assert.Equal(t, before, p.Snapshot())
}

// hookData keeps no content (reads are zeros) and runs copied during
// each copy, which runs outside the simulation's lock.
type hookData struct {
	copied func()
	copies int
}

type hookStaged struct{}

func (hookStaged) Discard() {}

func (h *hookData) Write(ctx context.Context, size int64, src io.ReaderAt, ranges []vhd.Range) (azsim.Staged, string, error) {
	d, err := transfer.SparseDigest(ctx, src, size, ranges)
	return hookStaged{}, d, err
}

func (h *hookData) Copy(context.Context, azsim.Content, int64) (azsim.Staged, string, error) {
	h.copies++
	if h.copied != nil {
		h.copied()
	}
	return hookStaged{}, "", nil
}
func (h *hookData) Open(context.Context, azsim.Key) (azsim.Content, error) { return nil, nil }
func (h *hookData) Has(azsim.Key) bool                                     { return false }
func (h *hookData) Same(azsim.Content, azsim.Key) bool                     { return true }
func (h *hookData) Place(azsim.Staged, azsim.Key) error                    { return nil }
func (h *hookData) Remove(azsim.Key) error                                 { return nil }

// A resource with content is made from the state its source was found
// in only while that state is current: a change that comes in while the
// content is copied is kept, and the resource is made anew on top of it.
func TestContentCopyKeepsAChangeMadeMeanwhile(t *testing.T) {
	ctx := context.Background()
	data := &hookData{}
	p, err := azsim.New(nil, azsim.Options{Data: data})
	require.NoError(t, err)
	_, err = p.CreateResourceGroup(ctx, cloud.ResourceGroup{Name: "rg", Location: "westus"})
	require.NoError(t, err)
	src := vhdSource(t, p, "rg")

	data.copied = func() {
		_, err := p.CreateResourceGroup(ctx, cloud.ResourceGroup{Name: "meanwhile", Location: "westus"})
		assert.NoError(t, err)
	}
	_, err = p.CreateManagedImage(ctx, cloud.ManagedImage{Name: "img", ResourceGroup: "rg", Location: "westus", Source: src})
	require.NoError(t, err)
	_, err = p.GetResourceGroup(ctx, "meanwhile")
	assert.NoError(t, err, "the change made during the copy is kept")
	_, err = p.GetManagedImage(ctx, "rg", "img")
	assert.NoError(t, err)

	data.copied, data.copies = nil, 0
	_, err = p.CreateManagedImage(ctx, cloud.ManagedImage{Name: "img2", ResourceGroup: "rg", Location: "westus", Source: src})
	require.NoError(t, err)
	assert.Equal(t, 1, data.copies)
	_, err = p.GetManagedImage(ctx, "rg", "img2")
	assert.NoError(t, err)
	_, err = p.GetResourceGroup(ctx, "meanwhile")
	assert.NoError(t, err)
}

// When nothing changed the state while the content was copied, the
// change is committed from the state its first attempt made: the whole
// state is copied once, not a second time to make the same change again.
func TestContentCopyCopiesTheStateOnceWhenNothingCameBetween(t *testing.T) {
	ctx := context.Background()
	p, err := azsim.New(nil, azsim.Options{Data: &hookData{}})
	require.NoError(t, err)
	for i := range 200 { // a state whose copy dwarfs the rest of the call
		_, err := p.CreateResourceGroup(ctx, cloud.ResourceGroup{Name: fmt.Sprintf("rg%d", i), Location: "westus",
			Tags: cloud.Tags{"a": "1", "b": "2"}})
		require.NoError(t, err)
	}
	src := vhdSource(t, p, "rg0")

	stateCopy := testing.AllocsPerRun(5, func() { p.Snapshot() })
	n := 0
	create := testing.AllocsPerRun(5, func() {
		n++
		_, err := p.CreateManagedImage(ctx, cloud.ManagedImage{Name: fmt.Sprintf("img%d", n), ResourceGroup: "rg0", Location: "westus", Source: src})
		require.NoError(t, err)
	})
	assert.Less(t, create, 1.5*stateCopy, "one copy of the state (%.0f allocations each), not two", stateCopy)
	t.Logf("state copy %.0f allocations, create %.0f", stateCopy, create)
}

// vhdSource uploads a small VHD to a new account of group rg and returns
// it as an image source.
func vhdSource(t *testing.T, p *azsim.Provider, rg string) cloud.ImageSource {
	t.Helper()
	ctx := context.Background()
	sa, err := p.CreateStorageAccount(ctx, cloud.StorageAccount{Name: "acct", ResourceGroup: rg, Location: "westus"})
	require.NoError(t, err)
	require.NoError(t, p.EnsureContainer(ctx, "acct", "c"))
	blob := cloud.BlobRef{Account: "acct", Container: "c", Name: "os.vhd"}
	_, err = p.UploadPageBlob(ctx, blob, cloudtest.PageSource(make([]byte, 1024)), false)
	require.NoError(t, err)
	return cloud.ImageSource{Kind: cloud.SourceVHD, URI: blob.URL(), StorageAccountID: sa.ID}
}
