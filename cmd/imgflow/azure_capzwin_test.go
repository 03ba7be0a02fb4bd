package main

import (
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// capzWindowsChecks are capz.star's smoke-test checks of a Windows image,
// each a PowerShell run command.
var capzWindowsChecks = []string{"kubeadm-version", "kubelet-version", "containerd-version", "containerd-service"}

// On the Azure target (fake ARM, Azurite, packer simulated) a Windows
// target is smoke-tested on a Windows VM of its managed image: the VM's
// PUT carries a Windows OS profile with a generated admin password (the
// fake refuses a Linux one for a Windows image, as ARM does), each check
// is a managed run command, and the VM's group is deleted before the
// promotion.
func TestCapzWindowsSmokeTestOnTheAzureTarget(t *testing.T) {
	srv := azureTarget(t)
	t.Setenv(envSimulatePacker, "simulate")
	root := repoRoot(t)
	res := imgflow(t, "run", "--root", root, "--state", t.TempDir(), "--target", "azure",
		filepath.Join(root, "workflows", "capz.star"), "--var", "image_builder=//testdata/image-builder",
		"--var", "targets=windows-2022-containerd", "--var", "generations=gen1", "--var", "packer_vars=os_disk_size_gb=1")
	require.Equal(t, 0, res.code, res.String())
	assert.Regexp(t, `test_vm\s+4 checks on VM testvm-\w+ from capi-windows-2022-containerd-\d+ passed`, res.stdout)
	assert.Regexp(t, `capz_images = \[\{"gallery":"ClusterAPI-[0-9a-f-]{36}","name":"capi-win-2022-containerd","version":"1.33.1"\}\]`, res.stdout)
	assert.NotContains(t, res.stdout+res.stderr, "adminPassword")

	reqs := testVMRequests(srv)
	assert.True(t, hasRequest(reqs, http.MethodPut, "/virtualMachines/testvm-"), "the Windows VM was created")
	for _, check := range capzWindowsChecks {
		assert.True(t, hasRequest(reqs, http.MethodPut, "/runCommands/"+check), "run command %s", check)
	}
	assertNoTestVMGroup(t, reqs)
}
