package fakearm

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/imgflow/imgflow/cloud/azsim"
)

// A resource's content replaced while a copy of it was being made is not
// the same any more: azsim then copies again rather than placing a copy
// of what the resource no longer holds.
func TestBlobDataSameIsFalseOnceTheResourceWasReplaced(t *testing.T) {
	d := newBlobData(nil)
	k := azsim.ResourceKey("/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/disks/d")
	d.at[k] = "https://a.blob/c/copy-1"
	opened := &blobContent{url: "https://a.blob/c/copy-1"}
	assert.True(t, d.Same(opened, k))

	d.at[k] = "https://a.blob/c/copy-2" // Place of another copy meanwhile
	assert.False(t, d.Same(opened, k))
	delete(d.at, k)
	assert.False(t, d.Same(opened, k), "a removed resource holds nothing it was opened from")
}
