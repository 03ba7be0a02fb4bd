package packer

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	sub      = "/subscriptions/00000000-0000-0000-0000-000000000000"
	vhdURL   = "https://sa.blob.core.windows.net/system/Microsoft.Compute/Images/aks-vhds/aks-osDisk.5e8f1c2a-1b2c-4d5e-8f90-123456789abc.vhd"
	tplURL   = "https://sa.blob.core.windows.net/system/Microsoft.Compute/Images/aks-vhds/aks-vmTemplate.5e8f1c2a-1b2c-4d5e-8f90-123456789abc.json"
	sasQuery = "?se=2021-01-31T00%3A00%3A00Z&sig=Zm9vYmFy%2BQ%3D%3D&sp=r&sr=b&sv=2018-03-28"
	sasSig   = "Zm9vYmFy%2BQ%3D%3D"
)

// machineString escapes an artifact string the way packer's
// machine-readable UI does.
func machineString(s string) string {
	s = strings.ReplaceAll(s, ",", "%!(PACKER_COMMA)")
	return strings.ReplaceAll(s, "\n", `\n`)
}

func azureRun(artifact string) string {
	return "1796210375,,ui,say,==> azure-arm:  -> ResourceGroupName : 'packer-Resource-Group-abc'\n" +
		"1796210375,azure-arm,artifact-count,1\n" +
		"1796210375,azure-arm,artifact,0,builder-id,Azure.ResourceManagement.VMImage\n" +
		"1796210375,azure-arm,artifact,0,id,x\n" +
		"1796210375,azure-arm,artifact,0,string," + machineString(artifact) + "\n" +
		"1796210375,azure-arm,artifact,0,files-count,0\n" +
		"1796210375,azure-arm,artifact,0,end\n" +
		"1796210375,,ui,say,--> azure-arm: " + machineString(artifact) + "\n"
}

func TestAzureArtifactVHD(t *testing.T) {
	s := "Azure.ResourceManagement.VMImage:\n\nOSType: Linux\nStorageAccountLocation: westus2\n" +
		"OSDiskUri: " + vhdURL + "\nOSDiskUriReadOnlySas: " + vhdURL + sasQuery + "\n" +
		"TemplateUri: " + tplURL + "\nTemplateUriReadOnlySas: " + tplURL + sasQuery + "\n" +
		"AdditionalDiskUri (datadisk-1): " + vhdURL + "1\nAdditionalDiskUriReadOnlySas (datadisk-1): " + vhdURL + "1" + sasQuery + "\n"
	a, err := ParseAzureARMArtifact(s)
	require.NoError(t, err)
	assert.False(t, a.IsManagedImage())
	assert.Equal(t, "Linux", a.OSType)
	assert.Equal(t, "westus2", a.StorageAccountLocation)
	assert.Equal(t, vhdURL, a.OSDiskURI)
	assert.Equal(t, vhdURL+"?<redacted>", a.OSDiskURIReadOnlySAS)
	assert.Equal(t, tplURL, a.TemplateURI)
	assert.NotContains(t, a.TemplateURIReadOnlySAS, sasSig)
	require.Len(t, a.AdditionalDisks, 1)
	assert.Equal(t, vhdURL+"1", a.AdditionalDisks[0].URI)
	assert.NotContains(t, a.AdditionalDisks[0].ReadOnlySAS, sasSig)
	assert.Equal(t, vhdURL, a.VHDURL())

	var shown []string
	c := newCollector(func(l string) { shown = append(shown, l) }, newRedactor(nil))
	feed(c, azureRun(s))
	res := c.result()
	assert.Equal(t, vhdURL, res.OSDiskVHDURL)
	assert.Empty(t, res.ManagedImageID)
	assert.Empty(t, res.GalleryImageVersionID)
	assert.Empty(t, res.ResourceGroup)
	require.Len(t, res.Builds, 1)
	assert.Equal(t, "packer-Resource-Group-abc", res.Builds[0].BuildResourceGroup)
	require.Len(t, res.Builds[0].Artifacts, 1)
	assert.NotContains(t, res.Builds[0].Artifacts[0].String, sasSig)
	assert.Contains(t, res.Builds[0].Artifacts[0].String, "?<redacted>")
	assert.Contains(t, shown, "OSDiskUriReadOnlySas: "+vhdURL+"?<redacted>")
	for _, l := range shown {
		assert.NotContains(t, l, sasSig)
	}
}

func TestAzureArtifactVHDOnlySAS(t *testing.T) {
	a, err := ParseAzureARMArtifact("Azure.ResourceManagement.VMImage:\n\nOSDiskUri: \nOSDiskUriReadOnlySas: " + vhdURL + sasQuery + "\n")
	require.NoError(t, err)
	assert.Equal(t, vhdURL, a.VHDURL(), "the query (and its SAS) is dropped")
}

func TestAzureArtifactManagedImage(t *testing.T) {
	img := sub + "/resourceGroups/aks-images/providers/Microsoft.Compute/images/aks-2204"
	s := "Azure.ResourceManagement.VMImage:\n\nOSType: Linux\nManagedImageResourceGroupName: aks-images\n" +
		"ManagedImageName: aks-2204\nManagedImageId: " + img + "\nManagedImageLocation: westus2\n" +
		"ManagedImageOSDiskSnapshotName: snap-os\n"
	a, err := ParseAzureARMArtifact(s)
	require.NoError(t, err)
	assert.True(t, a.IsManagedImage())
	assert.Equal(t, AzureARMArtifact{
		OSType: "Linux", ManagedImageResourceGroupName: "aks-images", ManagedImageName: "aks-2204",
		ManagedImageID: img, ManagedImageLocation: "westus2", ManagedImageOSDiskSnapshotName: "snap-os",
	}, *a)

	c := newCollector(nil, nil)
	feed(c, azureRun(s))
	res := c.result()
	assert.Equal(t, img, res.ManagedImageID)
	assert.Equal(t, "aks-images", res.ResourceGroup)
	assert.Empty(t, res.GalleryImageVersionID)
	assert.Empty(t, res.OSDiskVHDURL)
}

func TestAzureArtifactManagedImageWithGallery(t *testing.T) {
	img := sub + "/resourceGroups/aks-images/providers/Microsoft.Compute/images/aks-2204"
	ver := sub + "/resourceGroups/aks-galleries/providers/Microsoft.Compute/galleries/g/images/ubuntu/versions/2021.01.01"
	s := "Azure.ResourceManagement.VMImage:\n\nOSType: Linux\nManagedImageResourceGroupName: aks-images\n" +
		"ManagedImageName: aks-2204\nManagedImageId: " + img + "\nManagedImageLocation: westus2\n" +
		"ManagedImageSharedImageGalleryId: " + ver + "\n" +
		// A line from a later plugin version: kept, not fatal.
		"SharedImageGalleryReplicatedRegions: westus2, eastus\n"
	c := newCollector(nil, nil)
	feed(c, azureRun(s))
	res := c.result()
	assert.Equal(t, img, res.ManagedImageID)
	assert.Equal(t, ver, res.GalleryImageVersionID)
	assert.Equal(t, "aks-images", res.ResourceGroup)
	az := res.Builds[0].Artifacts[0].Azure
	require.NotNil(t, az)
	assert.Equal(t, "westus2, eastus", az.Extra["SharedImageGalleryReplicatedRegions"], "commas survive the round trip")
}

func TestAzureArtifactRejectsOtherStrings(t *testing.T) {
	_, err := ParseAzureARMArtifact("Stored file: /tmp/x")
	assert.Error(t, err)
	_, err = ParseAzureARMArtifact("Azure.ResourceManagement.VMImage:\n\nno colon here")
	assert.Error(t, err)
}

// A build published straight to the gallery (azure plugin 1.4.0, bundled
// with packer 1.9.5): no managed image and no VHD lines, the version's id
// and the destination.
func TestAzureArtifactGalleryOnly(t *testing.T) {
	version := sub + "/resourceGroups/rg/providers/Microsoft.Compute/galleries/g/images/arm64/versions/1.2.3"
	s := "Azure.ResourceManagement.VMImage:\n\nOSType: Linux\nManagedImageSharedImageGalleryId: " + version + "\n" +
		"SharedImageGalleryResourceGroup: rg\nSharedImageGalleryName: g\nSharedImageGalleryImageName: arm64\n" +
		"SharedImageGalleryImageVersion: 1.2.3\nSharedImageGalleryReplicatedRegions: eastus, westus2\n"
	a, err := ParseAzureARMArtifact(s)
	require.NoError(t, err)
	assert.False(t, a.IsManagedImage())
	assert.Empty(t, a.ManagedImageID)
	assert.Equal(t, version, a.ManagedImageSharedImageGalleryID)
	assert.Empty(t, a.VHDURL())
	assert.Equal(t, "eastus, westus2", a.Extra["SharedImageGalleryReplicatedRegions"])

	c := newCollector(func(string) {}, newRedactor(nil))
	feed(c, azureRun(s))
	res := c.result()
	assert.Equal(t, version, res.GalleryImageVersionID)
	assert.Empty(t, res.ManagedImageID)
	assert.Empty(t, res.ResourceGroup, "no managed image resource group")
	assert.Empty(t, res.OSDiskVHDURL)
}
