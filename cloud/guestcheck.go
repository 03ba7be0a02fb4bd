// The simulated forms of a run command (RunCommand.Simulated,
// RunCommand.SimulatedScan): what a check or scan script verifies, as data
// that travels with the command and is validated here; cloud/guest
// evaluates them where no guest OS runs the script.

package cloud

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Guest check kinds: the predicates a check's simulated form may use.
const (
	GuestFileExists     = "file_exists"
	GuestFileAbsent     = "file_absent"
	GuestFileMode       = "file_mode"
	GuestFileContains   = "file_contains"
	GuestPackageVersion = "package_version"
	GuestDiskUsedBelow  = "disk_used_below"
	// GuestNotRun is the simulated form of a script no simulation can
	// run (AgentBaker's VHD content test): it holds and says Text, which
	// names what did not run, so its result is never read as a pass.
	GuestNotRun = "not_run"
)

// GuestCheckKinds lists the kinds, sorted.
var GuestCheckKinds = []string{GuestDiskUsedBelow, GuestFileAbsent, GuestFileContains, GuestFileExists, GuestFileMode, GuestKubeadmDryRun, GuestNotRun, GuestPackageVersion}

// GuestCheck is one predicate on a GuestContent.
type GuestCheck struct {
	Kind string `json:"kind"`
	// Path is the file of the file_* kinds.
	Path string `json:"path,omitempty"`
	// Mode is file_mode's octal mode ("0744").
	Mode string `json:"mode,omitempty"`
	// Text is what file_contains looks for, and what not_run says.
	Text string `json:"text,omitempty"`
	// Package and Version are package_version's; Version is also
	// kubeadm_dry_run's Kubernetes version.
	Package string `json:"package,omitempty"`
	Version string `json:"version,omitempty"`
	// Percent is disk_used_below's limit: used space in percent of the disk.
	Percent int `json:"percent,omitempty"`
}

// Validate checks that the predicate has what its kind needs.
func (c GuestCheck) Validate() error {
	need := func(field, v string) error {
		if v == "" {
			return fmt.Errorf("guest check %s needs %s", c.Kind, field)
		}
		return nil
	}
	switch c.Kind {
	case GuestFileExists, GuestFileAbsent:
		return need("path", c.Path)
	case GuestFileMode:
		if _, err := strconv.ParseUint(c.Mode, 8, 12); err != nil || len(c.Mode) != 4 {
			return fmt.Errorf("guest check file_mode %s: mode %q: want 4 octal digits, e.g. \"0744\"", c.Path, c.Mode)
		}
		return need("path", c.Path)
	case GuestFileContains:
		if err := need("path", c.Path); err != nil {
			return err
		}
		return need("text", c.Text)
	case GuestPackageVersion:
		if err := need("package", c.Package); err != nil {
			return err
		}
		return need("version", c.Version)
	case GuestDiskUsedBelow:
		if c.Percent <= 0 || c.Percent > 100 {
			return fmt.Errorf("guest check disk_used_below: percent %d: want 1 to 100", c.Percent)
		}
		return nil
	case GuestKubeadmDryRun:
		return validateKubeadmDryRun(c)
	case GuestNotRun:
		return need("text", c.Text)
	}
	return fmt.Errorf("unknown guest check kind %q: use one of %s", c.Kind, strings.Join(GuestCheckKinds, ", "))
}

// GuestKubeadmDryRun is the predicate "kubeadm init --dry-run
// --kubernetes-version v<Version> succeeds", the smoke test
// kubernetes-sigs/image-builder runs on a VM of a Cluster API image.
const GuestKubeadmDryRun = "kubeadm_dry_run"

// kubernetesVersionRE is the version a kubeadm_dry_run check names:
// major.minor.patch, without "v" or a pre-release suffix.
var kubernetesVersionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`) })

func validateKubeadmDryRun(c GuestCheck) error {
	if !kubernetesVersionRE().MatchString(c.Version) {
		return fmt.Errorf("guest check kubeadm_dry_run: version %q: want the Kubernetes version as major.minor.patch, e.g. \"1.33.1\"", c.Version)
	}
	return nil
}

// Scans: run commands whose output is the product, a report (trivy's
// vulnerability report, the CIS assessment), rather than a verdict. On
// Azure the script installs the tool and prints its report; a target with
// no guest OS evaluates the scan's simulated form (GuestScan) against the
// image's recorded content and writes a report that says it is simulated.
// A scan fails only when asked (FailOn), as AgentBaker's scans never fail
// the build on findings.

// Guest scan kinds.
const (
	// ScanTrivyRootfs is `trivy rootfs /`: the JSON report (trivy-report.json).
	ScanTrivyRootfs = "trivy_rootfs"
	// ScanTrivyImages is `trivy image` of every cached container image:
	// the tables (trivy-images-table.txt).
	ScanTrivyImages = "trivy_images"
	// ScanCIS is the CIS benchmark assessment (cis-report.txt).
	ScanCIS = "cis"
)

// TrivySeverities are trivy's severities, lowest first.
var TrivySeverities = []string{"UNKNOWN", "LOW", "MEDIUM", "HIGH", "CRITICAL"}

// GuestScan is the simulated form of a scan.
type GuestScan struct {
	Kind string `json:"kind"`
	// Severity is trivy's --severity: the comma-separated severities reported.
	Severity string `json:"severity,omitempty"`
	// FailOn is the comma-separated severities of which one finding fails
	// the scan ("": no finding does).
	FailOn string `json:"fail_on,omitempty"`
	// Level is the CIS profile level, 1 or 2.
	Level int `json:"level,omitempty"`
	// Advisories stand in for trivy's vulnerability database, which a
	// simulation does not have: an advisory is a finding when the image
	// records its package at its version.
	Advisories []GuestAdvisory `json:"advisories,omitempty"`
}

// GuestAdvisory is a known vulnerability of one package version.
type GuestAdvisory struct {
	ID           string `json:"id"`
	Package      string `json:"package"`
	Version      string `json:"version"`
	Severity     string `json:"severity"`
	FixedVersion string `json:"fixed_version,omitempty"`
	Title        string `json:"title,omitempty"`
}

// Validate checks the scan's fields.
func (s *GuestScan) Validate() error {
	switch s.Kind {
	case ScanTrivyRootfs, ScanTrivyImages:
		if s.Severity == "" {
			return fmt.Errorf("scan %s needs severity, e.g. \"HIGH,CRITICAL\"", s.Kind)
		}
		if err := checkSeverities("severity", s.Severity); err != nil {
			return err
		}
		if s.FailOn != "" {
			if err := checkSeverities("fail_on", s.FailOn); err != nil {
				return err
			}
		}
		for _, a := range s.Advisories {
			if a.ID == "" || a.Package == "" || a.Version == "" {
				return fmt.Errorf("scan %s: advisory %+v needs id, package and version", s.Kind, a)
			}
			if err := checkSeverities("advisory "+a.ID+" severity", a.Severity); err != nil {
				return err
			}
		}
		return nil
	case ScanCIS:
		if s.Level != 1 && s.Level != 2 {
			return fmt.Errorf("scan cis: level %d: use 1 or 2", s.Level)
		}
		return nil
	}
	return fmt.Errorf("unknown scan kind %q: use %s, %s or %s", s.Kind, ScanTrivyRootfs, ScanTrivyImages, ScanCIS)
}

func checkSeverities(field, list string) error {
	for _, s := range strings.Split(list, ",") {
		if !slices.Contains(TrivySeverities, s) {
			return fmt.Errorf("%s %q: %q is not a trivy severity: use %s, comma-separated", field, list, s, strings.Join(TrivySeverities, ", "))
		}
	}
	return nil
}
