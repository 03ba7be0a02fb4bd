package guest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/imgflow/imgflow/cloud"
)

// GuestContent is what a simulated build put on an image's OS disk: the
// files its provisioners installed, the packages it built, and the space
// they take. The local target has no guest OS to run a script in; it
// evaluates a check's GuestChecks against this record, which the
// simulated build writes into the OS disk itself (EncodeGuestContent), so
// it travels with the bytes to the managed image, version and VM disk.
type GuestContent struct {
	// Files by absolute path.
	Files map[string]GuestFile `json:"files"`
	// Packages maps a package (or tool built from source) to its version.
	Packages map[string]string `json:"packages,omitempty"`
	// UsedBytes is the space the recorded content takes on the disk.
	UsedBytes int64 `json:"used_bytes"`
}

// GuestFile is one file of a GuestContent.
type GuestFile struct {
	// Mode is the octal permission bits, 4 digits ("0744").
	Mode string `json:"mode"`
	Size int64  `json:"size"`
	// Text is the content of a file up to MaxGuestText bytes, else "".
	Text string `json:"text,omitempty"`
}

// MaxGuestText bounds the file content a GuestContent keeps, for
// file_contains checks.
const MaxGuestText = 64 << 10

// GuestContentOffset is where a simulated OS disk holds its GuestContent,
// at most GuestContentMax bytes: the sectors after the build's marker in
// sector 0, so that the disk's data is one short extent (every copy of
// the image reads, hashes and writes from its first byte to its last).
const (
	GuestContentOffset = 4 << 10
	GuestContentMax    = 1 << 20
)

var guestMagic = []byte("imgflow guest content v1\n")

// EncodeGuestContent is the record as written at GuestContentOffset.
func EncodeGuestContent(g *GuestContent) ([]byte, error) {
	data, err := json.Marshal(g)
	if err != nil {
		return nil, err
	}
	out := append(append([]byte(nil), guestMagic...), strconv.Itoa(len(data))+"\n"...)
	out = append(out, data...)
	if len(out) > GuestContentMax {
		return nil, fmt.Errorf("the guest content record takes %d bytes, more than %d", len(out), GuestContentMax)
	}
	return out, nil
}

// ErrNoGuestContent says a disk holds no GuestContent: it was not made by
// a simulated build (e.g. an imported VHD).
var ErrNoGuestContent = errors.New("the disk holds no record of its content (it was not made by a simulated packer build)")

// ReadGuestContent reads the record from a disk's bytes, only as many as
// it takes.
func ReadGuestContent(disk io.ReaderAt) (*GuestContent, error) {
	head := make([]byte, len(guestMagic)+len(strconv.Itoa(GuestContentMax))+1)
	n, err := disk.ReadAt(head, GuestContentOffset)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	rest, ok := bytes.CutPrefix(head[:n], guestMagic)
	if !ok {
		return nil, ErrNoGuestContent
	}
	size, _, ok := bytes.Cut(rest, []byte("\n"))
	total := len(guestMagic) + len(size) + 1
	if length, err := strconv.Atoi(string(size)); ok && err == nil && length >= 0 {
		total += length
	}
	buf := make([]byte, min(total, GuestContentMax))
	if n, err = disk.ReadAt(buf, GuestContentOffset); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return DecodeGuestContent(buf[:n])
}

// DecodeGuestContent reads the record EncodeGuestContent wrote from the
// bytes at GuestContentOffset.
func DecodeGuestContent(b []byte) (*GuestContent, error) {
	rest, ok := bytes.CutPrefix(b, guestMagic)
	if !ok {
		return nil, ErrNoGuestContent
	}
	n, data, ok := bytes.Cut(rest, []byte("\n"))
	size, err := strconv.Atoi(string(n))
	if !ok || err != nil || size < 0 || size > len(data) {
		return nil, errors.New("the guest content record is damaged")
	}
	var g GuestContent
	if err := json.Unmarshal(data[:size], &g); err != nil {
		return nil, fmt.Errorf("the guest content record is damaged: %w", err)
	}
	return &g, nil
}

// Eval evaluates the predicate c on g, for a disk of diskBytes, and says
// what it found, as the check's script would print it.
func Eval(c cloud.GuestCheck, g *GuestContent, diskBytes int64) (bool, string) {
	f, exists := g.Files[c.Path]
	switch c.Kind {
	case cloud.GuestFileExists:
		if !exists {
			return false, c.Path + ": missing"
		}
		return true, c.Path + ": present"
	case cloud.GuestFileAbsent:
		if exists {
			return false, c.Path + ": present, want absent"
		}
		return true, c.Path + ": absent"
	case cloud.GuestFileMode:
		if !exists {
			return false, c.Path + ": missing"
		}
		if f.Mode != c.Mode {
			return false, fmt.Sprintf("%s: mode %s, want %s", c.Path, f.Mode, c.Mode)
		}
		return true, fmt.Sprintf("%s: mode %s", c.Path, f.Mode)
	case cloud.GuestFileContains:
		if !exists {
			return false, c.Path + ": missing"
		}
		if !strings.Contains(f.Text, c.Text) {
			return false, fmt.Sprintf("%s: does not contain %q", c.Path, c.Text)
		}
		return true, fmt.Sprintf("%s: contains %q", c.Path, c.Text)
	case cloud.GuestPackageVersion:
		got, ok := g.Packages[c.Package]
		if !ok {
			return false, c.Package + ": not installed"
		}
		if got != c.Version {
			return false, fmt.Sprintf("%s: version %s, want %s", c.Package, got, c.Version)
		}
		return true, fmt.Sprintf("%s: version %s", c.Package, got)
	case cloud.GuestDiskUsedBelow:
		pct := 100
		if diskBytes > 0 {
			pct = int((g.UsedBytes*100 + diskBytes - 1) / diskBytes)
		}
		if pct >= c.Percent {
			return false, fmt.Sprintf("disk used %d%%, want below %d%%", pct, c.Percent)
		}
		return true, fmt.Sprintf("disk used %d%%", pct)
	case cloud.GuestKubeadmDryRun:
		return evalKubeadmDryRun(c, g)
	case cloud.GuestNotRun:
		return true, c.Text
	}
	return false, "unknown check kind " + c.Kind
}

// SimulateRunCommand evaluates every predicate of a run command on g, as
// its script would run: each finding on a line of stdout (passed) or
// stderr (failed), exit code 1 when any failed.
func SimulateRunCommand(checks []cloud.GuestCheck, g *GuestContent, diskBytes int64) *cloud.RunCommandResult {
	var out, errs []string
	for _, c := range checks {
		if ok, msg := Eval(c, g, diskBytes); ok {
			out = append(out, msg)
		} else {
			errs = append(errs, msg)
		}
	}
	res := &cloud.RunCommandResult{ExecutionState: cloud.RunSucceeded, Output: joinLines(out), Error: joinLines(errs)}
	if len(errs) > 0 {
		res.ExitCode = 1
	}
	return res
}

func joinLines(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// SortedPaths lists g's file paths in order.
func (g *GuestContent) SortedPaths() []string {
	out := make([]string, 0, len(g.Files))
	for p := range g.Files {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// guestChecksComment starts the script line lib/checks.star writes with a
// check's predicates as JSON.
const guestChecksComment = "# imgflow-guest-checks: "

// GuestChecksFromScript reads the predicates a check's script carries in
// its "# imgflow-guest-checks:" comment (nil when it has none): how a fake
// VM, which runs no script, knows what the script checks.
func GuestChecksFromScript(script string) ([]cloud.GuestCheck, error) {
	for line := range strings.Lines(script) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), strings.TrimSpace(guestChecksComment))
		if !ok {
			continue
		}
		var out []cloud.GuestCheck
		if err := json.Unmarshal([]byte(strings.TrimSpace(rest)), &out); err != nil {
			return nil, fmt.Errorf("the script's %q comment: %w", strings.TrimSpace(guestChecksComment), err)
		}
		for _, c := range out {
			if err := c.Validate(); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, nil
}
