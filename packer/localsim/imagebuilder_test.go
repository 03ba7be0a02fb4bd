package localsim

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud/guest"
	"github.com/imgflow/imgflow/packer"
)

// capiDir is the image-builder-shaped fixture's images/capi.
var capiDir = filepath.Join("..", "..", "testdata", "image-builder", "images", "capi")

// imageBuilderGuest is the content record of the fixture's build of target
// (ubuntu-2404, azurelinux-3) with the var files make build-azure-sig-<target>
// passes and vars last, as lib/imagebuilder.star runs it.
func imageBuilderGuest(t *testing.T, target string, vars map[string]string) *guest.GuestContent {
	t.Helper()
	var files []string
	for _, f := range []string{"kubernetes", "cni", "containerd", "wasm-shims", "ansible-args", "goss-args", "common", "additional_components", "ecr_credential_provider"} {
		files = append(files, "packer/config/"+f+".json")
	}
	files = append(files, "packer/azure/azure-config.json", "packer/azure/azure-sig.json", "packer/azure/"+target+".json")
	all := map[string]string{"build_timestamp": "1767323045"}
	for k, v := range vars {
		all[k] = v
	}
	p, err := prepare(packer.BuildRequest{
		TemplatePath: "packer/azure/packer.json", WorkDir: capiDir, VarFiles: files, Only: []string{"sig-" + target}, Vars: all,
		Env: map[string]string{"AZURE_LOCATION": "northcentralus", "AZURE_SUBSCRIPTION_ID": "00000000-0000-0000-0000-000000000000", "RESOURCE_GROUP_NAME": "rg", "GALLERY_NAME": "g"},
	}, nil)
	require.NoError(t, err)
	g, err := p.guestContent()
	require.NoError(t, err)
	return g
}

func TestImageBuilderBuildRecordsKubernetesAndContainerd(t *testing.T) {
	// The fixture's kubernetes.json, containerd.json: v1.33.1 (deb 1.33.1-1.1), containerd 2.1.4, crictl 1.33.0.
	g := imageBuilderGuest(t, "ubuntu-2404", nil)
	assert.Equal(t, map[string]string{"kubeadm": "1.33.1", "kubelet": "1.33.1", "kubectl": "1.33.1", "containerd": "2.1.4", "crictl": "1.33.0"}, g.Packages)
	assert.Equal(t, []string{
		"/etc/containerd/config.toml", "/etc/kubernetes-version", "/etc/systemd/system/containerd.service",
		"/usr/bin/kubeadm", "/usr/bin/kubectl", "/usr/bin/kubelet",
		"/usr/local/bin/containerd", "/usr/local/bin/containerd-shim-runc-v2", "/usr/local/bin/crictl", "/usr/local/bin/ctr", "/usr/local/sbin/runc",
	}, g.SortedPaths())
	assert.Equal(t, guest.GuestFile{Mode: "0755"}, g.Files["/usr/bin/kubeadm"])
	assert.Equal(t, "v1.33.1\n", g.Files["/etc/kubernetes-version"].Text)
	assert.Equal(t, "0600", g.Files["/etc/systemd/system/containerd.service"].Mode, "copied with mode 0600 by the containerd role")
}

func TestImageBuilderPackagesComeFromTheDistributionsPackageVersion(t *testing.T) {
	// The kubernetes role installs kubeadm={{kubernetes_deb_version}} on
	// Ubuntu, kubeadm-{{kubernetes_rpm_version}} on Azure Linux: a deb
	// version that disagrees with kubernetes_semver is what the image gets.
	vars := map[string]string{"kubernetes_semver": "v1.33.1", "kubernetes_deb_version": "1.34.0-1.1", "kubernetes_rpm_version": "1.32.4", "containerd_version": "2.0.5"}
	ubuntu := imageBuilderGuest(t, "ubuntu-2404", vars)
	assert.Equal(t, "1.34.0", ubuntu.Packages["kubeadm"])
	assert.Equal(t, "1.34.0", ubuntu.Packages["kubelet"])
	assert.Equal(t, "2.0.5", ubuntu.Packages["containerd"], "vars override the var files")
	assert.Equal(t, "v1.33.1\n", ubuntu.Files["/etc/kubernetes-version"].Text)

	azl := imageBuilderGuest(t, "azurelinux-3", vars)
	assert.Equal(t, "1.32.4", azl.Packages["kubeadm"])
	assert.Equal(t, "1.32.4", azl.Packages["kubectl"])
}

func TestImageBuilderHTTPSourceInstallsIntoSysusrPrefix(t *testing.T) {
	g := imageBuilderGuest(t, "ubuntu-2404", map[string]string{"kubernetes_source_type": "http", "sysusr_prefix": "/opt", "kubernetes_semver": "v1.32.2"})
	assert.Equal(t, "1.32.2", g.Packages["kubeadm"], "the downloaded binaries are kubernetes_semver's")
	assert.Contains(t, g.Files, "/opt/bin/kubeadm")
	assert.NotContains(t, g.Files, "/usr/bin/kubeadm")
}

func TestAnsibleExtraVarsAreSplitAsAnsibleDoes(t *testing.T) {
	assert.Equal(t, map[string]string{"a": "1", "b": "two words", "c": "", "d": "x=y", "e": "single q"},
		ansibleKeyValues(`a=1 b="two words" c= d=x=y  e='single q' noequals`))
}

func TestAnotherPlaybookLeavesNoKubernetesRecord(t *testing.T) {
	tpl := writeTemplate(t, `{
  "variables": {"kubernetes_semver": "v1.33.1"},
  "builders": [{"type": "azure-arm", "os_type": "Linux", "location": "westeurope", "image_publisher": "p", "image_offer": "o", "image_sku": "s",
    "managed_image_name": "img", "managed_image_resource_group_name": "rg"}],
  "provisioners": [
    {"type": "ansible", "playbook_file": "./ansible/site.yml", "extra_arguments": ["--extra-vars", "kubernetes_semver={{user `+"`kubernetes_semver`"+`}}"]},
    {"type": "ansible", "playbook_file": "./ansible/node.yml", "extra_arguments": ["--extra-vars", "foo=bar"]}
  ]
}`)
	p, err := prepare(packer.BuildRequest{TemplatePath: tpl}, nil)
	require.NoError(t, err)
	g, err := p.guestContent()
	require.NoError(t, err)
	assert.Empty(t, g.Packages, "neither provisioner is image-builder's node playbook with its vars")
	assert.Empty(t, g.Files)
}

func TestImageBuilderUnknownSourceTypeFailsTheBuild(t *testing.T) {
	p, err := prepare(packer.BuildRequest{TemplatePath: writeTemplate(t, `{
  "variables": {"v": "kubernetes_semver=v1.33.1 kubernetes_source_type=git"},
  "builders": [{"type": "azure-arm", "os_type": "Linux", "location": "westeurope", "image_publisher": "p", "image_offer": "o", "image_sku": "s",
    "managed_image_name": "img", "managed_image_resource_group_name": "rg"}],
  "provisioners": [{"type": "ansible", "playbook_file": "node.yml", "extra_arguments": ["-e", "{{user `+"`v`"+`}}"]}]
}`)}, nil)
	require.NoError(t, err)
	_, err = p.guestContent()
	assert.ErrorContains(t, err, `kubernetes_source_type "git": the kubernetes role installs from "pkg" or "http"`)
}

// The Windows template's playbook (ansible/windows/node_windows.yml)
// installs kubeadm.exe, kubelet.exe, kubectl.exe and kube-log-runner.exe
// in kubernetes_install_path and containerd in Program Files, registered
// as a service: what capz's Windows smoke test checks.
func TestImageBuilderWindowsBuildRecordsWhereTheWindowsRolesInstall(t *testing.T) {
	g := &guest.GuestContent{Files: map[string]guest.GuestFile{}, Packages: map[string]string{}}
	require.NoError(t, recordImageBuilderWindows(g, map[string]string{"kubernetes_semver": "v1.33.1", "kubernetes_install_path": `c:\k`, "containerd_version": "2.1.4"}))
	assert.Equal(t, map[string]string{"kubeadm": "1.33.1", "kubelet": "1.33.1", "kubectl": "1.33.1", "containerd": "2.1.4"}, g.Packages)
	for _, f := range []string{`c:\k\kubeadm.exe`, `c:\k\kubelet.exe`, `c:\k\kubectl.exe`, `c:\k\kube-log-runner.exe`, WindowsContainerdDir + `\containerd.exe`, WindowsContainerdService} {
		assert.Contains(t, g.Files, f)
	}
	assert.True(t, windowsPlaybook(map[string]any{"playbook_file": "ansible/windows/node_windows.yml"}))
	assert.False(t, windowsPlaybook(map[string]any{"playbook_file": "ansible/node.yml"}))
}
