package azure_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/appendblob"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azure"
	"github.com/imgflow/imgflow/cloud/azure/azuritetest"
	"github.com/imgflow/imgflow/cloud/azure/fakearm"
	"github.com/imgflow/imgflow/cloud/guest"
)

// scanScript is a scan script as lib/scans.star writes it: the simulated
// form rides in its imgflow-guest-scan comment.
func scanScript(scan string) string {
	return "#!/bin/bash\n# imgflow-guest-scan: " + scan + "\ntrivy rootfs /\n"
}

// scanVM makes VM vm2 in group imgflow-testvm-2 from an image recording
// 301 packages (their trivy report is larger than 4 KB) and returns the
// storage account and container of its image.
func (w *world) scanVM() (*cloud.StorageAccount, string) {
	w.t.Helper()
	sa, c := w.base("imgflowtest")
	packages := map[string]string{}
	for i := range 300 {
		packages[fmt.Sprintf("pkg-%03d", i)] = "1.0." + fmt.Sprint(i)
	}
	packages["bcc"] = "0.29.0"
	v := w.guestVersion(sa, c, &guest.GuestContent{Files: map[string]guest.GuestFile{}, Packages: packages, UsedBytes: 1 << 20})
	_, err := w.p.CreateResourceGroup(w.ctx, cloud.ResourceGroup{Name: "imgflow-testvm-2", Location: loc})
	require.NoError(w.t, err)
	_, err = w.p.CreateVM(w.ctx, cloud.VM{Name: "vm2", ResourceGroup: "imgflow-testvm-2", Size: "Standard_D2ds_v5", ImageID: v.ID})
	require.NoError(w.t, err)
	return sa, c
}

// TestRunCommandOutputBlobsOnTheFake runs a scan whose report is larger
// than the instance view keeps: with output blobs the whole report comes
// back from the append blob the fake VM wrote on Azurite through the SAS
// imgflow signed, and the blobs are deleted; without, only the last 4 KB.
func TestRunCommandOutputBlobsOnTheFake(t *testing.T) {
	w := newWorld(t, fakearm.Options{LROPolls: 1}, nil)
	sa, c := w.scanVM()

	script := scanScript(`{"kind":"trivy_rootfs","severity":"HIGH,CRITICAL","fail_on":"CRITICAL",` +
		`"advisories":[{"id":"CVE-2026-0001","package":"bcc","version":"0.29.0","severity":"CRITICAL"}]}`)
	out, errBlob := ref(sa, c, "vm2/trivy.stdout"), ref(sa, c, "vm2/trivy.stderr")
	res, err := w.p.RunCommand(w.ctx, "imgflow-testvm-2", "vm2", cloud.RunCommand{Name: "trivy", Script: script, Timeout: time.Minute,
		OutputBlob: &out, ErrorBlob: &errBlob})
	require.NoError(t, err)
	assert.Equal(t, cloud.RunSucceeded, res.ExecutionState)
	assert.Equal(t, 1, res.ExitCode, "a CRITICAL finding fails the scan: fail_on asks for it")
	assert.Contains(t, res.Error, "CRITICAL CVE-2026-0001 in bcc 0.29.0")
	require.Greater(t, len(res.Output), cloud.RunCommandOutputMax, "the report is larger than the instance view keeps")
	var report struct {
		SchemaVersion int
		Results       []struct {
			Packages        []struct{ Name, Version string }
			Vulnerabilities []struct{ VulnerabilityID, PkgName, Severity string }
		}
		Imgflow struct{ Simulated bool } `json:"imgflow"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.Output), &report), "the whole JSON report, from the output blob")
	assert.Equal(t, 2, report.SchemaVersion)
	require.Len(t, report.Results, 1)
	assert.Len(t, report.Results[0].Packages, 301)
	require.Len(t, report.Results[0].Vulnerabilities, 1)
	assert.Equal(t, "CVE-2026-0001", report.Results[0].Vulnerabilities[0].VulnerabilityID)
	assert.True(t, report.Imgflow.Simulated, "a fake VM's report says it is simulated")
	for _, r := range []cloud.BlobRef{out, errBlob} {
		_, err := w.p.GetBlob(w.ctx, r)
		assert.True(t, cloud.IsNotFound(err), "imgflow deletes %s once read: %v", r.Name, err)
	}
	for _, l := range w.logLines() {
		assert.NotContains(t, strings.ToLower(l), "sig=", "no SAS in the logs")
	}

	// Without blobs: the instance view's last 4 KB.
	tailRes, err := w.p.RunCommand(w.ctx, "imgflow-testvm-2", "vm2", cloud.RunCommand{Name: "trivy-tail", Script: script, Timeout: time.Minute})
	require.NoError(t, err)
	assert.Len(t, tailRes.Output, cloud.RunCommandOutputMax)
	assert.True(t, strings.HasSuffix(res.Output, tailRes.Output), "the instance view keeps the end of the stream")

	// A blob left by an earlier attempt (which died before reading it) is
	// replaced: the agent would append to it.
	for _, r := range []cloud.BlobRef{out, errBlob} {
		cred, err := azblob.NewSharedKeyCredential(r.Account, azuritetest.DevKey)
		require.NoError(t, err)
		ab, err := appendblob.NewClientWithSharedKeyCredential(r.URL(), cred, nil)
		require.NoError(t, err)
		_, err = ab.Create(w.ctx, nil)
		require.NoError(t, err)
		_, err = ab.AppendBlock(w.ctx, streaming.NopCloser(strings.NewReader("stale output of an earlier attempt\n")), nil)
		require.NoError(t, err)
	}
	again, err := w.p.RunCommand(w.ctx, "imgflow-testvm-2", "vm2", cloud.RunCommand{Name: "trivy", Script: script, Timeout: time.Minute,
		OutputBlob: &out, ErrorBlob: &errBlob})
	require.NoError(t, err)
	assert.Equal(t, res.Output, again.Output)
	assert.Equal(t, res.Error, again.Error)
}

// TestRunCommandOutputBlobNeedsItsContainer: the agent cannot create a
// blob in a container that does not exist; the run command says so.
func TestRunCommandOutputBlobNeedsItsContainer(t *testing.T) {
	w := newWorld(t, fakearm.Options{LROPolls: 1}, nil)
	sa, c := w.base("imgflowtest")
	v := w.guestVersion(sa, c, &guest.GuestContent{Files: map[string]guest.GuestFile{}, Packages: map[string]string{"bcc": "0.29.0"}})
	_, err := w.p.CreateResourceGroup(w.ctx, cloud.ResourceGroup{Name: "imgflow-testvm-3", Location: loc})
	require.NoError(t, err)
	_, err = w.p.CreateVM(w.ctx, cloud.VM{Name: "vm3", ResourceGroup: "imgflow-testvm-3", Size: "Standard_D2ds_v5", ImageID: v.ID})
	require.NoError(t, err)
	out := ref(sa, "nocontainer"+strings.ToLower(c), "vm3/cis.stdout")
	res, err := w.p.RunCommand(w.ctx, "imgflow-testvm-3", "vm3", cloud.RunCommand{Name: "cis", Script: scanScript(`{"kind":"cis","level":1}`),
		Timeout: time.Minute, OutputBlob: &out})
	require.NoError(t, err)
	assert.Equal(t, cloud.RunFailed, res.ExecutionState)
	assert.Contains(t, res.Error, "Failed to upload the script's output")
	assert.NotContains(t, strings.ToLower(res.Error), "sig=", "the SAS is redacted")
}

// TestRunCommandOutputBlobsWithListedKey: a principal with Contributor but
// no blob data role (--storage-auth auto falls back to the account key
// read through ARM) signs the output blobs' SAS with that key.
func TestRunCommandOutputBlobsWithListedKey(t *testing.T) {
	w, _ := tokenOnlyWorld(t, azure.StorageAuthAuto)
	sa, c := w.scanVM()
	out := ref(sa, c, "vm2/trivy.stdout")
	res, err := w.p.RunCommand(w.ctx, "imgflow-testvm-2", "vm2", cloud.RunCommand{Name: "trivy", Timeout: time.Minute, OutputBlob: &out,
		Script: scanScript(`{"kind":"trivy_rootfs","severity":"CRITICAL"}`)})
	require.NoError(t, err)
	require.Equal(t, cloud.RunSucceeded, res.ExecutionState, res.Error)
	assert.Greater(t, len(res.Output), cloud.RunCommandOutputMax, "the whole report, from the blob")
	assert.True(t, json.Valid([]byte(res.Output)))
	_, err = w.p.GetBlob(w.ctx, out)
	assert.True(t, cloud.IsNotFound(err), "%v", err)
}
