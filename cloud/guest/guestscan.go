package guest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/imgflow/imgflow/cloud"
)

// SimulatedNote says, in every simulated report, what produced it.
const SimulatedNote = "SIMULATED by imgflow: no VM booted and no scanner ran; this report is derived from the content the simulated build recorded on the image"

// Simulate is a run command's result on a target without a guest OS
// (local, the fake ARM): a scan's report, or its checks' verdict.
func Simulate(checks []cloud.GuestCheck, scan *cloud.GuestScan, g *GuestContent, diskBytes int64) (*cloud.RunCommandResult, error) {
	if scan == nil {
		return SimulateRunCommand(checks, g, diskBytes), nil
	}
	if len(checks) > 0 {
		return nil, errors.New("a run command is simulated by its checks or by its scan, not both")
	}
	if err := scan.Validate(); err != nil {
		return nil, err
	}
	return SimulateScan(scan, g)
}

// SimulateScan is the result of the scan's script on an image holding g:
// its report on stdout, the findings that fail it (FailOn) on stderr with
// exit code 1.
func SimulateScan(s *cloud.GuestScan, g *GuestContent) (*cloud.RunCommandResult, error) {
	res := &cloud.RunCommandResult{ExecutionState: cloud.RunSucceeded}
	switch s.Kind {
	case cloud.ScanTrivyRootfs:
		report, err := trivyReport(s, g)
		if err != nil {
			return nil, err
		}
		res.Output = report
		if failing := findings(s.Advisories, g, s.FailOn); len(failing) > 0 {
			res.ExitCode = 1
			var lines []string
			for _, a := range failing {
				lines = append(lines, fmt.Sprintf("%s %s in %s %s", a.Severity, a.ID, a.Package, a.Version))
			}
			res.Error = fmt.Sprintf("trivy: %d vulnerabilities of severity %s (fail_on):\n%s", len(failing), s.FailOn, joinLines(lines))
		}
	case cloud.ScanTrivyImages:
		res.Output = trivyImagesTable()
	case cloud.ScanCIS:
		res.Output = cisReport(s.Level, g)
	default:
		return nil, fmt.Errorf("unknown scan kind %q", s.Kind)
	}
	return res, nil
}

// findings are the advisories of packages g records at the advisory's
// version with a severity in severities, by package then id.
func findings(advisories []cloud.GuestAdvisory, g *GuestContent, severities string) []cloud.GuestAdvisory {
	if severities == "" {
		return nil
	}
	want := strings.Split(severities, ",")
	var out []cloud.GuestAdvisory
	for _, a := range advisories {
		if v, ok := g.Packages[a.Package]; ok && v == a.Version && slices.Contains(want, a.Severity) {
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Package != out[j].Package {
			return out[i].Package < out[j].Package
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// trivyReport is trivy's JSON report (schema version 2) of a rootfs scan
// of g: its packages, and the advisories that match them as
// vulnerabilities; the top-level "imgflow" object marks it simulated.
func trivyReport(s *cloud.GuestScan, g *GuestContent) (string, error) {
	type pkg struct {
		Name    string `json:"Name"`
		Version string `json:"Version"`
	}
	type vuln struct {
		VulnerabilityID  string `json:"VulnerabilityID"`
		PkgName          string `json:"PkgName"`
		InstalledVersion string `json:"InstalledVersion"`
		FixedVersion     string `json:"FixedVersion,omitempty"`
		Severity         string `json:"Severity"`
		Title            string `json:"Title,omitempty"`
	}
	type result struct {
		Target          string `json:"Target"`
		Class           string `json:"Class"`
		Packages        []pkg  `json:"Packages"`
		Vulnerabilities []vuln `json:"Vulnerabilities"`
	}
	r := result{Target: "/ (imgflow recorded content)", Class: "os-pkgs", Packages: []pkg{}, Vulnerabilities: []vuln{}}
	names := make([]string, 0, len(g.Packages))
	for n := range g.Packages {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		r.Packages = append(r.Packages, pkg{Name: n, Version: g.Packages[n]})
	}
	for _, a := range findings(s.Advisories, g, s.Severity) {
		r.Vulnerabilities = append(r.Vulnerabilities, vuln{VulnerabilityID: a.ID, PkgName: a.Package, InstalledVersion: a.Version,
			FixedVersion: a.FixedVersion, Severity: a.Severity, Title: a.Title})
	}
	report := struct {
		SchemaVersion int      `json:"SchemaVersion"`
		ArtifactName  string   `json:"ArtifactName"`
		ArtifactType  string   `json:"ArtifactType"`
		Results       []result `json:"Results"`
		Imgflow       any      `json:"imgflow"`
	}{2, "/", "filesystem", []result{r}, map[string]any{"simulated": true, "note": SimulatedNote, "severity": s.Severity}}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(report); err != nil {
		return "", err
	}
	return b.String(), nil
}

// TrivyImagesHeader starts trivy-images-table.txt, as AgentBaker's scan
// writes it before the table of each cached image.
const TrivyImagesHeader = "This contains the list of images with high and critical level CVEs (if present), that are present in the node.\nNote: images without CVEs are also listed\n"

func trivyImagesTable() string {
	return TrivyImagesHeader + SimulatedNote + ".\nThe simulated build records no container images, so no image is listed.\n"
}

// cisReport is a CIS assessment of what g records: the one control its
// record can answer (no world-writable file), marked simulated.
func cisReport(level int, g *GuestContent) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CIS benchmark assessment, level %d\n%s.\n\n", level, SimulatedNote)
	var writable []string
	for _, p := range g.SortedPaths() {
		if m, err := strconv.ParseUint(g.Files[p].Mode, 8, 32); err == nil && m&0o002 != 0 {
			writable = append(writable, p)
		}
	}
	verdict := "PASS"
	if len(writable) > 0 {
		verdict = "FAIL"
	}
	fmt.Fprintf(&b, "%s  Ensure no world writable files exist (%d recorded files checked)\n", verdict, len(g.Files))
	for _, p := range writable {
		fmt.Fprintf(&b, "      world writable: %s (mode %s)\n", p, g.Files[p].Mode)
	}
	b.WriteString("\nNot assessed (the record does not hold them): every other control of the benchmark.\n")
	return b.String()
}

// guestScanComment starts the script line lib/scans.star writes with a
// scan's simulated form as JSON.
const guestScanComment = "# imgflow-guest-scan: "

// GuestScanFromScript reads the simulated form a scan's script carries in
// its "# imgflow-guest-scan:" comment (nil when it has none): how a fake
// VM, which runs no script, knows what the script scans.
func GuestScanFromScript(script string) (*cloud.GuestScan, error) {
	for line := range strings.Lines(script) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), strings.TrimSpace(guestScanComment))
		if !ok {
			continue
		}
		var s cloud.GuestScan
		if err := json.Unmarshal([]byte(strings.TrimSpace(rest)), &s); err != nil {
			return nil, fmt.Errorf("the script's %q comment: %w", strings.TrimSpace(guestScanComment), err)
		}
		if err := s.Validate(); err != nil {
			return nil, err
		}
		return &s, nil
	}
	return nil, nil
}
