package azure_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azure/fakearm"
	"github.com/imgflow/imgflow/cloud/guest"
)

// The fake VM evaluates a kubeadm_dry_run predicate carried by the check's
// script against the image's record as the local target does: an image of
// kubeadm and kubelet 1.34.0 with containerd inits a v1.34.0 control plane,
// not a v1.33.1 one (kubelet newer than the control plane).
func TestKubeadmDryRunOnTheFake(t *testing.T) {
	w := newWorld(t, fakearm.Options{LROPolls: 1}, nil)
	sa, c := w.base("imgflowtest")
	v := w.guestVersion(sa, c, &guest.GuestContent{
		Files:    map[string]guest.GuestFile{"/usr/bin/kubeadm": {Mode: "0755"}, "/etc/systemd/system/containerd.service": {Mode: "0600"}},
		Packages: map[string]string{"kubeadm": "1.34.0", "kubelet": "1.34.0", "containerd": "2.1.4"},
	})
	_, err := w.p.CreateResourceGroup(w.ctx, cloud.ResourceGroup{Name: "imgflow-testvm-1", Location: loc})
	require.NoError(t, err)
	_, err = w.p.CreateVM(w.ctx, cloud.VM{Name: "vm1", ResourceGroup: "imgflow-testvm-1", Size: "Standard_D2s_v3", ImageID: v.ID})
	require.NoError(t, err)

	res, err := w.p.RunCommand(w.ctx, "imgflow-testvm-1", "vm1", cloud.RunCommand{Name: "kubeadm-dry-run",
		Script: checkScript(`[{"kind":"kubeadm_dry_run","version":"1.34.0"}]`)})
	require.NoError(t, err)
	assert.Equal(t, cloud.RunCommandResult{ExecutionState: cloud.RunSucceeded, Output: "kubeadm init --dry-run --kubernetes-version v1.34.0: passed\n"}, *res)

	res, err = w.p.RunCommand(w.ctx, "imgflow-testvm-1", "vm1", cloud.RunCommand{Name: "kubeadm-dry-run-old",
		Script: checkScript(`[{"kind":"kubeadm_dry_run","version":"1.33.1"}]`)})
	require.NoError(t, err)
	assert.Equal(t, 1, res.ExitCode)
	assert.Equal(t, cloud.RunSucceeded, res.ExecutionState, "the dry run ran; it failed")
	assert.Contains(t, res.Error, "kubeadm init --dry-run --kubernetes-version v1.33.1: failed\n")
	assert.Contains(t, res.Error, `[ERROR KubeletVersion]: the kubelet version is higher than the control plane version. This is not a supported version skew and may lead to a malfunctional cluster. Kubelet version: "1.34.0" Control plane version: "1.33.1"`)
	require.NoError(t, w.p.DeleteResourceGroup(w.ctx, "imgflow-testvm-1"))
}
