package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azure"
	"github.com/imgflow/imgflow/cloud/azure/azuritetest"
	"github.com/imgflow/imgflow/cloud/azure/fakearm"
	"github.com/imgflow/imgflow/cloud/local"
)

// azureTarget points `imgflow run --target azure` at a fake ARM served over
// HTTP, with Azurite behind its storage accounts through the fake's blob
// gate: an account answers only once the fake ARM holds it, so the run's
// dry run sees Flatcar's account (which Azurite serves) as free, not
// taken, until the workflow creates it.
func azureTarget(t *testing.T) *fakearm.Server {
	t.Helper()
	az := azuritetest.Shared(t)
	srv := fakearm.NewServer(t, fakearm.Options{Blob: &fakearm.BlobBackend{Endpoint: az.Endpoint, Key: azuritetest.Key}})
	for k, v := range srv.Env() {
		t.Setenv(k, v)
	}
	t.Setenv("IMGFLOW_AZURE_BLOB_ENDPOINT", srv.ServeBlobs(t, az.URL)+"/{account}")
	t.Setenv("IMGFLOW_AZURE_STORAGE_KEY", azuritetest.DevKey)
	return srv
}

// seedFlatcarStorage creates Flatcar's release storage account, as it
// exists in Flatcar's subscription: Azurite serves the account's blobs
// already, so where Azurite is reached without the fake's blob gate the
// account must exist in ARM too, or the plan would see a name taken
// elsewhere.
func seedFlatcarStorage(t *testing.T) {
	t.Helper()
	seedStorage(t, "flatcar", "westeurope", fakeAccount(t, "flatcar"))
}

// fakeAccount is the default name of a workflow's storage account in the
// fake's subscription (storage_account_name(prefix = prefix)).
func fakeAccount(t *testing.T, prefix string) string {
	t.Helper()
	name, err := cloud.SubscriptionStorageAccountName(fakearm.DefaultSubscriptionID, prefix)
	require.NoError(t, err)
	return name
}

// seedStorage creates, in the fake ARM, a resource group and storage
// accounts in it that Azurite already serves.
func seedStorage(t *testing.T, group, location string, accounts ...string) {
	t.Helper()
	ctx := context.Background()
	p, err := azure.FromEnvironment(ctx, "", nil)
	require.NoError(t, err)
	_, err = p.CreateResourceGroup(ctx, cloud.ResourceGroup{Name: group, Location: location})
	require.NoError(t, err)
	for _, name := range accounts {
		_, err = p.CreateStorageAccount(ctx, cloud.StorageAccount{Name: name, ResourceGroup: group, Location: location})
		require.NoError(t, err)
	}
}

func flatcarOnAzure(t *testing.T, state string, extra ...string) cliResult {
	t.Helper()
	root := repoRoot(t)
	args := append([]string{"run", "--root", root, "--state", state, "--target", "azure",
		filepath.Join(root, "workflows", "flatcar.star"),
		"--var", "version=4152.2.3", "--var", "vhd=//testdata/flatcar/flatcar-linux-test-amd64.vhd"}, extra...)
	return imgflow(t, args...)
}

func TestFlatcarRunsEndToEndOnTheAzureTarget(t *testing.T) {
	srv := azureTarget(t)
	// Gallery APIs throttle: the first create answers 429 and is retried.
	srv.Inject(fakearm.Fault{API: "GalleriesClient.BeginCreateOrUpdate", Status: http.StatusTooManyRequests, RetryAfter: time.Millisecond})
	state := t.TempDir()
	outputs := filepath.Join(t.TempDir(), "outputs.json")
	res := flatcarOnAzure(t, state, "--outputs", outputs)
	require.Equal(t, 0, res.code, res.String())
	assert.Equal(t, 0, srv.PendingFaults(), "the 429 was answered and retried")
	assert.Contains(t, res.stdout, "(target azure, run ")
	assert.Contains(t, res.stdout, "share_community")

	data, err := os.ReadFile(outputs)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(data, &out))
	public, _ := out["public_gallery_name"].(string)
	assert.Regexp(t, `^flatcar-[0-9a-f-]{36}$`, public)
	assert.Equal(t, "/CommunityGalleries/"+public+"/Images/flatcar-stable-amd64/Versions/4152.2.3", out["community_image_id"])
	assert.Greater(t, len(out["regions"].([]any)), 30)

	// A rerun changes nothing.
	res = flatcarOnAzure(t, state)
	require.Equal(t, 0, res.code, res.String())
	assertNothingChanged(t, res.stdout, "a rerun must change nothing")
}

// `imgflow plan --target azure` against the fake ARM and Azurite: Flatcar's
// storage account is one Azurite serves but nobody created, so the plan
// creates it rather than calling its name taken, and nothing is created.
func TestPlanOnTheAzureTargetCreatesAnAccountNobodyHas(t *testing.T) {
	srv := azureTarget(t)
	root := repoRoot(t)
	res := imgflow(t, "plan", "--root", root, "--state", t.TempDir(), "--target", "azure",
		filepath.Join(root, "workflows", "flatcar.star"),
		"--var", "version=4152.2.3", "--var", "vhd=//testdata/flatcar/flatcar-linux-test-amd64.vhd")
	require.Equal(t, 0, res.code, res.String())
	assert.NotContains(t, res.stdout+res.stderr, "StorageAccountAlreadyTaken")
	account := fakeAccount(t, "flatcar")
	assert.Regexp(t, `storage_account\s+`+account+` in westeurope create`, res.stdout)
	assert.False(t, srv.HasStorageAccount(account), "a plan creates nothing")
}

// assertNothingChanged checks that no step of a run's output was created
// or updated.
func assertNothingChanged(t *testing.T, stdout, why string) {
	t.Helper()
	for _, line := range strings.Split(stdout, "\n") {
		for _, changed := range []string{" created ", " updated "} {
			assert.NotContains(t, line, changed, why)
		}
	}
}

func TestAFailedReplicationRegionIsNamedAndFailsTheRun(t *testing.T) {
	srv := azureTarget(t)
	srv.FailReplication("japaneast", "Replication failed: quota exceeded")
	res := flatcarOnAzure(t, t.TempDir())
	require.NotEqual(t, 0, res.code, res.String())
	assert.Contains(t, res.stderr, "japaneast")
	assert.Contains(t, res.stderr, "workflows/flatcar.star:")
	assert.NotContains(t, res.stdout+res.stderr, "sig=")
}

func TestInvalidInputIsRefusedBeforeAnyAzureCall(t *testing.T) {
	srv := azureTarget(t)
	seeded := len(srv.Requests())
	res := flatcarOnAzure(t, t.TempDir(), "--var", "channel=nightly")
	require.NotEqual(t, 0, res.code, res.String())
	assert.Contains(t, res.stderr, "not one of the choices")
	assert.Contains(t, res.stderr, "nothing was changed")
	for _, r := range srv.Requests()[seeded:] {
		assert.Equal(t, http.MethodGet, r.Method, "no write may reach Azure: %s %s", r.Method, r.Path)
	}
}

// `imgflow state --target azure` lists what a run made on the Azure
// target (here the fake ARM): the gallery, its definition and version.
func TestStateListsTheAzureTargetsGalleries(t *testing.T) {
	azureTarget(t)
	res := flatcarOnAzure(t, t.TempDir())
	require.Equal(t, 0, res.code, res.String())

	res = imgflow(t, "state", "--root", repoRoot(t), "--target", "azure")
	require.Equal(t, 0, res.code, res.String())
	assert.Contains(t, res.stdout, "subscription "+fakearm.DefaultSubscriptionID)
	assert.Regexp(t, `gallery \S+ westeurope community flatcar-`, res.stdout)
	assert.Contains(t, res.stdout, "definition flatcar-stable-amd64")
	assert.Contains(t, res.stdout, "version 4152.2.3")

	res = imgflow(t, "state", "--root", repoRoot(t), "--target", "azure", "--output", "json")
	require.Equal(t, 0, res.code, res.String())
	var st local.State
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &st))
	var versions []string
	for _, rg := range st.ResourceGroups {
		for _, g := range rg.Galleries {
			for _, d := range g.Definitions {
				for _, v := range d.Versions {
					versions = append(versions, g.Name+"/"+d.Name+"/"+v.Name)
				}
			}
		}
	}
	assert.Contains(t, versions, "flatcar/flatcar-stable-amd64/4152.2.3", res.stdout)
}
