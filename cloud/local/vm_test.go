package local

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/cloudtest"
	"github.com/imgflow/imgflow/cloud/guest"
)

// guestVersion creates version 1.0.0 from a VHD holding a guest content
// record, as a simulated packer build writes it.
func guestVersion(t *testing.T, f *fixture, g *guest.GuestContent) *cloud.ImageVersion {
	t.Helper()
	data := cloudtest.FixedVHD(vhdBytes)
	rec, err := guest.EncodeGuestContent(g)
	require.NoError(t, err)
	copy(data[guest.GuestContentOffset:], rec)
	f.upload(t, f.vhd, data)
	v, err := f.p.CreateImageVersion(ctx, f.version("1.0.0"))
	require.NoError(t, err)
	return v
}

func testVM(name, image string) cloud.VM {
	return cloud.VM{Name: name, ResourceGroup: "imgflow-test", Size: "Standard_D2ds_v5", ImageID: image}
}

func TestVMRunCommandAndDelete(t *testing.T) {
	f := newFixture(t)
	p := f.p
	v := guestVersion(t, f, &guest.GuestContent{
		Files:     map[string]guest.GuestFile{"/opt/azure/containers/provision.sh": {Mode: "0744", Size: 10}},
		UsedBytes: 1 << 20,
	})
	_, err := p.CreateResourceGroup(ctx, cloud.ResourceGroup{Name: "imgflow-test", Location: "westeurope"})
	require.NoError(t, err)

	vm, err := p.CreateVM(ctx, testVM("vm1", v.ID))
	require.NoError(t, err)
	assert.Equal(t, cloud.ProvisioningSucceeded, vm.ProvisioningState)
	assert.Equal(t, "westeurope", vm.Location, "the group's location by default")
	assert.Equal(t, "vm1-osdisk", vm.OSDiskName)
	disk, err := p.GetDisk(ctx, "imgflow-test", "vm1-osdisk")
	require.NoError(t, err)
	assert.Equal(t, v.ID, disk.SourceImageVersionID)
	assert.FileExists(t, p.dataFile(disk.ID))
	again, err := p.CreateVM(ctx, testVM("VM1", v.ID))
	require.NoError(t, err, "a PUT of the same VM is idempotent")
	assert.Equal(t, vm, again)

	res, err := p.RunCommand(ctx, "imgflow-test", "vm1", cloud.RunCommand{Name: "cse", Script: "stat …",
		Simulated: []cloud.GuestCheck{{Kind: cloud.GuestFileMode, Path: "/opt/azure/containers/provision.sh", Mode: "0744"}}})
	require.NoError(t, err)
	assert.True(t, res.Passed(), "%+v", res)
	res, err = p.RunCommand(ctx, "imgflow-test", "vm1", cloud.RunCommand{Name: "mglru",
		Simulated: []cloud.GuestCheck{{Kind: cloud.GuestFileExists, Path: "/etc/tmpfiles.d/aks-mglru.conf"}}})
	require.NoError(t, err)
	assert.Equal(t, 1, res.ExitCode)
	assert.Equal(t, "/etc/tmpfiles.d/aks-mglru.conf: missing\n", res.Error)

	// A script without a simulated form runs, as on Azure, and fails: no
	// guest boots here (contract fixture vm/12).
	res, err = p.RunCommand(ctx, "imgflow-test", "vm1", cloud.RunCommand{Name: "raw", Script: "true"})
	require.NoError(t, err)
	assert.Equal(t, cloud.RunFailed, res.ExecutionState)
	assert.Contains(t, res.Error, "runs no scripts")

	require.NoError(t, p.DeleteVM(ctx, "imgflow-test", "vm1"))
	_, err = p.GetVM(ctx, "imgflow-test", "vm1")
	assert.True(t, cloud.IsNotFound(err))
	_, err = p.GetDisk(ctx, "imgflow-test", "vm1-osdisk")
	assert.True(t, cloud.IsNotFound(err), "the OS disk goes with the VM")
	assert.NoFileExists(t, p.dataFile(disk.ID))
	_, err = p.RunCommand(ctx, "imgflow-test", "vm1", cloud.RunCommand{Name: "cse"})
	assert.True(t, cloud.IsNotFound(err))
}

func TestVMRules(t *testing.T) {
	f := newFixture(t)
	p := f.p
	v := guestVersion(t, f, &guest.GuestContent{})
	_, err := p.CreateResourceGroup(ctx, cloud.ResourceGroup{Name: "imgflow-test", Location: "eastus"})
	require.NoError(t, err)

	_, err = p.CreateVM(ctx, testVM("vm1", v.ID))
	cloudtest.RequireError(t, err, 404, cloud.CodeGalleryImageNotFound, "is not available in eastus region")
	in := testVM("vm1", v.ID)
	in.Location = "westeurope"
	in.Size = ""
	_, err = p.CreateVM(ctx, in)
	cloudtest.RequireError(t, err, 400, cloud.CodeInvalidParameter, "vmSize")
	in = testVM("vm1", v.ID)
	in.Location = "westeurope"
	in.Specialized = true // no OS profile: a generalized image needs one
	_, err = p.CreateVM(ctx, in)
	cloudtest.RequireError(t, err, 400, cloud.CodeInvalidParameter, "Required parameter 'osProfile' is missing")
	in = testVM("vm1", cloud.ImageVersionID(f.sub, rgName, galName, defName, "9.9.9"))
	in.Location = "westeurope"
	_, err = p.CreateVM(ctx, in)
	assert.True(t, cloud.IsNotFound(err), "%v", err)
	in = testVM("vm1", v.ID)
	in.ResourceGroup = "missing"
	_, err = p.CreateVM(ctx, in)
	cloudtest.RequireError(t, err, 404, cloud.CodeResourceGroupNotFound)
}

func TestVMWithoutGuestRecord(t *testing.T) {
	f := newFixture(t)
	p := f.p
	v, err := p.CreateImageVersion(ctx, f.version("1.0.0")) // a plain VHD
	require.NoError(t, err)
	_, err = p.CreateResourceGroup(ctx, cloud.ResourceGroup{Name: "imgflow-test", Location: "westeurope"})
	require.NoError(t, err)
	_, err = p.CreateVM(ctx, testVM("vm1", v.ID))
	require.NoError(t, err)
	// The run fails, as a script the guest cannot run does on Azure.
	res, err := p.RunCommand(ctx, "imgflow-test", "vm1", cloud.RunCommand{Name: "x",
		Simulated: []cloud.GuestCheck{{Kind: cloud.GuestFileExists, Path: "/x"}}})
	require.NoError(t, err)
	assert.Equal(t, cloud.RunFailed, res.ExecutionState)
	assert.Contains(t, res.Error, guest.ErrNoGuestContent.Error())
}

func TestDeleteResourceGroupDeletesEverything(t *testing.T) {
	f := newFixture(t)
	p := f.p
	v := guestVersion(t, f, &guest.GuestContent{})
	_, err := p.CreateResourceGroup(ctx, cloud.ResourceGroup{Name: "imgflow-test", Location: "westeurope"})
	require.NoError(t, err)
	vm, err := p.CreateVM(ctx, testVM("vm1", v.ID))
	require.NoError(t, err)
	diskFile := p.dataFile(cloud.DiskID(f.sub, "imgflow-test", vm.OSDiskName))
	require.FileExists(t, diskFile)

	require.NoError(t, p.DeleteResourceGroup(ctx, "imgflow-test"))
	_, err = p.GetResourceGroup(ctx, "imgflow-test")
	cloudtest.RequireError(t, err, 404, cloud.CodeResourceGroupNotFound)
	_, err = p.GetVM(ctx, "imgflow-test", "vm1")
	cloudtest.RequireError(t, err, 404, cloud.CodeResourceGroupNotFound)
	assert.NoFileExists(t, diskFile, "the VM disk's data goes with its group")
	_, err = p.GetImageVersion(ctx, rgName, galName, defName, "1.0.0")
	assert.NoError(t, err, "other groups stay")
	err = p.DeleteResourceGroup(ctx, "imgflow-test")
	cloudtest.RequireError(t, err, 404, cloud.CodeResourceGroupNotFound)

	// The whole fixture group, with its gallery, version and blobs.
	blobFile := p.blobFile(account, "vhds", "flatcar.vhd")
	require.FileExists(t, blobFile)
	require.NoError(t, p.DeleteResourceGroup(ctx, rgName))
	assert.NoFileExists(t, blobFile)
	assert.NoFileExists(t, p.dataFile(v.ID))
}

// TestVMScanReports: a scan's simulated form gives its report; the whole
// report when the command has output blobs (whose container must exist),
// its last 4 KB otherwise, as Azure's instance view.
func TestVMScanReports(t *testing.T) {
	f := newFixture(t)
	p := f.p
	packages := map[string]string{"bcc": "0.29.0"}
	for i := range 200 {
		packages[fmt.Sprintf("pkg-%03d", i)] = "2.0"
	}
	v := guestVersion(t, f, &guest.GuestContent{
		Files:    map[string]guest.GuestFile{"/etc/motd": {Mode: "0666", Size: 3}, "/opt/azure/containers/provision.sh": {Mode: "0744", Size: 10}},
		Packages: packages,
	})
	_, err := p.CreateResourceGroup(ctx, cloud.ResourceGroup{Name: "imgflow-test", Location: "westeurope"})
	require.NoError(t, err)
	_, err = p.CreateVM(ctx, testVM("vm1", v.ID))
	require.NoError(t, err)
	trivy := &cloud.GuestScan{Kind: cloud.ScanTrivyRootfs, Severity: "HIGH,CRITICAL", Advisories: []cloud.GuestAdvisory{
		{ID: "CVE-2026-0002", Package: "bcc", Version: "0.29.0", Severity: "HIGH"},
		{ID: "CVE-2026-0003", Package: "bcc", Version: "0.28.0", Severity: "CRITICAL"},
	}}
	out := cloud.BlobRef{Account: f.vhd.Account, Container: f.vhd.Container, Name: "vm1/trivy.stdout"}

	full, err := p.RunCommand(ctx, "imgflow-test", "vm1", cloud.RunCommand{Name: "trivy", Script: "trivy …", SimulatedScan: trivy, OutputBlob: &out})
	require.NoError(t, err)
	assert.True(t, full.Passed(), "findings fail a scan only when fail_on asks: %+v", full)
	require.Greater(t, len(full.Output), cloud.RunCommandOutputMax)
	assert.Contains(t, full.Output, `"VulnerabilityID": "CVE-2026-0002"`, "the advisory of the recorded version")
	assert.NotContains(t, full.Output, "CVE-2026-0003", "not the advisory of another version")
	assert.Contains(t, full.Output, guest.SimulatedNote)

	tail, err := p.RunCommand(ctx, "imgflow-test", "vm1", cloud.RunCommand{Name: "trivy", Script: "trivy …", SimulatedScan: trivy})
	require.NoError(t, err)
	assert.Equal(t, full.Output[len(full.Output)-cloud.RunCommandOutputMax:], tail.Output)

	trivy.FailOn = "HIGH"
	failed, err := p.RunCommand(ctx, "imgflow-test", "vm1", cloud.RunCommand{Name: "trivy", Script: "trivy …", SimulatedScan: trivy, OutputBlob: &out})
	require.NoError(t, err)
	assert.Equal(t, 1, failed.ExitCode)
	assert.Contains(t, failed.Error, "HIGH CVE-2026-0002 in bcc 0.29.0")

	cis, err := p.RunCommand(ctx, "imgflow-test", "vm1", cloud.RunCommand{Name: "cis", Script: "cis …", SimulatedScan: &cloud.GuestScan{Kind: cloud.ScanCIS, Level: 1}})
	require.NoError(t, err)
	assert.True(t, cis.Passed(), "a CIS finding is a report line, not a failure")
	assert.Contains(t, cis.Output, "FAIL  Ensure no world writable files exist (2 recorded files checked)")
	assert.Contains(t, cis.Output, "world writable: /etc/motd (mode 0666)")

	missing := cloud.BlobRef{Account: f.vhd.Account, Container: "nope", Name: "x"}
	_, err = p.RunCommand(ctx, "imgflow-test", "vm1", cloud.RunCommand{Name: "cis", SimulatedScan: &cloud.GuestScan{Kind: cloud.ScanCIS, Level: 1}, OutputBlob: &missing})
	assert.True(t, cloud.IsNotFound(err), "the output blob's container must exist: %v", err)
}
