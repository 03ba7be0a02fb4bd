package localsim

import (
	"fmt"
	"path"
	"regexp"
	"strings"
	"sync"

	"github.com/imgflow/imgflow/cloud/guest"
)

// What kubernetes-sigs/image-builder's node playbook leaves on a Cluster
// API image, as the simulation models it. A build is recognised by its
// `ansible` provisioner running the playbook node.yml with the extra vars
// image-builder passes it (kubernetes_semver among them, from
// ansible_common_vars); the vars are rendered from the build's variables
// as packer renders them and read as ansible reads key=value extra vars,
// the later --extra-vars winning (image-builder's templates are JSON; an
// HCL2 template's ansible provisioner is not read). The record then gets
// what the roles install (images/capi/ansible/roles):
//
//   - kubernetes: kubeadm, kubelet and kubectl. From packages
//     (kubernetes_source_type "pkg") in /usr/bin, at kubernetes_deb_version
//     without its Debian revision on Debian-family distributions (Ubuntu)
//     and kubernetes_rpm_version on the others (Azure Linux); downloaded
//     ("http") into <sysusr_prefix>/bin at kubernetes_semver. The package
//     version is what the binary reports, without its "v" (1.33.1).
//     /etc/kubernetes-version holds kubernetes_semver.
//   - containerd: the release tarball unpacked into /usr/local (containerd,
//     ctr, containerd-shim-runc-v2 in bin) at containerd_version, runc in
//     /usr/local/sbin (at runc_version when the build passes it), the
//     containerd.service unit, its config.toml; crictl in
//     <sysusrlocal_prefix>/bin at crictl_version.
//
// Not modelled: binary sizes (the files are recorded with size 0, so the
// disk use does not grow), the CNI plugins, the images kubeadm pre-pulls,
// the symlinks in /usr/bin, Flatcar's /opt/bin layout, the other roles
// (node, providers, sysprep, custom roles) and the goss tests.

// imageBuilderPlaybook is the playbook of image-builder's node roles;
// imageBuilderWindowsPlaybook its Windows one (ansible/windows).
const (
	imageBuilderPlaybook        = "node.yml"
	imageBuilderWindowsPlaybook = "node_windows.yml"
)

// windowsPlaybook reports whether an ansible provisioner runs
// image-builder's Windows playbook.
func windowsPlaybook(prov map[string]any) bool {
	playbook, _ := prov["playbook_file"].(string)
	return path.Base(playbook) == imageBuilderWindowsPlaybook
}

// debianFamily are image-builder's distributions ansible reports as
// os_family Debian: their kubernetes role installs debs.
var debianFamily = map[string]bool{"ubuntu": true, "debian": true}

// imageBuilderVars are the extra vars an ansible provisioner passes to
// image-builder's node playbook, or nil when it runs another playbook.
func (p *prepared) imageBuilderVars(prov map[string]any) map[string]string {
	playbook, _ := prov["playbook_file"].(string)
	if path.Base(playbook) != imageBuilderPlaybook && !windowsPlaybook(prov) {
		return nil
	}
	args, _ := prov["extra_arguments"].([]any)
	vars := map[string]string{}
	for i := 0; i+1 < len(args); i++ {
		if flag, _ := args[i].(string); flag != "--extra-vars" && flag != "-e" {
			continue
		}
		expr, _ := args[i+1].(string)
		for k, v := range ansibleKeyValues(p.expand(expr, 0)) {
			vars[k] = v
		}
	}
	if vars["kubernetes_semver"] == "" {
		return nil
	}
	return vars
}

// userRef matches a JSON template's {{user `name`}} reference.
var userRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("\\{\\{\\s*user\\s+`(\\w+)`\\s*\\}\\}") })

// expand renders the {{user}} references of s from the build's variables
// (values, else the declared default), as packer renders a variable
// referring to others; an unset variable renders as "".
func (p *prepared) expand(s string, depth int) string {
	if depth > 8 {
		return s
	}
	return userRef().ReplaceAllStringFunc(s, func(ref string) string {
		name := userRef().FindStringSubmatch(ref)[1]
		v, ok := p.values[name]
		if !ok {
			for _, d := range p.tpl.Declared() {
				if d.Name == name {
					v = d.Default
				}
			}
		}
		return p.expand(v, depth+1)
	})
}

// ansibleKeyValues splits extra vars given as key=value pairs separated by
// spaces, a value quoted with ' or " keeping its spaces.
func ansibleKeyValues(s string) map[string]string {
	out := map[string]string{}
	var word strings.Builder
	var quote rune
	flush := func() {
		if k, v, ok := strings.Cut(word.String(), "="); ok && k != "" {
			out[k] = v
		}
		word.Reset()
	}
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			word.WriteRune(r)
		case r == '"' || r == '\'':
			quote = r
		case r == ' ' || r == '\t' || r == '\n':
			flush()
		default:
			word.WriteRune(r)
		}
	}
	flush()
	return out
}

// recordImageBuilderNode adds what the node playbook's kubernetes and
// containerd roles install, with the build's extra vars, to g.
func (p *prepared) recordImageBuilderNode(g *guest.GuestContent, vars map[string]string) error {
	semver := vars["kubernetes_semver"]
	version := strings.TrimPrefix(semver, "v")
	binDir := "/usr/bin"
	switch source := orDefault(vars["kubernetes_source_type"], "pkg"); source {
	case "pkg":
		if debianFamily[p.expand("{{user `distribution`}}", 0)] {
			version = withoutRevision(vars["kubernetes_deb_version"])
		} else {
			version = withoutRevision(vars["kubernetes_rpm_version"])
		}
	case "http":
		binDir = orDefault(vars["sysusr_prefix"], "/usr") + "/bin"
	default:
		return fmt.Errorf("image-builder build: kubernetes_source_type %q: the kubernetes role installs from \"pkg\" or \"http\"", source)
	}
	if version == "" {
		return fmt.Errorf("image-builder build: no Kubernetes package version for kubernetes_semver %s: set kubernetes_deb_version or kubernetes_rpm_version", semver)
	}
	for _, bin := range []string{"kubeadm", "kubelet", "kubectl"} {
		g.Packages[bin] = version
		g.Files[binDir+"/"+bin] = guest.GuestFile{Mode: "0755"}
	}
	g.Files["/etc/kubernetes-version"] = guestFile([]byte(semver+"\n"), "0644")

	if v := vars["containerd_version"]; v != "" {
		g.Packages["containerd"] = v
		for _, bin := range []string{"containerd", "ctr", "containerd-shim-runc-v2"} {
			g.Files["/usr/local/bin/"+bin] = guest.GuestFile{Mode: "0755"}
		}
		g.Files["/etc/systemd/system/containerd.service"] = guest.GuestFile{Mode: "0600"}
		g.Files["/etc/containerd/config.toml"] = guest.GuestFile{Mode: "0644"}
	}
	// The roles install both whatever the vars say; the version is known
	// when the build passes it (runc's role default is not modelled).
	g.Files["/usr/local/sbin/runc"] = guest.GuestFile{Mode: "0755"}
	if v := vars["runc_version"]; v != "" {
		g.Packages["runc"] = v
	}
	g.Files[orDefault(vars["sysusrlocal_prefix"], "/usr/local")+"/bin/crictl"] = guest.GuestFile{Mode: "0755"}
	if v := vars["crictl_version"]; v != "" {
		g.Packages["crictl"] = v
	}
	return nil
}

// withoutRevision is a package version without its Debian revision or RPM
// release (1.33.1-1.1 → 1.33.1): the upstream version the binary reports.
func withoutRevision(v string) string {
	v, _, _ = strings.Cut(v, "-")
	return v
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// WindowsContainerdService is the registry key of the containerd service
// (containerd.exe --register-service), which the simulated Windows build
// records as a file: the local target's stand-in for the service a
// Windows check finds running.
const WindowsContainerdService = `HKLM:\SYSTEM\CurrentControlSet\Services\containerd`

// recordImageBuilderWindows adds what the Windows playbook's kubernetes
// and runtimes roles install: kubeadm.exe, kubelet.exe, kubectl.exe and
// kube-log-runner.exe in kubernetes_install_path (c:\k, from its
// kubernetes_base_url at kubernetes_semver), and containerd unpacked into
// Program Files with its config and registered as a service.
func recordImageBuilderWindows(g *guest.GuestContent, vars map[string]string) error {
	dir := strings.TrimRight(orDefault(vars["kubernetes_install_path"], `c:\k`), `\`)
	version := strings.TrimPrefix(vars["kubernetes_semver"], "v")
	for _, bin := range []string{"kubeadm", "kubelet", "kubectl", "kube-log-runner"} {
		g.Files[dir+`\`+bin+".exe"] = guest.GuestFile{Mode: "0755"}
		if bin != "kube-log-runner" {
			g.Packages[bin] = version
		}
	}
	if v := vars["containerd_version"]; v != "" {
		g.Packages["containerd"] = strings.TrimPrefix(v, "v")
		for _, f := range []string{"containerd.exe", "ctr.exe", "containerd-shim-runhcs-v1.exe", "config.toml"} {
			g.Files[WindowsContainerdDir+`\`+f] = guest.GuestFile{Mode: "0755"}
		}
		g.Files[WindowsContainerdService] = guest.GuestFile{Mode: "0644"}
	}
	return nil
}

// WindowsContainerdDir is where the runtimes role unpacks containerd.
const WindowsContainerdDir = `C:\Program Files\containerd`
