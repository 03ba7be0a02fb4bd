package azsim_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azsim"
	"github.com/imgflow/imgflow/cloud/cloudtest"
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
