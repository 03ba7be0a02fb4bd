package guest

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/imgflow/imgflow/cloud"
)

// KubeadmDryRunCommand is the command line the predicate runs for version
// (major.minor.patch, without "v").
func KubeadmDryRunCommand(version string) string {
	return "kubeadm init --dry-run --kubernetes-version v" + version
}

// semver is a Kubernetes release version, major.minor.patch.
type semver struct{ major, minor, patch int }

// parseSemver reads "1.33.1" or "v1.33.1"; a pre-release or build suffix
// ("1.33.1-1.1", "1.33.1+abc") is ignored, as kubeadm compares releases.
func parseSemver(s string) (semver, bool) {
	s = strings.TrimPrefix(s, "v")
	if i := strings.IndexAny(s, "-+"); i >= 0 {
		s = s[:i]
	}
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return semver{}, false
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 || p == "" {
			return semver{}, false
		}
		n[i] = v
	}
	return semver{n[0], n[1], n[2]}, true
}

func (v semver) less(w semver) bool {
	if v.major != w.major {
		return v.major < w.major
	}
	if v.minor != w.minor {
		return v.minor < w.minor
	}
	return v.patch < w.patch
}

func (v semver) String() string { return fmt.Sprintf("%d.%d.%d", v.major, v.minor, v.patch) }

// skewed is kubeadm's getSkewedKubernetesVersion: major.(minor+n).0.
func (v semver) skewed(n int) semver { return semver{v.major, v.minor + n, 0} }

// evalKubeadmDryRun is what `kubeadm init --dry-run --kubernetes-version
// v<Version>` would say on a VM of the image, from the recorded content:
// the checks of kubeadm (v1.33) that depend on what the image installed.
//
//   - kubeadm missing: the command is not found;
//   - a control plane version older than kubeadm's minor - 1 is refused
//     before any preflight check (NormalizeKubernetesVersion);
//   - preflight CRI: no container runtime (containerd and its systemd unit,
//     which starts it at boot);
//   - preflight KubeletVersion: kubelet missing, older than kubeadm's
//     minor - 3, or of a newer minor than the control plane.
//
// A control plane newer than kubeadm is only a warning to kubeadm, so it
// passes here too. What depends on the booted VM rather than the image is
// not modelled: CPUs and memory of the VM size, swap, kernel modules and
// sysctls (br_netfilter, ip_forward), ports in use, the runtime actually
// answering on its socket.
func evalKubeadmDryRun(c cloud.GuestCheck, g *GuestContent) (bool, string) {
	cmd := KubeadmDryRunCommand(c.Version)
	failed := func(lines ...string) (bool, string) {
		return false, cmd + ": failed\n  " + strings.Join(lines, "\n  ")
	}
	want, _ := parseSemver(c.Version)
	kubeadm, ok := g.Packages["kubeadm"]
	if !ok {
		return failed("kubeadm: command not found")
	}
	kv, ok := parseSemver(kubeadm)
	if !ok {
		return failed(fmt.Sprintf("kubeadm: unreadable version %q", kubeadm))
	}
	if minCP := kv.skewed(-1); want.less(minCP) {
		return failed(fmt.Sprintf("this version of kubeadm only supports deploying clusters with the control plane version >= %s. Current version: v%s", minCP, want))
	}
	var errs []string
	if _, ok := g.Packages["containerd"]; !ok {
		errs = append(errs, "[ERROR CRI]: container runtime is not running: containerd is not installed")
	} else if _, ok := g.Files["/etc/systemd/system/containerd.service"]; !ok {
		errs = append(errs, "[ERROR CRI]: container runtime is not running: no containerd.service unit starts containerd at boot")
	}
	if kubelet, ok := g.Packages["kubelet"]; !ok {
		errs = append(errs, "[ERROR KubeletVersion]: couldn't get kubelet version: kubelet: command not found")
	} else if lv, ok := parseSemver(kubelet); !ok {
		errs = append(errs, fmt.Sprintf("[ERROR KubeletVersion]: couldn't parse kubelet version %q", kubelet))
	} else if lv.less(kv.skewed(-3)) {
		errs = append(errs, fmt.Sprintf("[ERROR KubeletVersion]: Kubelet version %q is lower than kubeadm can support. Please upgrade kubelet", lv))
	} else if lv.major > want.major || lv.minor > want.minor {
		errs = append(errs, fmt.Sprintf("[ERROR KubeletVersion]: the kubelet version is higher than the control plane version. This is not a supported version skew and may lead to a malfunctional cluster. Kubelet version: %q Control plane version: %q", lv, want))
	}
	if len(errs) > 0 {
		return failed(append([]string{"error execution phase preflight: [preflight] Some fatal errors occurred:"}, errs...)...)
	}
	return true, cmd + ": passed"
}
