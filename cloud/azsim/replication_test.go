package azsim_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azsim"
	"github.com/imgflow/imgflow/cloud/cloudtest"
)

// replicatingSim is a simulation whose replication to westus takes two
// reads, to eastus an hour and then fails, on a clock the test moves.
func replicatingSim(t *testing.T) (*azsim.Provider, *time.Time, cloud.ImageVersion) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p, err := azsim.New(nil, azsim.Options{Now: func() time.Time { return now }, Replication: func(region string) azsim.Replication {
		switch region {
		case "westus":
			return azsim.Replication{Reads: 2}
		case "eastus":
			return azsim.Replication{Delay: time.Hour, Fail: "disk copy failed"}
		}
		return azsim.Replication{}
	}})
	require.NoError(t, err)
	_, err = p.CreateResourceGroup(ctx, cloud.ResourceGroup{Name: "rg", Location: "westeurope"})
	require.NoError(t, err)
	_, err = p.CreateStorageAccount(ctx, cloud.StorageAccount{Name: "vhds", ResourceGroup: "rg", Location: "westeurope"})
	require.NoError(t, err)
	require.NoError(t, p.EnsureContainer(ctx, "vhds", "c"))
	ref := cloud.BlobRef{Account: "vhds", Container: "c", Name: "os.vhd"}
	_, err = p.UploadPageBlob(ctx, ref, cloudtest.PageSource(cloudtest.FixedVHD(1<<20)), false)
	require.NoError(t, err)
	_, err = p.CreateGallery(ctx, cloud.Gallery{Name: "g", ResourceGroup: "rg", Location: "westeurope"})
	require.NoError(t, err)
	_, err = p.CreateImageDefinition(ctx, cloudtest.Definition("rg", "g", "d", "s"))
	require.NoError(t, err)
	v := cloud.ImageVersion{Name: "1.0.0", ResourceGroup: "rg", Gallery: "g", Definition: "d",
		Source:        cloud.ImageSource{Kind: cloud.SourceVHD, URI: ref.URL()},
		TargetRegions: []cloud.TargetRegion{{Name: "westeurope"}, {Name: "westus"}}}
	return p, &now, v
}

func states(v *cloud.ImageVersion) map[string]string {
	out := map[string]string{}
	for _, r := range v.Replication {
		out[r.Region] = r.State
	}
	return out
}

// A new region replicates for Options.Replication's reads; the version is
// Creating until every region completed, as Azure's.
func TestReplicationTakesItsReads(t *testing.T) {
	ctx := context.Background()
	p, _, in := replicatingSim(t)
	v, err := p.CreateImageVersion(ctx, in)
	require.NoError(t, err)
	assert.Equal(t, cloud.ProvisioningCreating, v.ProvisioningState)
	for range 2 {
		v, err = p.GetImageVersion(ctx, "rg", "g", "d", "1.0.0")
		require.NoError(t, err)
		assert.Equal(t, map[string]string{"westeurope": cloud.ReplicationCompleted, "westus": cloud.ReplicationReplicating}, states(v))
		assert.True(t, v.Provisioning())
	}
	v, err = p.GetImageVersion(ctx, "rg", "g", "d", "1.0.0")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"westeurope": cloud.ReplicationCompleted, "westus": cloud.ReplicationCompleted}, states(v))
	assert.Equal(t, cloud.ProvisioningSucceeded, v.ProvisioningState)
}

// A region that fails ends Failed once its delay passed on the clock, and
// the version's provisioning with it, its failure saying where.
func TestReplicationFailsARegionOnTheClock(t *testing.T) {
	ctx := context.Background()
	p, now, in := replicatingSim(t)
	in.TargetRegions = []cloud.TargetRegion{{Name: "westeurope"}, {Name: "eastus"}}
	_, err := p.CreateImageVersion(ctx, in)
	require.NoError(t, err)
	v, failure, err := p.ImageVersionProgress(ctx, "rg", "g", "d", "1.0.0", false)
	require.NoError(t, err)
	assert.Equal(t, cloud.ProvisioningCreating, v.ProvisioningState)
	assert.NoError(t, failure)

	*now = now.Add(time.Hour)
	v, failure, err = p.ImageVersionProgress(ctx, "rg", "g", "d", "1.0.0", false)
	require.NoError(t, err)
	assert.True(t, v.Failed())
	assert.Equal(t, cloud.ReplicationFailed, states(v)["eastus"])
	cloudtest.RequireError(t, failure, http.StatusInternalServerError, cloud.CodeReplicationFailed, "East US: disk copy failed")
}

// A PATCH keeps the replication of the regions it keeps and replicates
// the ones it adds.
func TestUpdateReplicatesOnlyNewRegions(t *testing.T) {
	ctx := context.Background()
	p, _, in := replicatingSim(t)
	in.TargetRegions = []cloud.TargetRegion{{Name: "westeurope"}}
	v, err := p.CreateImageVersion(ctx, in)
	require.NoError(t, err)
	require.Equal(t, cloud.ProvisioningSucceeded, v.ProvisioningState)
	in.TargetRegions = []cloud.TargetRegion{{Name: "westeurope"}, {Name: "westus"}}
	v, err = p.UpdateImageVersion(ctx, in)
	require.NoError(t, err)
	assert.Equal(t, cloud.ProvisioningUpdating, v.ProvisioningState)
	assert.Equal(t, map[string]string{"westeurope": cloud.ReplicationCompleted, "westus": cloud.ReplicationReplicating}, states(v))

	require.NoError(t, p.FailImageVersion(ctx, "rg", "g", "d", "1.0.0", nil))
	v, failure, err := p.ImageVersionProgress(ctx, "rg", "g", "d", "1.0.0", false)
	require.NoError(t, err)
	assert.True(t, v.Failed(), "a failed operation leaves the version Failed")
	assert.NoError(t, failure, "nothing said why")
}

// A VM of a definition gets its highest version replicated to the VM's
// region; none there is ARM's 404 GalleryImageNotFound
// (VirtualMachine_Create_FromAGeneralizedSharedImage.json).
func TestVMImageOfADefinitionIsItsLatestReplicatedVersion(t *testing.T) {
	ctx := context.Background()
	p, _, in := replicatingSim(t)
	_, err := p.CreateImageVersion(ctx, in) // 1.0.0: westus after two reads
	require.NoError(t, err)
	in.Name, in.TargetRegions = "2.0.0", []cloud.TargetRegion{{Name: "westeurope"}}
	_, err = p.CreateImageVersion(ctx, in)
	require.NoError(t, err)
	def := cloud.ImageDefinitionID(p.SubscriptionID(), "rg", "g", "d")

	// The version a VM got is its OS disk's source.
	source := func(vm, loc string) (string, error) {
		v, err := p.CreateVM(ctx, cloud.VM{Name: vm, ResourceGroup: "rg", Location: loc, Size: "Standard_D2ds_v5", ImageID: def})
		if err != nil {
			return "", err
		}
		d, err := p.GetDisk(ctx, "rg", v.OSDiskName)
		require.NoError(t, err)
		return d.SourceImageVersionID, nil
	}
	got, err := source("vm1", "westeurope")
	require.NoError(t, err)
	assert.Equal(t, cloud.ImageVersionID(p.SubscriptionID(), "rg", "g", "d", "2.0.0"), got)
	_, err = source("vm2", "westus")
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeGalleryImageNotFound, "is not available in westus region")
	for range 3 {
		_, err = p.GetImageVersion(ctx, "rg", "g", "d", "1.0.0")
		require.NoError(t, err)
	}
	got, err = source("vm2", "westus")
	require.NoError(t, err)
	assert.Equal(t, cloud.ImageVersionID(p.SubscriptionID(), "rg", "g", "d", "1.0.0"), got)
}
