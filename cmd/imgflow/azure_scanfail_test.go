package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// On the Azure target (fake ARM, Azurite) a scan that reaches its fail_on,
// with test_vm(scans_fail = False) and aks.write_scan_reports, still
// writes its whole report, read back from the fake VM's output blob, then
// fails the run naming the scan and its finding; the throwaway group is
// deleted before.
func TestFailingScanWritesItsReportOnTheAzureTarget(t *testing.T) {
	srv := azureTarget(t)
	seedAKSStorage(t)
	t.Setenv(envSimulatePacker, "simulate")
	root := repoRoot(t)
	artifacts := t.TempDir()
	res := imgflow(t, "run", "--root", root, "--state", t.TempDir(), "--target", "azure", "--artifacts", artifacts,
		filepath.Join(root, "testdata", "workflows", "scan_fail_on.star"), "--var", "fail_on=CRITICAL", "--var", "write_reports=true")
	require.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stderr, "write_scan_reports: 1 scan(s) of test VM testvm-")
	assert.Contains(t, res.stderr, "scan trivy failed with exit code 1; report: "+filepath.Join(artifacts, "trivy-report.json"))
	assert.Contains(t, res.stderr, "CRITICAL CVE-2026-0001 in bcc")
	assert.Contains(t, res.stderr, "called from testdata/workflows/scan_fail_on.star:")

	data, err := os.ReadFile(filepath.Join(artifacts, "trivy-report.json"))
	require.NoError(t, err)
	var report struct {
		Results []struct {
			Vulnerabilities []struct{ VulnerabilityID, PkgName, Severity string }
		}
	}
	require.NoError(t, json.Unmarshal(data, &report), "trivy-report.json is JSON")
	require.Len(t, report.Results, 1)
	require.Len(t, report.Results[0].Vulnerabilities, 1)
	assert.Equal(t, "CVE-2026-0001", report.Results[0].Vulnerabilities[0].VulnerabilityID)
	assertNoTestVMGroup(t, testVMRequests(srv))
}
