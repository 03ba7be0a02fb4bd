package guest

import (
	"encoding/json"
	"testing"

	"github.com/imgflow/imgflow/cloud"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGuestScanValidate(t *testing.T) {
	for _, c := range []struct {
		scan cloud.GuestScan
		err  string
	}{
		{cloud.GuestScan{Kind: cloud.ScanTrivyRootfs, Severity: "HIGH,CRITICAL"}, ""},
		{cloud.GuestScan{Kind: cloud.ScanTrivyImages, Severity: "LOW", FailOn: "CRITICAL"}, ""},
		{cloud.GuestScan{Kind: cloud.ScanCIS, Level: 2}, ""},
		{cloud.GuestScan{Kind: cloud.ScanTrivyRootfs}, "needs severity"},
		{cloud.GuestScan{Kind: cloud.ScanTrivyRootfs, Severity: "high"}, `"high" is not a trivy severity`},
		{cloud.GuestScan{Kind: cloud.ScanTrivyRootfs, Severity: "HIGH", FailOn: "HIGH,SEVERE"}, `fail_on "HIGH,SEVERE": "SEVERE" is not a trivy severity`},
		{cloud.GuestScan{Kind: cloud.ScanTrivyRootfs, Severity: "HIGH", Advisories: []cloud.GuestAdvisory{{ID: "CVE-1", Package: "bcc", Severity: "HIGH"}}}, "needs id, package and version"},
		{cloud.GuestScan{Kind: cloud.ScanCIS, Level: 3}, "level 3: use 1 or 2"},
		{cloud.GuestScan{Kind: "grype"}, `unknown scan kind "grype"`},
	} {
		err := c.scan.Validate()
		if c.err == "" {
			assert.NoError(t, err, "%+v", c.scan)
		} else {
			assert.ErrorContains(t, err, c.err, "%+v", c.scan)
		}
	}
}

func TestSimulateTrivyRootfs(t *testing.T) {
	g := &GuestContent{Packages: map[string]string{"bcc": "0.29.0", "containerd": "1.7.20"}}
	scan := &cloud.GuestScan{Kind: cloud.ScanTrivyRootfs, Severity: "MEDIUM,HIGH,CRITICAL", FailOn: "CRITICAL", Advisories: []cloud.GuestAdvisory{
		{ID: "CVE-B", Package: "containerd", Version: "1.7.20", Severity: "CRITICAL", FixedVersion: "1.7.21"},
		{ID: "CVE-A", Package: "bcc", Version: "0.29.0", Severity: "MEDIUM"},
		{ID: "CVE-C", Package: "bcc", Version: "0.29.0", Severity: "LOW"},
		{ID: "CVE-D", Package: "runc", Version: "1.1.0", Severity: "CRITICAL"},
	}}
	res, err := SimulateScan(scan, g)
	require.NoError(t, err)
	var report struct {
		SchemaVersion int
		ArtifactType  string
		Results       []struct {
			Class           string
			Packages        []struct{ Name, Version string }
			Vulnerabilities []struct{ VulnerabilityID, PkgName, InstalledVersion, FixedVersion, Severity string }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(res.Output), &report))
	assert.Equal(t, 2, report.SchemaVersion)
	assert.Equal(t, "filesystem", report.ArtifactType)
	require.Len(t, report.Results, 1)
	assert.Equal(t, "os-pkgs", report.Results[0].Class)
	assert.Len(t, report.Results[0].Packages, 2)
	var ids []string
	for _, v := range report.Results[0].Vulnerabilities {
		ids = append(ids, v.VulnerabilityID)
	}
	assert.Equal(t, []string{"CVE-A", "CVE-B"}, ids, "within severity, of recorded package versions, by package")
	assert.Equal(t, 1, res.ExitCode, "a CRITICAL finding with fail_on CRITICAL")
	assert.Equal(t, "trivy: 1 vulnerabilities of severity CRITICAL (fail_on):\nCRITICAL CVE-B in containerd 1.7.20\n", res.Error)

	again, err := SimulateScan(scan, g)
	require.NoError(t, err)
	assert.Equal(t, res.Output, again.Output, "the report is deterministic (golden tests compare it)")
}

func TestGuestScanFromScript(t *testing.T) {
	s, err := GuestScanFromScript("#!/bin/bash\n# imgflow-guest-scan: {\"kind\":\"cis\",\"level\":1}\nset -e\n")
	require.NoError(t, err)
	assert.Equal(t, &cloud.GuestScan{Kind: cloud.ScanCIS, Level: 1}, s)
	s, err = GuestScanFromScript("#!/bin/bash\ntrue\n")
	require.NoError(t, err)
	assert.Nil(t, s)
	_, err = GuestScanFromScript("# imgflow-guest-scan: {\"kind\":\"cis\",\"level\":5}\n")
	assert.ErrorContains(t, err, "level 5")
}

// Simulate runs a command's scan or its checks, never both.
func TestSimulateIsTheScanOrTheChecks(t *testing.T) {
	g := &GuestContent{Files: map[string]GuestFile{"/etc/a": {Mode: "0644"}}, Packages: map[string]string{"bcc": "0.29.0"}}
	checks := []cloud.GuestCheck{{Kind: "file_exists", Path: "/etc/a"}}
	res, err := Simulate(checks, nil, g, 1<<30)
	require.NoError(t, err)
	assert.Equal(t, 0, res.ExitCode)
	scan := &cloud.GuestScan{Kind: cloud.ScanTrivyRootfs, Severity: "HIGH,CRITICAL"}
	res, err = Simulate(nil, scan, g, 1<<30)
	require.NoError(t, err)
	assert.Contains(t, res.Output, `"SchemaVersion"`, "the scan's report")
	_, err = Simulate(checks, scan, g, 1<<30)
	assert.ErrorContains(t, err, "not both")
	_, err = Simulate(nil, &cloud.GuestScan{Kind: "nmap"}, g, 1<<30)
	assert.Error(t, err, "a scan is validated")
}
