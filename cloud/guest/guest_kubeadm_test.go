package guest

import (
	"testing"

	"github.com/imgflow/imgflow/cloud"
	"github.com/stretchr/testify/assert"
)

// capiGuest is what an image-builder build of Kubernetes version records
// (packer/localsim): kubeadm, kubelet and kubectl, containerd and its unit.
func capiGuest(kubeadm, kubelet string) *GuestContent {
	g := &GuestContent{Files: map[string]GuestFile{"/etc/systemd/system/containerd.service": {Mode: "0600"}},
		Packages: map[string]string{"containerd": "2.1.4"}}
	if kubeadm != "" {
		g.Packages["kubeadm"] = kubeadm
	}
	if kubelet != "" {
		g.Packages["kubelet"] = kubelet
	}
	return g
}

func TestKubeadmDryRunEvalFollowsKubeadmsChecks(t *testing.T) {
	const cmd = "kubeadm init --dry-run --kubernetes-version v1.33.1: "
	noRuntime := capiGuest("1.33.1", "1.33.1")
	delete(noRuntime.Packages, "containerd")
	noUnit := capiGuest("1.33.1", "1.33.1")
	delete(noUnit.Files, "/etc/systemd/system/containerd.service")
	for name, tc := range map[string]struct {
		g    *GuestContent
		ok   bool
		want string
	}{
		"same version":  {capiGuest("1.33.1", "1.33.1"), true, cmd + "passed"},
		"older patches": {capiGuest("1.33.0", "1.33.0"), true, cmd + "passed"},
		// kubeadm only warns of a control plane newer than itself.
		"kubeadm a minor older":      {capiGuest("1.32.4", "1.32.4"), true, cmd + "passed"},
		"kubelet three minors older": {capiGuest("1.33.1", "1.30.0"), true, cmd + "passed"},
		"no kubeadm":                 {capiGuest("", "1.33.1"), false, cmd + "failed\n  kubeadm: command not found"},
		"kubeadm two minors newer": {capiGuest("1.35.0", "1.33.1"), false,
			cmd + "failed\n  this version of kubeadm only supports deploying clusters with the control plane version >= 1.34.0. Current version: v1.33.1"},
		"kubelet newer minor": {capiGuest("1.34.0", "1.34.0"), false, cmd + "failed\n  error execution phase preflight: [preflight] Some fatal errors occurred:\n" +
			`  [ERROR KubeletVersion]: the kubelet version is higher than the control plane version. This is not a supported version skew and may lead to a malfunctional cluster. Kubelet version: "1.34.0" Control plane version: "1.33.1"`},
		"kubelet four minors older": {capiGuest("1.33.1", "1.29.9"), false, cmd + "failed\n  error execution phase preflight: [preflight] Some fatal errors occurred:\n" +
			`  [ERROR KubeletVersion]: Kubelet version "1.29.9" is lower than kubeadm can support. Please upgrade kubelet`},
		"no kubelet, no runtime": {func() *GuestContent { g := capiGuest("1.33.1", ""); delete(g.Packages, "containerd"); return g }(), false,
			cmd + "failed\n  error execution phase preflight: [preflight] Some fatal errors occurred:\n" +
				"  [ERROR CRI]: container runtime is not running: containerd is not installed\n" +
				"  [ERROR KubeletVersion]: couldn't get kubelet version: kubelet: command not found"},
		"no runtime": {noRuntime, false, cmd + "failed\n  error execution phase preflight: [preflight] Some fatal errors occurred:\n  [ERROR CRI]: container runtime is not running: containerd is not installed"},
		"no unit":    {noUnit, false, cmd + "failed\n  error execution phase preflight: [preflight] Some fatal errors occurred:\n  [ERROR CRI]: container runtime is not running: no containerd.service unit starts containerd at boot"},
	} {
		t.Run(name, func(t *testing.T) {
			ok, msg := Eval(cloud.GuestCheck{Kind: cloud.GuestKubeadmDryRun, Version: "1.33.1"}, tc.g, 1<<30)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, msg)
		})
	}
}

func TestKubeadmDryRunRunCommandFailsOnStderr(t *testing.T) {
	res := SimulateRunCommand([]cloud.GuestCheck{{Kind: cloud.GuestKubeadmDryRun, Version: "1.33.1"}}, capiGuest("1.34.0", "1.34.0"), 1<<30)
	assert.Equal(t, 1, res.ExitCode)
	assert.Empty(t, res.Output)
	assert.Contains(t, res.Error, "kubeadm init --dry-run --kubernetes-version v1.33.1: failed\n")
	assert.Contains(t, res.Error, "[ERROR KubeletVersion]")
}

func TestKubeadmDryRunValidate(t *testing.T) {
	assert.NoError(t, cloud.GuestCheck{Kind: cloud.GuestKubeadmDryRun, Version: "1.33.1"}.Validate())
	for _, v := range []string{"", "v1.33.1", "1.33", "1.33.1-1.1", "1.x.1"} {
		assert.ErrorContains(t, cloud.GuestCheck{Kind: cloud.GuestKubeadmDryRun, Version: v}.Validate(), "want the Kubernetes version as major.minor.patch", v)
	}
	assert.ErrorContains(t, cloud.GuestCheck{Kind: "kubeadm_init"}.Validate(), "kubeadm_dry_run", "the kinds listed name it")
}

func TestKubeadmDryRunTravelsInTheScriptsJSON(t *testing.T) {
	checks, err := GuestChecksFromScript("#!/bin/bash\n# imgflow-guest-checks: [{\"kind\":\"kubeadm_dry_run\",\"version\":\"1.33.1\"}]\n")
	assert.NoError(t, err)
	assert.Equal(t, []cloud.GuestCheck{{Kind: cloud.GuestKubeadmDryRun, Version: "1.33.1"}}, checks)
	_, err = GuestChecksFromScript("# imgflow-guest-checks: [{\"kind\":\"kubeadm_dry_run\",\"version\":\"v1.33\"}]\n")
	assert.ErrorContains(t, err, "kubeadm_dry_run")
}
