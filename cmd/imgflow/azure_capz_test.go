package main

import (
	"context"
	"net/http"
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
)

// The group, galleries and names workflows/capz.star uses for one target
// (ubuntu-2404 in gen2) with its defaults.
const (
	capzGroup     = "cluster-api-gallery"
	capzStaging   = "capi-ubuntu-2404-gen2"
	capzCommunity = "capi-ubun2-2404-gen2"
	capzVersion   = "1.33.1"
)

// capzOnAzure runs workflows/capz.star with --target azure for one image
// (ubuntu-2404, gen2) of the test image-builder checkout: packer is
// simulated through the Azure provider, so the managed image, its staging
// account and OS disk, the staging version, the smoke-test VM and its run
// commands, and the promotion all go through the SDK clients to the fake
// ARM and Azurite. A 1 GB OS disk keeps Azurite's work small. packerVars
// are added to packer_vars.
func capzOnAzure(t *testing.T, packerVars ...string) cliResult {
	t.Helper()
	t.Setenv(envSimulatePacker, "simulate")
	root := repoRoot(t)
	return imgflow(t, "run", "--root", root, "--state", t.TempDir(), "--target", "azure",
		filepath.Join(root, "workflows", "capz.star"), "--var", "image_builder=//testdata/image-builder",
		"--var", "targets=ubuntu-2404", "--var", "generations=gen2",
		"--var", "packer_vars="+strings.Join(append([]string{"os_disk_size_gb=1"}, packerVars...), ","))
}

// hasRequest reports whether the fake ARM answered a method request whose
// path contains fragment with success.
func hasRequest(reqs []fakearm.Request, method, fragment string) bool {
	return slices.ContainsFunc(reqs, func(r fakearm.Request) bool {
		return r.Method == method && strings.Contains(r.Path, fragment) && r.Status < 300
	})
}

// capzSmokeChecks are capz.star's smoke-test checks, each a run command.
var capzSmokeChecks = []string{"kubeadm-version", "kubelet-version", "containerd-version", "kubeadm-dry-run"}

// On the Azure target (fake ARM, Azurite, packer simulated) capz.star
// builds the managed image and the staging version, boots a VM of the
// image whose run commands check kubeadm, kubelet and containerd, promotes
// the version into the community gallery, and deletes the staging version,
// the managed image and the VM's group.
func TestCapzPublishesOnTheAzureTarget(t *testing.T) {
	srv := azureTarget(t)
	start := time.Now().UTC()
	res := capzOnAzure(t)
	require.Equal(t, 0, res.code, res.String())
	tested := regexp.MustCompile(`test_vm\s+4 checks on VM testvm-\w+ from (` + capzStaging + `-\d+) passed`).FindStringSubmatch(res.stdout)
	require.NotNil(t, tested, "the smoke test passed on a VM of the managed image")
	assert.Regexp(t, `capz_images = \[\{"gallery":"ClusterAPI-[0-9a-f-]{36}","name":"`+capzCommunity+`","version":"`+capzVersion+`"\}\]`, res.stdout)
	assert.NotContains(t, res.stdout+res.stderr, "sig=", "a SAS signature was printed")

	reqs := testVMRequests(srv)
	for _, check := range capzSmokeChecks {
		assert.True(t, hasRequest(reqs, http.MethodPut, "/runCommands/"+check), "run command %s", check)
	}
	assertNoTestVMGroup(t, reqs)

	ctx := context.Background()
	p, err := azure.FromEnvironment(ctx, "", nil)
	require.NoError(t, err)
	g, err := p.GetGallery(ctx, capzGroup, "community_gallery")
	require.NoError(t, err)
	require.NotNil(t, g.Community)
	assert.Equal(t, "ClusterAPI", g.Community.PublicNamePrefix)
	v, err := p.GetImageVersion(ctx, capzGroup, "community_gallery", capzCommunity, capzVersion)
	require.NoError(t, err)
	require.NotNil(t, v.EndOfLife)
	assertSixMonthsOut(t, start, v.EndOfLife.UTC())
	assert.Len(t, v.TargetRegions, 12, "the build region and CAPZ's regions")
	assert.Contains(t, v.Source.ID, "/galleries/staging_gallery/images/"+capzStaging+"/versions/"+capzVersion, "promoted from the staging version")

	// The staging version and packer's managed image were temporary.
	_, err = p.GetImageVersion(ctx, capzGroup, "staging_gallery", capzStaging, capzVersion)
	assert.True(t, cloud.IsNotFound(err), "the staging version is deleted: %v", err)
	_, err = p.GetManagedImage(ctx, capzGroup, tested[1])
	assert.True(t, cloud.IsNotFound(err), "the managed image is deleted: %v", err)
}

// assertSixMonthsOut checks that the end of life is the run's date six
// months on (the day clamped to the month's last, so never later).
func assertSixMonthsOut(t *testing.T, run, endOfLife time.Time) {
	t.Helper()
	months := (endOfLife.Year()*12 + int(endOfLife.Month())) - (run.Year()*12 + int(run.Month()))
	assert.Equal(t, 6, months, "end of life %s, run %s", endOfLife, run)
	assert.LessOrEqual(t, endOfLife.Day(), run.Day(), "end of life %s, run %s", endOfLife, run)
	assert.GreaterOrEqual(t, endOfLife.Day(), min(run.Day(), 28), "end of life %s, run %s", endOfLife, run)
}

// A build of another Kubernetes version (packer_flags pinning Ubuntu's
// kubeadm and kubelet to 1.34.0) fails the smoke test's run commands on
// the Azure target: the run fails naming the checks, nothing is promoted,
// and the staging version, the managed image and the VM's group are
// deleted all the same.
func TestCapzFailedSmokeTestStopsBeforePromotionOnTheAzureTarget(t *testing.T) {
	srv := azureTarget(t)
	res := capzOnAzure(t, "kubernetes_deb_version=1.34.0-1.1")
	require.Equal(t, 1, res.code, res.String())
	for _, want := range []string{
		"test_vm: 3 of 4 checks failed",
		"check kubeadm-version failed with exit code 1",
		"kubeadm: version 1.34.0, want 1.33.1",
		"[ERROR KubeletVersion]: the kubelet version is higher than the control plane version",
		"called from workflows/capz.star:",
	} {
		assert.Contains(t, res.stderr, want)
	}
	assert.Regexp(t, `test_vm\s+failed`, res.stdout)
	image := regexp.MustCompile(`packer_build\s+managed image (` + capzStaging + `-\d+),`).FindStringSubmatch(res.stdout)
	require.NotNil(t, image, res.stdout)

	reqs := testVMRequests(srv)
	for _, check := range capzSmokeChecks {
		assert.True(t, hasRequest(reqs, http.MethodPut, "/runCommands/"+check), "run command %s", check)
	}
	assertNoTestVMGroup(t, reqs)
	assert.False(t, slices.ContainsFunc(srv.Requests(), func(r fakearm.Request) bool {
		return r.Method == http.MethodPut && strings.Contains(r.Path, "/galleries/community_gallery/images/")
	}), "nothing is promoted")

	ctx := context.Background()
	p, err := azure.FromEnvironment(ctx, "", nil)
	require.NoError(t, err)
	_, err = p.GetImageVersion(ctx, capzGroup, "staging_gallery", capzStaging, capzVersion)
	assert.True(t, cloud.IsNotFound(err), "the staging version is deleted: %v", err)
	_, err = p.GetManagedImage(ctx, capzGroup, image[1])
	assert.True(t, cloud.IsNotFound(err), "the managed image is deleted: %v", err)
}
