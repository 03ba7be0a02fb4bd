package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud/azure"
	"github.com/imgflow/imgflow/cloud/azure/fakearm"
)

// An Arm64 Azure Linux build on the Azure target (fake ARM and Azurite,
// packer simulated through the SDK clients) publishes straight to the
// gallery: the version is created from the build, no managed image is
// ever created or deleted.
func TestLinuxArm64PublishesStraightToTheGalleryOnTheAzureTarget(t *testing.T) {
	srv := azureTarget(t)
	seedAKSStorage(t)
	t.Setenv(envSimulatePacker, "simulate")
	root := repoRoot(t)
	outputs, artifacts := filepath.Join(t.TempDir(), "outputs.json"), t.TempDir()
	res := imgflow(t, "run", "--root", root, "--state", t.TempDir(), "--target", "azure", filepath.Join(root, "workflows", "linux.star"),
		"--var", "os=AzureLinux", "--var", "os_version=3.0", "--var", "arch=arm64", "--var", "os_disk_size_gb=1",
		"--var", "replications=westus2=2", "--outputs", outputs, "--artifacts", artifacts)
	require.Equal(t, 0, res.code, res.String())

	data, err := os.ReadFile(outputs)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(data, &out))
	// The publishing artifacts: the info as the outputs have it, and the
	// files the build downloaded.
	data, err = os.ReadFile(filepath.Join(artifacts, "vhd-publishing-info.json"))
	require.NoError(t, err)
	var info map[string]any
	require.NoError(t, json.Unmarshal(data, &info))
	require.Len(t, info, 11)
	for k, v := range info {
		assert.Equal(t, out[k], v, "vhd-publishing-info.json %s", k)
	}
	assert.FileExists(t, filepath.Join(artifacts, "release-notes.txt"))
	assert.FileExists(t, filepath.Join(artifacts, "image-bom.json"))
	assert.Equal(t, "Arm64", out["image_architecture"])
	assert.Equal(t, "V3gen2arm64", out["sku_name"])
	assert.Contains(t, out["captured_sig_resource_id"], "/galleries/PackerSigGalleryEastUS/images/AzureLinuxV3gen2arm64/versions/")
	assert.Equal(t, []any{"eastus", "westus2"}, out["replicated_regions"])

	// The replica count per region reached ARM.
	ctx := context.Background()
	p, err := azure.FromEnvironment(ctx, "", nil)
	require.NoError(t, err)
	id := out["captured_sig_resource_id"].(string)
	v, err := p.GetImageVersion(ctx, "aks-vhd-build", "PackerSigGalleryEastUS", "AzureLinuxV3gen2arm64", id[strings.LastIndex(id, "/")+1:])
	require.NoError(t, err)
	counts := map[string]int{}
	for _, r := range v.TargetRegions {
		counts[r.Name] = r.ReplicaCount
	}
	assert.Equal(t, map[string]int{"eastus": 1, "westus2": 2}, counts)

	images := slices.ContainsFunc(srv.Requests(), func(r fakearm.Request) bool {
		return strings.Contains(r.Path, "/providers/Microsoft.Compute/images/") && r.Method != http.MethodGet
	})
	assert.False(t, images, "no managed image may be created or deleted")
	assert.True(t, slices.ContainsFunc(srv.Requests(), func(r fakearm.Request) bool {
		return r.Method == http.MethodPut && strings.Contains(r.Path, "/images/AzureLinuxV3gen2arm64/versions/")
	}), "the version was created")
}

// A confidential VM build goes the same way into its Specialized
// definition, then exports as every build does.
func TestLinuxCVMPublishesASpecializedVersionOnTheAzureTarget(t *testing.T) {
	srv := azureTarget(t)
	seedAKSStorage(t)
	t.Setenv(envSimulatePacker, "simulate")
	root := repoRoot(t)
	res := imgflow(t, "run", "--root", root, "--state", t.TempDir(), "--target", "azure", filepath.Join(root, "workflows", "linux.star"),
		"--var", "os=AzureLinux", "--var", "os_version=3.0", "--var", "features=cvm", "--var", "os_disk_size_gb=1")
	require.Equal(t, 0, res.code, res.String())
	assert.False(t, slices.ContainsFunc(srv.Requests(), func(r fakearm.Request) bool {
		return strings.Contains(r.Path, "/providers/Microsoft.Compute/images/") && r.Method != http.MethodGet
	}), "no managed image may be created or deleted")

	ctx := context.Background()
	p, err := azure.FromEnvironment(ctx, "", nil)
	require.NoError(t, err)
	d, err := p.GetImageDefinition(ctx, "aks-vhd-build", "PackerSigGalleryEastUS", "AzureLinuxV3gen2CVM")
	require.NoError(t, err)
	assert.Equal(t, "Specialized", d.OSState)
	assert.Equal(t, "ConfidentialVM", d.Features["SecurityType"])
	assert.True(t, slices.ContainsFunc(srv.Requests(), func(r fakearm.Request) bool {
		return r.Method == http.MethodPut && strings.Contains(r.Path, "/images/AzureLinuxV3gen2CVM/versions/")
	}), "the version was created")
}
