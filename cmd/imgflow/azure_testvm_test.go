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

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azure"
	"github.com/imgflow/imgflow/cloud/azure/fakearm"
)

// testVMRequests are the fake ARM requests of test_vm: the throwaway
// group, its network, the VM and its run commands.
func testVMRequests(srv *fakearm.Server) []fakearm.Request {
	var out []fakearm.Request
	for _, r := range srv.Requests() {
		if strings.Contains(strings.ToLower(r.Path), "/resourcegroups/imgflow-testvm-") && !r.Poll {
			out = append(out, r)
		}
	}
	return out
}

// On the Azure target (fake ARM, Azurite, packer simulated) linux.star and
// gen2.star boot the captured version, run the AKS checks and scans
// through managed run commands, and delete the throwaway group; the
// scans' reports come whole from the output blobs the fake VM wrote on
// Azurite, which are deleted, and become artifacts. With a disk limit the
// image cannot meet, the run fails naming the check, and the group is
// deleted all the same.
func TestTestVMOnTheAzureTarget(t *testing.T) {
	for _, wf := range []string{"linux.star", "gen2.star"} {
		t.Run(wf, func(t *testing.T) {
			srv := azureTarget(t)
			seedAKSStorage(t)
			t.Setenv(envSimulatePacker, "simulate")
			root := repoRoot(t)
			state := t.TempDir()
			artifacts := t.TempDir()
			res := imgflow(t, "run", "--root", root, "--state", state, "--target", "azure", "--artifacts", artifacts, filepath.Join(root, "workflows", wf),
				"--var", "os_disk_size_gb=1", "--var", "cis_assessor=https://example.invalid/cisassessor.tar.gz?sv=2024&sig=s3cret")
			require.Equal(t, 0, res.code, res.String())
			assert.Regexp(t, `7 checks on VM testvm-\w+ from`, res.stdout)
			assert.NotContains(t, res.stdout+res.stderr, "s3cret")
			reqs := testVMRequests(srv)
			has := func(method, fragment string) bool {
				return slices.ContainsFunc(reqs, func(r fakearm.Request) bool {
					return r.Method == method && strings.Contains(r.Path, fragment) && r.Status < 300
				})
			}
			assert.True(t, has(http.MethodPut, "/providers/Microsoft.Network/virtualNetworks/"), "the VM's network")
			assert.True(t, has(http.MethodPut, "/providers/Microsoft.Compute/virtualMachines/"), "the VM")
			for _, check := range []string{"cse-modules", "mglru-rule", "bcc-version", "disk-usage", "trivy", "trivy-images", "cis"} {
				assert.True(t, has(http.MethodPut, "/runCommands/"+check), "run command %s", check)
			}
			assertScanReports(t, artifacts, vmNameIn(t, res.stdout))
			assert.True(t, has(http.MethodDelete, "/resourcegroups/imgflow-testvm-"), "the group is deleted")
			assertNoTestVMGroup(t, reqs)

			// A check the image fails: the run fails naming it, the group goes.
			res = imgflow(t, "run", "--root", root, "--state", state, "--target", "azure", filepath.Join(root, "workflows", wf),
				"--var", "os_disk_size_gb=1", "--var", "max_disk_used_percent=1")
			require.Equal(t, 1, res.code, res.String())
			assert.Contains(t, res.stderr, "check disk-usage failed with exit code 1")
			assert.Contains(t, res.stderr, "disk used 1%, want below 1%")
			assertNoTestVMGroup(t, testVMRequests(srv))
		})
	}
}

// assertNoTestVMGroup checks through ARM that no group test_vm made is left.
func assertNoTestVMGroup(t *testing.T, reqs []fakearm.Request) {
	t.Helper()
	ctx := context.Background()
	p, err := azure.FromEnvironment(ctx, "", nil)
	require.NoError(t, err)
	groups := map[string]bool{}
	for _, r := range reqs {
		_, rest, _ := strings.Cut(strings.ToLower(r.Path), "/resourcegroups/")
		g, _, _ := strings.Cut(rest, "/")
		groups[g] = true
	}
	require.NotEmpty(t, groups)
	for g := range groups {
		_, err := p.GetResourceGroup(ctx, g)
		assert.True(t, cloud.IsNotFound(err), "group %s is gone: %v", g, err)
	}
}

// vmNameIn is the test VM a run's test_vm step names.
func vmNameIn(t *testing.T, stdout string) string {
	t.Helper()
	m := regexp.MustCompile(`checks on VM (testvm-\w+)`).FindStringSubmatch(stdout)
	require.NotNil(t, m, stdout)
	return m[1]
}

// assertScanReports checks the scans' artifacts (the fake VM's simulated
// reports, whole) and that their output blobs are gone from the classic
// account.
func assertScanReports(t *testing.T, dir, vm string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "trivy-report.json"))
	require.NoError(t, err)
	var report struct {
		SchemaVersion int
		Results       []struct {
			Packages []struct{ Name, Version string }
		}
		Imgflow struct{ Simulated bool } `json:"imgflow"`
	}
	require.NoError(t, json.Unmarshal(data, &report), "trivy-report.json is JSON")
	assert.Equal(t, 2, report.SchemaVersion)
	assert.True(t, report.Imgflow.Simulated)
	require.Len(t, report.Results, 1)
	assert.Equal(t, "bcc", report.Results[0].Packages[0].Name)
	for name, want := range map[string]string{"trivy-images-table.txt": "This contains the list of images", "cis-report.txt": "CIS benchmark assessment, level 1"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		assert.Contains(t, string(data), want)
		assert.Contains(t, string(data), "SIMULATED by imgflow")
	}
	p, err := azure.FromEnvironment(context.Background(), "", nil)
	require.NoError(t, err)
	for _, check := range []string{"trivy", "trivy-images", "cis"} {
		for _, stream := range []string{".stdout", ".stderr"} {
			_, err := p.GetBlob(context.Background(), cloud.BlobRef{Account: fakeAccount(t, "aksvhdclassic"), Container: "imgflow-testvm", Name: vm + "/" + check + stream})
			assert.True(t, cloud.IsNotFound(err), "the %s blob of %s is deleted once read: %v", stream, check, err)
		}
	}
}
