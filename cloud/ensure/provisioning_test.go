package ensure_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/cloudtest"
	"github.com/imgflow/imgflow/cloud/ensure"
	"github.com/imgflow/imgflow/cloud/local"
	"github.com/imgflow/imgflow/vhd"
)

// failedVersions is a target whose versions read back in a given
// provisioning state, as Azure reports a version whose create failed.
type failedVersions struct {
	cloud.Provider
	state   string
	regions map[string]string // region → Failed details
}

func (p *failedVersions) GetImageVersion(ctx context.Context, rg, gallery, def, version string) (*cloud.ImageVersion, error) {
	v, err := p.Provider.GetImageVersion(ctx, rg, gallery, def, version)
	if err != nil {
		return nil, err
	}
	v.ProvisioningState = p.state
	for i, s := range v.Replication {
		if d, ok := p.regions[s.Region]; ok {
			v.Replication[i] = cloud.RegionStatus{Region: s.Region, State: cloud.ReplicationFailed, Details: d}
		}
	}
	return v, nil
}

func versionFixture(t *testing.T) (*failedVersions, cloud.ImageVersion) {
	t.Helper()
	ctx := context.Background()
	lp, err := local.NewMemory(local.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { lp.Close() })
	p := &failedVersions{Provider: lp}
	_, _, err = ensure.EnsureResourceGroup(ctx, p, cloud.ResourceGroup{Name: "rg", Location: "westeurope"})
	require.NoError(t, err)
	_, _, err = ensure.EnsureGallery(ctx, p, cloud.Gallery{Name: "gal", ResourceGroup: "rg", Location: "westeurope"})
	require.NoError(t, err)
	_, _, err = ensure.EnsureImageDefinition(ctx, p, cloudtest.Definition("rg", "gal", "def", "s"), time.Now())
	require.NoError(t, err)
	sa, _, err := ensure.EnsureStorageAccount(ctx, p, cloud.StorageAccount{Name: "acct", ResourceGroup: "rg", Location: "westeurope"})
	require.NoError(t, err)
	require.NoError(t, p.EnsureContainer(ctx, "acct", "vhds"))
	path := filepath.Join(t.TempDir(), "os.vhd")
	_, err = vhd.CreateFixed(path, 1<<20, false)
	require.NoError(t, err)
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	st, err := f.Stat()
	require.NoError(t, err)
	ref := cloud.BlobRef{Account: "acct", Container: "vhds", Name: "os.vhd"}
	_, err = p.UploadPageBlob(ctx, ref, cloud.PageSource{Reader: f, Size: st.Size()}, false)
	require.NoError(t, err)
	want := cloud.ImageVersion{Name: "1.0.0", ResourceGroup: "rg", Gallery: "gal", Definition: "def",
		Source: cloud.ImageSource{Kind: cloud.SourceVHD, URI: ref.URL(), StorageAccountID: sa.ID}}
	_, outcome, err := ensure.EnsureImageVersion(ctx, p, want, time.Now())
	require.NoError(t, err)
	require.Equal(t, cloud.Created, outcome)
	return p, want
}

// A version left in provisioningState Failed is never reused as existing,
// whatever the target: ensure, replicate and wait all report it with its
// regions' errors and the command that deletes it.
func TestFailedVersionIsNeverReused(t *testing.T) {
	ctx := context.Background()
	p, want := versionFixture(t)
	p.state = cloud.ProvisioningFailed
	p.regions = map[string]string{"westeurope": "The source image is corrupt."}
	const deleteCmd = "az sig image-version delete --resource-group rg --gallery-name gal --gallery-image-definition def --gallery-image-version 1.0.0"

	_, _, err := ensure.EnsureImageVersion(ctx, p, want, time.Now())
	require.ErrorIs(t, err, ensure.ErrVersionFailed)
	assert.Contains(t, err.Error(), "failed to replicate to westeurope (The source image is corrupt.)")
	assert.Contains(t, err.Error(), deleteCmd)

	_, _, err = ensure.Replicate(ctx, p, ensure.ReplicateRequest{ResourceGroup: "rg", Gallery: "gal", Definition: "def", Version: "1.0.0", Regions: []string{"eastus"}})
	require.ErrorIs(t, err, ensure.ErrVersionFailed)
	assert.Contains(t, err.Error(), deleteCmd)

	v := want
	_, err = ensure.WaitReplicated(ctx, p, &v, time.Second, time.Millisecond, nil)
	require.ErrorIs(t, err, ensure.ErrVersionFailed)
	require.ErrorIs(t, err, ensure.ErrReplicationIncomplete)
}

// A version still Creating is not ready even when its regions report
// Completed: the wait goes on until the provisioning ends.
func TestWaitReplicatedWaitsForProvisioning(t *testing.T) {
	ctx := context.Background()
	p, want := versionFixture(t)
	p.state = cloud.ProvisioningCreating
	v := want
	_, err := ensure.WaitReplicated(ctx, p, &v, 300*time.Millisecond, time.Millisecond, nil)
	require.ErrorIs(t, err, ensure.ErrReplicationIncomplete)
	assert.Contains(t, err.Error(), "provisioningState Creating")

	p.state = cloud.ProvisioningSucceeded
	got, err := ensure.WaitReplicated(ctx, p, &v, time.Second, time.Millisecond, nil)
	require.NoError(t, err)
	assert.Equal(t, cloud.ProvisioningSucceeded, got.ProvisioningState)
}
