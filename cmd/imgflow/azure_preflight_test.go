package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
)

// contributor is the built-in Contributor role's permissions as the
// permissions API lists them: every action but authorization's and the
// gallery share action, no data action.
var contributor = cloud.Permission{
	Actions:    []string{"*"},
	NotActions: []string{"Microsoft.Authorization/*/Delete", "Microsoft.Authorization/*/Write", "Microsoft.Authorization/elevateAccess/Action", "Microsoft.Compute/galleries/share/action"},
}

// `imgflow plan --target azure` on the emulator, as a Contributor (who may
// not share a gallery) whose Flatcar storage account name is someone
// else's: the plan lists both before any change, each with its fix — the
// param to set and the role to grant, with its az command.
func TestAzurePlanListsATakenNameAndAMissingRoleBeforeAnyChange(t *testing.T) {
	srv := azureTarget(t)
	account := fakeAccount(t, "flatcar")
	srv.TakeStorageAccountName(account)
	srv.SetPermissions(contributor)
	root := repoRoot(t)
	res := imgflow(t, "plan", "--root", root, "--state", t.TempDir(), "--target", "azure",
		filepath.Join(root, "workflows", "flatcar.star"),
		"--var", "version=4152.2.3", "--var", "vhd=//testdata/flatcar/flatcar-linux-test-amd64.vhd")
	require.Equal(t, 1, res.code, res.String())
	out := res.stderr
	assert.Regexp(t, `workflows/flatcar\.star:14:\d+: invalid storage account name "`+account+`": cannot be created: The storage account named `+account+` is already taken \(AlreadyExists\)`, out)
	assert.Contains(t, out, "set param storage_account to a name of your own: --var storage_account=")
	assert.Contains(t, out, `invalid permission "`+azrules.ActionShareGallery+`": is not granted at /subscriptions/`)
	assert.Contains(t, out, `az role assignment create --assignee <principal-id> --role "Compute Gallery Sharing Admin" --scope /subscriptions/`)
	assert.NotContains(t, out, "Microsoft.Compute/galleries/write", "Contributor may write galleries")
	assert.False(t, srv.HasStorageAccount(account), "a plan creates nothing")
}

// With every right and a free name the same plan passes the checks.
func TestAzurePlanPassesItsChecksWithEveryRight(t *testing.T) {
	azureTarget(t)
	root := repoRoot(t)
	res := imgflow(t, "plan", "--root", root, "--state", t.TempDir(), "--target", "azure",
		filepath.Join(root, "workflows", "flatcar.star"),
		"--var", "version=4152.2.3", "--var", "vhd=//testdata/flatcar/flatcar-linux-test-amd64.vhd")
	require.Equal(t, 0, res.code, res.String())
}

// regions() and the image version's target regions use only the regions
// where the subscription can create gallery image versions (the
// Microsoft.Compute provider's locations of galleries/images/versions):
// one it cannot use drops out of regions(), and a version's own region
// there is refused before any change, naming it and the usable ones.
func TestAzurePlanUsesOnlyRegionsWithImageVersions(t *testing.T) {
	srv := azureTarget(t)
	root := repoRoot(t)
	plan := func() cliResult {
		return imgflow(t, "plan", "--root", root, "--state", t.TempDir(), "--target", "azure",
			filepath.Join(root, "workflows", "flatcar.star"),
			"--var", "version=4152.2.3", "--var", "vhd=//testdata/flatcar/flatcar-linux-test-amd64.vhd")
	}
	res := plan()
	require.Equal(t, 0, res.code, res.String())
	assert.Regexp(t, `image_version\s+flatcar/flatcar-stable-amd64/4152\.2\.3 in 46 regions, 1 replica each`, res.stdout)

	srv.WithholdImageVersions("northeurope")
	res = plan()
	require.Equal(t, 0, res.code, res.String())
	assert.Regexp(t, `image_version\s+flatcar/flatcar-stable-amd64/4152\.2\.3 in 45 regions, 1 replica each`, res.stdout, "regions() leaves northeurope out")

	srv.WithholdImageVersions("westeurope")
	res = plan()
	require.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stderr, `invalid target region "westeurope": is not a region where this subscription can create gallery image versions`)
	assert.Regexp(t, `available: [a-z0-9, ]*eastus`, res.stderr)
	assert.NotRegexp(t, `available: [^\n]*northeurope`, res.stderr)
}
