package azure_test

import (
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azure/fakearm"
	"github.com/imgflow/imgflow/cloud/ensure"
	"github.com/imgflow/imgflow/cloud/guest"
)

// guestVersion makes version 1.0.0 of a small VHD holding a guest content
// record, as a simulated packer build writes it.
func (w *world) guestVersion(sa *cloud.StorageAccount, c string, g *guest.GuestContent) *cloud.ImageVersion {
	w.t.Helper()
	return w.guestVersionOf(sa, c, g, "def", cloud.OSTypeLinux)
}

// guestVersionOf is guestVersion in definition def of osType.
func (w *world) guestVersionOf(sa *cloud.StorageAccount, c string, g *guest.GuestContent, def, osType string) *cloud.ImageVersion {
	w.t.Helper()
	_, _, err := ensure.EnsureGallery(w.ctx, w.p, cloud.Gallery{Name: "gal", ResourceGroup: "rg", Location: loc})
	require.NoError(w.t, err)
	_, _, err = ensure.EnsureImageDefinition(w.ctx, w.p, cloud.ImageDefinition{Name: def, ResourceGroup: "rg", Gallery: "gal",
		Publisher: "imgflow", Offer: "test", SKU: def, OSType: osType, OSState: cloud.OSStateGeneralized,
		HyperVGeneration: cloud.HyperVGenV2}, time.Now())
	require.NoError(w.t, err)
	img := makeVHD(w.t, 4<<20, 512, 0)
	rec, err := guest.EncodeGuestContent(g)
	require.NoError(w.t, err)
	f, err := os.OpenFile(img.path, os.O_RDWR, 0)
	require.NoError(w.t, err)
	_, err = f.WriteAt(rec, guest.GuestContentOffset)
	require.NoError(w.t, err)
	require.NoError(w.t, f.Close())
	img.ranges = nil // all of it
	img.content, err = os.ReadFile(img.path)
	require.NoError(w.t, err)
	r := ref(sa, c, def+"-guest.vhd")
	w.upload(img, r)
	v, _, err := ensure.EnsureImageVersion(w.ctx, w.p, cloud.ImageVersion{Name: "1.0.0", ResourceGroup: "rg", Gallery: "gal", Definition: def,
		Source: cloud.ImageSource{Kind: cloud.SourceVHD, URI: r.URL(), StorageAccountID: sa.ID}}, time.Now())
	require.NoError(w.t, err)
	return v
}

// checkScript is a check script as lib/checks.star writes it: the
// predicates ride in its imgflow-guest-checks comment.
func checkScript(predicates string) string {
	return "#!/bin/bash\n# imgflow-guest-checks: " + predicates + "\nfail=0\nexit $fail\n"
}

func TestVMLifecycleOnTheFake(t *testing.T) {
	w := newWorld(t, fakearm.Options{LROPolls: 1}, nil)
	sa, c := w.base("imgflowtest")
	v := w.guestVersion(sa, c, &guest.GuestContent{
		Files:     map[string]guest.GuestFile{"/opt/azure/containers/provision.sh": {Mode: "0744", Size: 10}},
		UsedBytes: 1 << 20,
	})
	_, err := w.p.CreateResourceGroup(w.ctx, cloud.ResourceGroup{Name: "imgflow-testvm-1", Location: loc})
	require.NoError(t, err)

	vm, err := w.p.CreateVM(w.ctx, cloud.VM{Name: "vm1", ResourceGroup: "imgflow-testvm-1", Size: "Standard_D2ds_v5", ImageID: v.ID})
	require.NoError(t, err)
	assert.Equal(t, cloud.ProvisioningSucceeded, vm.ProvisioningState)
	assert.Equal(t, loc, vm.Location, "the group's location by default")
	assert.Equal(t, "vm1-osdisk", vm.OSDiskName)
	assert.Equal(t, v.ID, vm.ImageID)
	assert.False(t, vm.Specialized, "a generalized image's VM has an OS profile")
	var puts []fakearm.Request
	for _, r := range w.f.Requests() {
		if r.Method == http.MethodPut && !r.Poll && strings.Contains(r.Path, "/imgflow-testvm-1/") {
			puts = append(puts, r)
		}
	}
	require.Len(t, puts, 2)
	assert.Contains(t, puts[0].Path, "/providers/Microsoft.Network/virtualNetworks/vm1-vnet")
	assert.Equal(t, "VirtualMachinesClient.BeginCreateOrUpdate", puts[1].API)
	assert.Equal(t, http.StatusCreated, puts[1].Status, "ARM answers a VM's create with 201 Creating and polls it to its end")

	res, err := w.p.RunCommand(w.ctx, "imgflow-testvm-1", "vm1", cloud.RunCommand{Name: "cse", Timeout: time.Minute,
		Script: checkScript(`[{"kind":"file_mode","path":"/opt/azure/containers/provision.sh","mode":"0744"}]`)})
	require.NoError(t, err)
	assert.Equal(t, cloud.RunCommandResult{ExecutionState: cloud.RunSucceeded, Output: "/opt/azure/containers/provision.sh: mode 0744\n"}, *res)

	res, err = w.p.RunCommand(w.ctx, "imgflow-testvm-1", "vm1", cloud.RunCommand{Name: "mglru",
		Script: checkScript(`[{"kind":"file_exists","path":"/etc/tmpfiles.d/aks-mglru.conf"},{"kind":"disk_used_below","percent":50}]`)})
	require.NoError(t, err)
	assert.Equal(t, 1, res.ExitCode)
	assert.Equal(t, cloud.RunSucceeded, res.ExecutionState, "the script ran to its end; it failed (Azure: Failed with exit code 1)")
	assert.Equal(t, "/etc/tmpfiles.d/aks-mglru.conf: missing\n", res.Error)
	assert.Contains(t, res.Output, "disk used 25%")

	w.checkARMAnswers(t, "imgflow-testvm-1", "vm1", "cse", "mglru")

	res, err = w.p.RunCommand(w.ctx, "imgflow-testvm-1", "vm1", cloud.RunCommand{Name: "raw", Script: "uname -a"})
	require.NoError(t, err)
	assert.Equal(t, cloud.RunFailed, res.ExecutionState, "the fake runs no scripts")
	assert.Contains(t, res.Error, "runs no scripts")

	_, err = w.p.RunCommand(w.ctx, "imgflow-testvm-1", "nope", cloud.RunCommand{Name: "cse", Script: "true"})
	assert.True(t, cloud.IsNotFound(err), "%v", err)

	require.NoError(t, w.p.DeleteResourceGroup(w.ctx, "imgflow-testvm-1"))
	_, err = w.p.GetVM(w.ctx, "imgflow-testvm-1", "vm1")
	assert.True(t, cloud.IsNotFound(err), "the VM went with its group: %v", err)
	_, err = w.p.GetResourceGroup(w.ctx, "imgflow-testvm-1")
	assert.True(t, cloud.IsNotFound(err))
	assert.True(t, slices.ContainsFunc(w.f.Requests(), func(r fakearm.Request) bool {
		return r.Method == http.MethodDelete && r.API == "ResourceGroupsClient.BeginDelete" && r.Status == http.StatusAccepted
	}), "a group's delete is a long operation: 202")
	_, err = w.p.GetImageVersion(w.ctx, "rg", "gal", "def", "1.0.0")
	assert.NoError(t, err, "other groups stay")
}

func TestVMRulesOnTheFake(t *testing.T) {
	w := newWorld(t, fakearm.Options{}, nil)
	sa, c := w.base("imgflowtest")
	v := w.guestVersion(sa, c, &guest.GuestContent{})
	_, err := w.p.CreateResourceGroup(w.ctx, cloud.ResourceGroup{Name: "imgflow-testvm-2", Location: "eastus"})
	require.NoError(t, err)

	_, err = w.p.CreateVM(w.ctx, cloud.VM{Name: "vm", ResourceGroup: "imgflow-testvm-2", Size: "Standard_D2ds_v5", ImageID: v.ID})
	assert.ErrorContains(t, err, "GalleryImageNotFound")
	assert.ErrorContains(t, err, "is not available in eastus region")
	_, err = w.p.CreateVM(w.ctx, cloud.VM{Name: "vm", ResourceGroup: "imgflow-testvm-2", Location: loc, Size: "Standard_D2ds_v5", ImageID: v.ID, Specialized: true})
	assert.ErrorContains(t, err, "Required parameter 'osProfile' is missing", "a VM of a generalized image needs an OS profile")
	_, err = w.p.CreateVM(w.ctx, cloud.VM{Name: "vm", ResourceGroup: "imgflow-testvm-2", Location: loc, ImageID: v.ID})
	assert.ErrorContains(t, err, "vmSize")
	_, err = w.p.CreateVM(w.ctx, cloud.VM{Name: "vm", ResourceGroup: "imgflow-testvm-2", Location: loc, Size: "Standard_D2ds_v5",
		ImageID: cloud.ImageVersionID(w.f.SubscriptionID(), "rg", "gal", "def", "9.9.9")})
	assert.True(t, cloud.IsNotFound(err), "%v", err)
}

// A VM of a Windows image gets a Windows OS profile (windowsConfiguration,
// a generated admin password, a computer name of at most 15 characters),
// which the fake accepts as ARM does
// (VirtualMachine_Create_WindowsVmWithPatchSettingModeOfManual); the Linux
// profile a Linux VM gets is refused for it. Its run commands carry
// PowerShell, which the fake evaluates from the guest-checks comment.
func TestAWindowsVMOnTheFake(t *testing.T) {
	w := newWorld(t, fakearm.Options{}, nil)
	sa, c := w.base("imgflowtest")
	kubelet := `c:\k\kubelet.exe`
	v := w.guestVersionOf(sa, c, &guest.GuestContent{Files: map[string]guest.GuestFile{kubelet: {Mode: "0755"}}}, "win", cloud.OSTypeWindows)
	_, err := w.p.CreateResourceGroup(w.ctx, cloud.ResourceGroup{Name: "imgflow-testvm-3", Location: loc})
	require.NoError(t, err)

	_, err = w.p.CreateVM(w.ctx, cloud.VM{Name: "testvm-0123456789", ResourceGroup: "imgflow-testvm-3", Location: loc, Size: "Standard_D2s_v3", ImageID: v.ID})
	assert.ErrorContains(t, err, "linuxConfiguration' is not allowed for a Windows image", "a Linux OS profile for a Windows image")

	vm, err := w.p.CreateVM(w.ctx, cloud.VM{Name: "testvm-0123456789", ResourceGroup: "imgflow-testvm-3", Location: loc, Size: "Standard_D2s_v3", ImageID: v.ID, OSType: cloud.OSTypeWindows})
	require.NoError(t, err)
	assert.Equal(t, cloud.OSTypeWindows, vm.OSType)

	script := "# imgflow check kubelet\n# imgflow-guest-checks: [{\"kind\":\"file_exists\",\"path\":\"c:\\\\k\\\\kubelet.exe\"}]\nif (-not (Test-Path -LiteralPath 'c:\\k\\kubelet.exe')) { exit 1 }\n"
	res, err := w.p.RunCommand(w.ctx, "imgflow-testvm-3", vm.Name, cloud.RunCommand{Name: "kubelet", Script: script, Timeout: time.Minute})
	require.NoError(t, err)
	assert.True(t, res.Passed(), "%+v", res)
	assert.Equal(t, kubelet+": present\n", res.Output)
}
