package azrules_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
)

// ARM's permission semantics: patterns with '*', case-insensitive;
// NotActions take away only from their own entry's Actions; data actions
// are matched against DataActions only.
func TestAllowedFollowsARMsPermissionSemantics(t *testing.T) {
	contributor := cloud.Permission{Actions: []string{"*"}, NotActions: []string{"Microsoft.Authorization/*/Write", azrules.ActionShareGallery}}
	sharing := cloud.Permission{Actions: []string{"Microsoft.Compute/galleries/share/action", "Microsoft.Compute/galleries/read"}}
	blobData := cloud.Permission{DataActions: []string{"Microsoft.Storage/storageAccounts/blobServices/containers/blobs/*"}}

	assert.True(t, azrules.Allowed([]cloud.Permission{contributor}, "Microsoft.Compute/galleries/images/versions/write", false))
	assert.True(t, azrules.Allowed([]cloud.Permission{contributor}, "microsoft.compute/GALLERIES/write", false), "case-insensitive")
	assert.False(t, azrules.Allowed([]cloud.Permission{contributor}, azrules.ActionShareGallery, false), "Contributor's NotActions")
	assert.False(t, azrules.Allowed([]cloud.Permission{contributor}, "Microsoft.Authorization/roleAssignments/write", false), "a wildcard NotAction")
	assert.True(t, azrules.Allowed([]cloud.Permission{contributor, sharing}, azrules.ActionShareGallery, false), "another role grants what Contributor's NotActions leave out")
	assert.False(t, azrules.Allowed([]cloud.Permission{contributor}, azrules.DataActionBlobWrite, true), "Actions \"*\" grants no data action")
	assert.True(t, azrules.Allowed([]cloud.Permission{blobData}, azrules.DataActionBlobWrite, true))
	assert.False(t, azrules.Allowed([]cloud.Permission{blobData}, azrules.DataActionBlobWrite, false), "a data action is not an action")
	assert.True(t, azrules.Allowed([]cloud.Permission{{Actions: []string{"Microsoft.Compute/*/write"}}}, "Microsoft.Compute/galleries/images/write", false), "'*' spans segments")
	assert.False(t, azrules.Allowed(nil, "Microsoft.Compute/galleries/write", false))
}

// What each change needs: resource writes at the group, groups at the
// subscription, the share action, and blob rights by how blobs are reached.
func TestNeedsOfEachChange(t *testing.T) {
	const sub = "sub"
	rg := "/subscriptions/sub/resourceGroups/rg"
	token := func(string) cloud.BlobAuthMode { return cloud.BlobAuthToken }
	keys := func(string) cloud.BlobAuthMode { return cloud.BlobAuthKeys }
	either := func(string) cloud.BlobAuthMode { return cloud.BlobAuthEither }
	given := func(string) cloud.BlobAuthMode { return cloud.BlobAuthGiven }

	n := azrules.NeedsOf(sub, cloud.Change{Op: cloud.OpCreate, Kind: cloud.KindResourceGroup, ID: rg}, token)
	assert.Equal(t, []azrules.Need{{Scope: "/subscriptions/sub", Action: "Microsoft.Resources/subscriptions/resourceGroups/write", Role: azrules.RoleContributor}}, n)
	n = azrules.NeedsOf(sub, cloud.Change{Op: cloud.OpCreate, Kind: cloud.KindImageVersion, ID: cloud.ImageVersionID(sub, "rg", "g", "d", "1.0.0")}, token)
	assert.Equal(t, []azrules.Need{{Scope: rg, Action: "Microsoft.Compute/galleries/images/versions/write", Role: azrules.RoleContributor}}, n)
	n = azrules.NeedsOf(sub, cloud.Change{Op: cloud.OpCreate, Kind: cloud.KindCommunitySharing, ID: cloud.GalleryID(sub, "rg", "g")}, token)
	assert.Equal(t, []azrules.Need{{Scope: rg, Action: azrules.ActionShareGallery, Role: azrules.RoleGallerySharing}}, n)

	blob := cloud.Change{Op: cloud.OpCreate, Kind: cloud.KindBlob, ID: "https://acct.blob.core.windows.net/c/x.vhd"}
	assert.Equal(t, []azrules.Need{{Account: "acct", Action: azrules.DataActionBlobWrite, Data: true, Role: azrules.RoleBlobDataContrib}}, azrules.NeedsOf(sub, blob, token))
	assert.Equal(t, []azrules.Need{{Account: "acct", Action: azrules.ActionListKeys, Role: azrules.RoleKeyOperator}}, azrules.NeedsOf(sub, blob, keys))
	assert.Empty(t, azrules.NeedsOf(sub, blob, given))
	e := azrules.NeedsOf(sub, blob, either)
	if assert.Len(t, e, 1) && assert.NotNil(t, e[0].Or) {
		assert.True(t, e[0].Allowed([]cloud.Permission{{Actions: []string{"*"}}}), "Contributor reads the key: listKeys will do")
		assert.False(t, e[0].Allowed([]cloud.Permission{{Actions: []string{"Microsoft.Compute/*"}}}))
	}
}
