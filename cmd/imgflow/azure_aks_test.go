package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azure"
	"github.com/imgflow/imgflow/cloud/azure/fakearm"
	"github.com/imgflow/imgflow/packer/localsim"
)

// gen2OnAzure runs workflows/gen2.star with --target azure: packer is
// simulated through the Azure provider (IMGFLOW_PACKER=simulate), so the
// managed image, the captured version, the disk export and the VHD copy
// all go through the real SDK clients to the fake ARM and Azurite. A 1 GB
// OS disk keeps Azurite's work small; the path is the same at 30.
func gen2OnAzure(t *testing.T, state string, extra ...string) cliResult {
	t.Helper()
	t.Setenv(envSimulatePacker, "simulate")
	root := repoRoot(t)
	args := append([]string{"run", "--root", root, "--state", state, "--target", "azure",
		filepath.Join(root, "workflows", "gen2.star"), "--var", "os_disk_size_gb=1"}, extra...)
	return imgflow(t, args...)
}

// seedAKSStorage creates, in ARM, the storage accounts Azurite serves for
// gen2: the AKS team's classic VHD account, as it exists in their
// subscription, and the account simulated packer builds stage their OS
// disk in (see TestMain).
func seedAKSStorage(t *testing.T) {
	t.Helper()
	seedStorage(t, "aks-vhd-build", "eastus", fakeAccount(t, "aksvhdclassic"), localsim.StagingAccount(fakearm.DefaultSubscriptionID, "aks-vhd-build"))
}

func TestGen2RunsEndToEndOnTheAzureTarget(t *testing.T) {
	srv := azureTarget(t)
	seedAKSStorage(t)
	// The captured version's create is throttled once and retried.
	srv.Inject(fakearm.Fault{API: "GalleryImageVersionsClient.BeginCreateOrUpdate", Status: http.StatusTooManyRequests, RetryAfter: time.Millisecond})
	state := t.TempDir()
	outputs := filepath.Join(t.TempDir(), "outputs.json")
	res := gen2OnAzure(t, state, "--outputs", outputs)
	require.Equal(t, 0, res.code, res.String())
	assert.Equal(t, 0, srv.PendingFaults(), "the 429 was answered and retried")
	for _, step := range []string{"packer_build", "sig_to_vhd", "delete"} {
		assert.Contains(t, res.stdout, step)
	}
	assert.NotContains(t, res.stdout+res.stderr, "sig=", "a SAS signature was printed")
	// The disk export's copy reports its progress on stderr, in lines
	// (no terminal here): its size first, its rate at the end.
	assert.Regexp(t, `(?m)^copy \S+ to \S+/aksvhdclassic[0-9a-f]{8}/vhds/1\.\S+\.vhd.*: 1\.00 GiB to transfer$`, res.stderr)
	assert.Regexp(t, `(?m)^copy \S+ to \S+/aksvhdclassic[0-9a-f]{8}/vhds/1\.\S+\.vhd.*: 1\.00 GiB in \S+$`, res.stderr)

	data, err := os.ReadFile(outputs)
	require.NoError(t, err)
	assert.NotContains(t, string(data), "sig=")
	var out map[string]any
	require.NoError(t, json.Unmarshal(data, &out))
	vhdURL, _ := out["vhd_url"].(string)
	require.Regexp(t, `/aksvhdclassic[0-9a-f]{8}/vhds/1\.[0-9]+\.[0-9]+\.vhd$`, vhdURL, "the classic account, as Azurite serves it")
	assert.Equal(t, "V2", out["hyperv_generation"])
	assert.Contains(t, out["captured_sig_resource_id"], "/galleries/PackerSigGalleryEastUS/images/2204gen2containerd/versions/")

	// The VHD is in Azurite: a fixed VHD of the 1 GB disk, with its digest.
	ctx := context.Background()
	p, err := azure.FromEnvironment(ctx, "", nil)
	require.NoError(t, err)
	ref, err := cloud.ParseBlobURL(vhdURL)
	require.NoError(t, err)
	b, err := p.GetBlob(ctx, ref)
	require.NoError(t, err)
	assert.Equal(t, "PageBlob", b.Type)
	assert.Equal(t, int64(1<<30+512), b.Size)
	assert.NotEmpty(t, b.Digest)

	// packer's managed image was temporary: deleted when the run ended.
	assert.True(t, slices.ContainsFunc(srv.Requests(), func(r fakearm.Request) bool {
		return r.Method == http.MethodDelete && strings.Contains(r.Path, "/providers/Microsoft.Compute/images/2204gen2containerd-")
	}), "the managed image was not deleted")

	// Resuming the finished run changes nothing.
	id := regexp.MustCompile(`\(target azure, run ([^)\s]+)\)`).FindStringSubmatch(res.stdout)
	require.Len(t, id, 2, res.stdout)
	res = imgflow(t, "run", "--root", repoRoot(t), "--state", state, "--target", "azure", "--resume", id[1])
	require.Equal(t, 0, res.code, res.String())
	assertNothingChanged(t, res.stdout, "a resumed finished run must change nothing")
}

func TestGen2FailedCaptureRegionIsNamedAndFailsTheRun(t *testing.T) {
	srv := azureTarget(t)
	seedAKSStorage(t)
	srv.FailReplication("eastus", "Replication failed: disk quota exceeded")
	res := gen2OnAzure(t, t.TempDir())
	require.NotEqual(t, 0, res.code, res.String())
	// packer waits for publishing, which fails with the region.
	assert.Contains(t, res.stderr, "failed to replicate to eastus (Replication failed: disk quota exceeded)")
	assert.Contains(t, res.stderr, "called from workflows/gen2.star:28:18")
	assert.NotContains(t, res.stdout, "sig_to_vhd", "nothing runs after the failed build")
	assert.NotContains(t, res.stdout+res.stderr, "sig=")
}
