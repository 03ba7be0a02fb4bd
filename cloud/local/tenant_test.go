package local

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/cloudtest"
)

const otherSub = "00000000-0000-0000-0000-00000000beef"

// newTenantPair is a build subscription holding the fixture (VHD, image)
// and a gallery subscription with the same gallery and definition names,
// joined in one tenant.
func newTenantPair(t *testing.T, tenant *Tenant) (build *fixture, gallery *fixture) {
	t.Helper()
	opts := testOptions()
	opts.Tenant = tenant
	b, err := NewMemory(opts)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, b.Close()) })
	opts = testOptions()
	opts.Tenant, opts.SubscriptionID = tenant, otherSub
	g, err := NewMemory(opts)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, g.Close()) })
	require.Equal(t, otherSub, g.SubscriptionID())
	build = setupFixture(t, b)
	gf := &fixture{p: g, sub: otherSub, def: build.def}
	_, err = g.CreateResourceGroup(ctx, cloud.ResourceGroup{Name: rgName, Location: "westeurope"})
	require.NoError(t, err)
	_, err = g.CreateGallery(ctx, cloud.Gallery{Name: galName, ResourceGroup: rgName, Location: "westeurope"})
	require.NoError(t, err)
	_, err = g.CreateImageDefinition(ctx, build.def)
	require.NoError(t, err)
	return build, gf
}

// AgentBaker's shape: the managed image in the build subscription, the
// version in the gallery's, a disk and a test VM back in the build's.
func TestTenantSourcesAcrossSubscriptions(t *testing.T) {
	build, gal := newTenantPair(t, NewTenant())
	img, err := build.p.CreateManagedImage(ctx, cloud.ManagedImage{Name: "img", ResourceGroup: rgName,
		OSType: cloud.OSTypeLinux, HyperVGeneration: cloud.HyperVGenV2, Source: build.vhdSource()})
	require.NoError(t, err)

	v, err := gal.p.CreateImageVersion(ctx, cloud.ImageVersion{Name: "1.0.0", ResourceGroup: rgName, Gallery: galName, Definition: defName,
		Source: cloud.ImageSource{Kind: cloud.SourceManagedImage, ID: img.ID}})
	require.NoError(t, err, "a managed image of another subscription of the tenant is a source")
	assert.Equal(t, cloud.ImageVersionID(otherSub, rgName, galName, defName, "1.0.0"), v.ID)
	assert.Equal(t, int64(vhdBytes), v.SizeBytes)
	_, err = gal.p.GetImageVersion(ctx, rgName, galName, defName, "1.0.0")
	require.NoError(t, err)
	_, err = build.p.GetImageVersion(ctx, rgName, galName, defName, "1.0.0")
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeResourceNotFound) // each subscription has its own

	// A VHD in the build subscription's storage account is a source too.
	_, err = gal.p.CreateImageVersion(ctx, cloud.ImageVersion{Name: "1.0.1", ResourceGroup: rgName, Gallery: galName, Definition: defName, Source: build.vhdSource()})
	require.NoError(t, err)

	// The build subscription makes a disk and a VM from the version.
	d, err := build.p.CreateDiskFromImageVersion(ctx, cloud.Disk{Name: "export", ResourceGroup: rgName, Location: "westeurope", SourceImageVersionID: v.ID})
	require.NoError(t, err)
	assert.Equal(t, v.ID, d.SourceImageVersionID)
	sas, err := build.p.GrantDiskAccess(ctx, rgName, "export", time.Hour)
	require.NoError(t, err)
	dst := cloud.BlobRef{Account: account, Container: "vhds", Name: "export.vhd"}
	_, err = build.p.CopyBlob(ctx, sas, dst, true)
	require.NoError(t, err)
	data, err := os.ReadFile(build.p.BlobPath(dst))
	require.NoError(t, err)
	assert.Equal(t, "boot sector", string(data[:11]), "the disk holds what the other subscription's version was made from")
	_, err = build.p.CreateVM(ctx, cloud.VM{Name: "vm", ResourceGroup: rgName, Location: "westeurope", ImageID: v.ID, Size: "Standard_D2s_v5"})
	require.NoError(t, err)
}

func TestTenantOnlyReachesItsMembers(t *testing.T) {
	// Without a tenant (or outside it) another subscription's source is
	// not found, as ARM answers for a subscription the caller cannot see.
	build, gal := newTenantPair(t, nil)
	img, err := build.p.CreateManagedImage(ctx, cloud.ManagedImage{Name: "img", ResourceGroup: rgName,
		OSType: cloud.OSTypeLinux, HyperVGeneration: cloud.HyperVGenV2, Source: build.vhdSource()})
	require.NoError(t, err)
	_, err = gal.p.CreateImageVersion(ctx, cloud.ImageVersion{Name: "1.0.0", ResourceGroup: rgName, Gallery: galName, Definition: defName,
		Source: cloud.ImageSource{Kind: cloud.SourceManagedImage, ID: img.ID}})
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeResourceNotFound)
}

func TestOpenWithSubscriptionID(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sub")
	opts := testOptions()
	opts.SubscriptionID = otherSub
	p, err := Open(dir, opts)
	require.NoError(t, err)
	assert.Equal(t, otherSub, p.SubscriptionID())
	require.NoError(t, p.Close())
	p, err = Open(dir, opts) // reopened: the same subscription
	require.NoError(t, err)
	require.NoError(t, p.Close())

	opts.SubscriptionID = "00000000-0000-0000-0000-00000000cafe"
	_, err = Open(dir, opts)
	require.ErrorContains(t, err, "is subscription "+otherSub)
	_, err = os.Stat(filepath.Join(dir, "state.json"))
	require.NoError(t, err)
}

// A version published straight to the other subscription's gallery from a
// staged VHD that is gone (as packer's direct publishing leaves it): a
// disk in the build subscription reads the version's own data there.
func TestTenantReadsAVersionsDataInItsSubscription(t *testing.T) {
	build, gal := newTenantPair(t, NewTenant())
	_, err := gal.p.CreateStorageAccount(ctx, cloud.StorageAccount{Name: "galstage", ResourceGroup: rgName, Location: "westeurope"})
	require.NoError(t, err)
	require.NoError(t, gal.p.EnsureContainer(ctx, "galstage", "system"))
	staged := cloud.BlobRef{Account: "galstage", Container: "system", Name: "osdisk.vhd"}
	gal.upload(t, staged, cloudtest.FixedVHD(vhdBytes))
	v, err := gal.p.CreateImageVersion(ctx, cloud.ImageVersion{Name: "1.0.0", ResourceGroup: rgName, Gallery: galName, Definition: defName,
		Source: cloud.ImageSource{Kind: cloud.SourceVHD, URI: staged.URL(), StorageAccountID: cloud.StorageAccountID(otherSub, rgName, "galstage")}})
	require.NoError(t, err)
	require.NoError(t, gal.p.DeleteBlob(ctx, staged))

	_, err = build.p.CreateVM(ctx, cloud.VM{Name: "vm", ResourceGroup: rgName, Location: "westeurope", ImageID: v.ID, Size: "Standard_D2s_v5"})
	require.NoError(t, err)
	_, err = build.p.CreateDiskFromImageVersion(ctx, cloud.Disk{Name: "export", ResourceGroup: rgName, Location: "westeurope", SourceImageVersionID: v.ID})
	require.NoError(t, err)
}
