package builtins_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// publishedVersion makes a version the workflow then deletes by its ARM
// id, as a promotion replaces a published version.
const publishedVersion = `
rg = resource_group("images", location = "westeurope")
sa = storage_account("imgflowstore", resource_group = rg)
src = vhd_upload("disk.vhd", dest = blob(sa, container = "uploads", name = "disk.vhd"))
d = image_definition(gallery("images", resource_group = rg), name = "ubuntu", publisher = "me", offer = "ubuntu", sku = "2204")
v = image_version(d, version = "1.0.0", source = vhd(src, storage_account = sa))
output("id", v.id)
`

func TestDeleteTakesTheARMIDOfAVersion(t *testing.T) {
	s := newSnippetSandbox(t)
	s.fixedVHD("disk.vhd", 4, "content")
	id := outputsOf(s.mustRun(publishedVersion, nil))["id"].(string)
	versions := func() int {
		return len(s.cloud.Snapshot().ResourceGroups["images"].Galleries["images"].Definitions["ubuntu"].Versions)
	}
	require.Equal(t, 1, versions())

	res := s.mustRun(`delete("`+id+`")`, nil)
	assert.Equal(t, 0, versions())
	assert.Equal(t, "deleted", string(lastOutcome(t, res, "delete")))
	res = s.mustRun(`delete("`+id+`")`, nil)
	assert.Equal(t, "exists", string(lastOutcome(t, res, "delete")), "a version already gone is not an error")

	msg := s.mustFail(`delete("/subscriptions/s/resourceGroups/images/providers/Microsoft.Compute/galleries/images")`, nil)
	assert.Contains(t, msg, "is not a gallery image version: delete() takes the ARM id of a version")
}
