package local

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/cloudtest"
	"github.com/imgflow/imgflow/vhd"
)

func TestManagedImages(t *testing.T) {
	f := newFixture(t)
	p := f.p
	_, err := p.CreateManagedImage(ctx, cloud.ManagedImage{Name: "img", ResourceGroup: "nope", Source: f.vhdSource()})
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeResourceGroupNotFound)
	_, err = p.GetManagedImage(ctx, rgName, "img")
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeResourceNotFound)

	img, err := p.CreateManagedImage(ctx, cloud.ManagedImage{Name: "img", ResourceGroup: rgName,
		OSType: cloud.OSTypeLinux, HyperVGeneration: cloud.HyperVGenV2, Source: f.vhdSource()})
	require.NoError(t, err)
	assert.Equal(t, cloud.ManagedImageID(f.sub, rgName, "img"), img.ID)
	assert.Equal(t, "westeurope", img.Location)
	assert.Equal(t, int64(vhdBytes), img.SizeBytes)

	// PUT again with the same source updates tags; another source is refused.
	again, err := p.CreateManagedImage(ctx, cloud.ManagedImage{Name: "IMG", ResourceGroup: rgName,
		OSType: cloud.OSTypeLinux, HyperVGeneration: cloud.HyperVGenV2, Source: f.vhdSource(), Tags: cloud.Tags{"a": "b"}})
	require.NoError(t, err)
	assert.Equal(t, cloud.Tags{"a": "b"}, again.Tags)
	other := f.vhd
	other.Name = "other.vhd"
	f.upload(t, other, cloudtest.FixedVHD(vhdBytes))
	_, err = p.CreateManagedImage(ctx, cloud.ManagedImage{Name: "img", ResourceGroup: rgName,
		Source: cloud.ImageSource{Kind: cloud.SourceVHD, URI: other.URL()}})
	cloudtest.RequireError(t, err, http.StatusConflict, cloud.CodePropertyChangeNotAllowed, "'source'")

	// VHD footer checks apply.
	dyn := f.vhd
	dyn.Name = "dyn.vhd"
	f.upload(t, dyn, cloudtest.VHD(vhdBytes, uint32(vhd.DiskTypeDynamic)))
	_, err = p.CreateManagedImage(ctx, cloud.ManagedImage{Name: "dyn", ResourceGroup: rgName,
		Source: cloud.ImageSource{Kind: cloud.SourceVHD, URI: dyn.URL()}})
	cloudtest.RequireError(t, err, http.StatusBadRequest, cloud.CodeInvalidParameter, "Dynamic VHD type")

	// From a gallery version: OS type and generation come from its definition.
	_, err = p.CreateImageVersion(ctx, f.version("1.0.0"))
	require.NoError(t, err)
	src := cloud.ImageSource{Kind: cloud.SourceImageVersion, ID: cloud.ImageVersionID(f.sub, rgName, galName, defName, "1.0.0")}
	fromVer, err := p.CreateManagedImage(ctx, cloud.ManagedImage{Name: "fromver", ResourceGroup: rgName, Source: src})
	require.NoError(t, err)
	assert.Equal(t, cloud.OSTypeLinux, fromVer.OSType)
	assert.Equal(t, cloud.HyperVGenV2, fromVer.HyperVGeneration)
	_, err = p.CreateManagedImage(ctx, cloud.ManagedImage{Name: "bad", ResourceGroup: rgName, HyperVGeneration: cloud.HyperVGenV1, Source: src})
	cloudtest.RequireError(t, err, http.StatusBadRequest, cloud.CodeInvalidParameter, "Hyper-V generation")

	require.NoError(t, p.DeleteManagedImage(ctx, rgName, "img"))
	err = p.DeleteManagedImage(ctx, rgName, "img")
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeResourceNotFound)
}

func TestStorageAccounts(t *testing.T) {
	f := newFixture(t)
	p := f.p
	_, err := p.CreateStorageAccount(ctx, cloud.StorageAccount{Name: "x", ResourceGroup: "nope"})
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeResourceGroupNotFound)

	sa, err := p.GetStorageAccount(ctx, rgName, account)
	require.NoError(t, err)
	assert.Equal(t, cloud.StorageAccount{ID: cloud.StorageAccountID(f.sub, rgName, account), Name: account,
		ResourceGroup: rgName, Location: "westeurope", BlobEndpoint: "https://" + account + ".blob.core.windows.net"}, *sa)

	_, err = p.CreateResourceGroup(ctx, cloud.ResourceGroup{Name: "rg2", Location: "eastus"})
	require.NoError(t, err)
	_, err = p.CreateStorageAccount(ctx, cloud.StorageAccount{Name: account, ResourceGroup: "rg2"})
	cloudtest.RequireError(t, err, http.StatusConflict, cloud.CodeStorageAccountAlreadyTaken, "already taken")
	_, err = p.GetStorageAccount(ctx, "rg2", account)
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeResourceNotFound)

	sa, err = p.CreateStorageAccount(ctx, cloud.StorageAccount{Name: account, ResourceGroup: rgName, Tags: cloud.Tags{"t": "1"}})
	require.NoError(t, err)
	assert.Equal(t, cloud.Tags{"t": "1"}, sa.Tags)
	_, err = p.CreateStorageAccount(ctx, cloud.StorageAccount{Name: account, ResourceGroup: rgName, Location: "eastus"})
	cloudtest.RequireError(t, err, http.StatusConflict, cloud.CodeInvalidResourceLocation)
}
