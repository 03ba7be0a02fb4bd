package builtins

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/internal/redact"
)

// kindChecks is test_vm's checks: structs with name, script and local (or
// scan).
var kindChecks Kind = &simpleKind{"list of struct(name, script, local or scan)", func(v starlark.Value) bool {
	seq, ok := v.(*starlark.List)
	if !ok {
		return false
	}
	for i := 0; i < seq.Len(); i++ {
		if _, ok := seq.Index(i).(*starlarkstruct.Struct); !ok {
			return false
		}
	}
	return true
}}

// DefaultTestVMSize is the size of test_vm's VM unless the workflow says
// otherwise: a small x64 VM (arm64 and confidential VM images need their
// own sizes).
const DefaultTestVMSize = "Standard_D2ds_v5"

// maxCheckOutput is how much of a check's stdout and stderr test_vm keeps,
// and of a scan's report a failure message shows: Azure's instance view
// keeps the last 4 KB of each stream.
const maxCheckOutput = cloud.RunCommandOutputMax

func registerTestVM(r *Registry) {
	r.add("Testing images",
		&Spec{
			Name: "test_vm", Positional: 1, Effect: Changes,
			Params: []Param{
				{Name: "image", Kind: KindStruct("image_version", "managed_image"), Doc: "the image_version() or managed_image() to boot"},
				{Name: "checks", Kind: kindChecks, Doc: "the checks to run, each a `struct(name, script, local)`: `name` names the check (and its run command: letters, digits, `-`, `_`, `.`), `script` is the bash script run as root, which passes when it exits 0; `local` is the same check as predicates the local target evaluates against the image's recorded content (lib/checks.star makes both). A scan (lib/scans.star) is `struct(name, script, scan)`: its stdout is a report, kept whole (see `reports`), and `scan` its simulated form"},
				{Name: "reports", Kind: KindStruct("storage_account"), Default: "None", Doc: "the storage account the VM writes scans' reports to: Azure's instance view keeps only the last 4 KB of a script's output, so a scan's stdout and stderr go to append blobs in its container `" + ReportContainer + "` (made if missing), signed with a SAS for the VM, read back and deleted; needed when a check is a scan"},
				{Name: "size", Kind: KindString, Default: `"` + DefaultTestVMSize + `"`, Doc: "the VM size; arm64 and confidential VM images need theirs (Standard_D2pds_v5, Standard_DC2ads_v5)"},
				{Name: "location", Kind: KindLocation, Default: "None", Doc: "region of the VM; default: the image's (a version must be replicated there)"},
				{Name: "security_type", Kind: KindString, Default: "None", Doc: "TrustedLaunch or ConfidentialVM; default: the image definition's SecurityType feature when it is one of them"},
				{Name: "timeout", Kind: KindDuration, Default: `"10m"`, Doc: "how long each check may run"},
				{Name: "os_type", Kind: KindString, Default: "None", Doc: "Linux or Windows; default: the image definition's (a version) or the managed image's. A Windows VM gets an admin password generated for it (never printed, journaled or kept) instead of an SSH key, and each check's `script` is PowerShell, run by the managed run command as a Linux VM's is bash"},
				{Name: "scans_fail", Kind: KindBool, Default: "True", Doc: "whether a scan whose findings reach its `fail_on` fails the step, as a failed check does (its whole report is then lost with the step's result). False: such a scan is returned with `passed` False, its report and its failing findings (`error`), and the workflow decides: `aks.write_scan_reports(tested)` writes every report as an artifact, then fails naming the scan. A scan that printed no report (it broke before scanning) fails the step either way"},
			},
			Returns: "struct(vm, resource_group, checks, results)",
			Doc: "Boots a VM from the image in a throwaway resource group (`imgflow-testvm-…`), runs each check in it through a managed run command " +
				"(Microsoft.Compute/virtualMachines/runCommands, which reports the script's exit code), then deletes the group with the VM, its disk and network. " +
				"The group's deletion is on the cleanup stack from the moment it exists, journaled, so a run that dies in between is cleaned by " +
				"`imgflow run --resume` and by `imgflow gc`. Every check runs; if any fails, the step fails naming each failed check with its exit code and " +
				"output (SAS signatures and secret() values redacted), after the group is deleted. On the local target no VM boots: each check's `local` " +
				"predicates are evaluated against what the simulated build recorded on the OS disk (uploaded and installed files with modes and content, " +
				"BCC's version, what image-builder's kubernetes and containerd roles install, the space used). The plan's dry run runs no check. The result's `checks` are struct(name, passed, exit_code, output, error, report), in order, and `results` the same by name; " +
				"a scan's `output` is its whole report (`report` True), for artifact(). A scan fails only when its findings reach its `fail_on`, and then fails the step unless `scans_fail = False`.",
			Example: `test_vm(build.sig_version, checks = aks.checks("Ubuntu"))`,
			Impl:    testVMImpl,
		},
	)
}

// vmCheck is one check of test_vm.
type vmCheck struct {
	name   string
	script string
	local  []cloud.GuestCheck
	// scan is a scan's simulated form: its output is a report.
	scan *cloud.GuestScan
	// secretEnv is the script's secret environment (secret_env):
	// run-command protectedParameters, redacted from its output.
	secretEnv map[string]string
}

func isCheckName(s string) bool { return isPlainName(s, 80, "_.-") }

// vmChecks reads and validates the checks argument.
func (c *Call) vmChecks() ([]vmCheck, error) {
	list := c.Value("checks").(*starlark.List)
	if list.Len() == 0 {
		return nil, errors.New("test_vm: no checks: pass checks = [...] (e.g. aks.checks(family))")
	}
	seen := map[string]bool{}
	out := make([]vmCheck, 0, list.Len())
	for i := 0; i < list.Len(); i++ {
		s := list.Index(i).(*starlarkstruct.Struct)
		ch := vmCheck{name: attrString(s, "name"), script: attrString(s, "script")}
		if !isCheckName(ch.name) {
			return nil, fmt.Errorf("test_vm: checks[%d]: name %q: use 1 to 80 letters, digits, '-', '_' or '.', starting with a letter or digit", i, ch.name)
		}
		if seen[strings.ToLower(ch.name)] {
			return nil, fmt.Errorf("test_vm: check %s is listed twice: give each check its own name", ch.name)
		}
		seen[strings.ToLower(ch.name)] = true
		if strings.TrimSpace(ch.script) == "" {
			return nil, fmt.Errorf("test_vm: check %s has no script", ch.name)
		}
		local, err := guestChecks(s)
		if err != nil {
			return nil, fmt.Errorf("test_vm: check %s: %w", ch.name, err)
		}
		ch.local = local
		if ch.secretEnv, err = checkSecretEnv(s, ch.name); err != nil {
			return nil, err
		}
		if ch.scan, err = guestScan(s); err != nil {
			return nil, fmt.Errorf("test_vm: check %s: %w", ch.name, err)
		}
		if ch.scan != nil && ch.local != nil {
			return nil, fmt.Errorf("test_vm: check %s has both local predicates and a scan: a check is one or the other", ch.name)
		}
		out = append(out, ch)
	}
	return out, nil
}

// checkSecretEnv reads a check's optional secret_env: variables for its
// script that hold secrets (e.g. a SAS URL to download from), given to
// the VM as protected parameters instead of in the script's text.
func checkSecretEnv(s *starlarkstruct.Struct, name string) (map[string]string, error) {
	v, err := s.Attr("secret_env")
	if err != nil || v == starlark.None {
		return nil, nil
	}
	what := "test_vm: check " + name + ": secret_env"
	if _, ok := v.(*starlark.Dict); !ok {
		return nil, fmt.Errorf("%s is a %s: want a dict of variable names to strings or secret()s", what, describe(v))
	}
	vars, err := envVars(what, v)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(vars))
	for _, e := range vars {
		// The checks are test_vm's arguments, recorded in plans and the
		// journal with URL queries (SAS) redacted: any other secret must
		// be a secret() to stay out of them.
		if !e.secret && !strings.Contains(e.value, "://") {
			return nil, fmt.Errorf("%s[%q] is a plain string, which plans and the journal record: pass a URL (its query is redacted) or a secret()", what, e.name)
		}
		out[e.name] = e.value
	}
	return out, nil
}

// guestChecks reads a check's local predicates: structs with kind and the
// fields of cloud.GuestCheck.
func guestChecks(s *starlarkstruct.Struct) ([]cloud.GuestCheck, error) {
	v, err := s.Attr("local")
	if err != nil || v == starlark.None {
		return nil, nil
	}
	list, ok := v.(*starlark.List)
	if !ok {
		return nil, fmt.Errorf("local: got %s, want a list of predicates (lib/checks.star)", v.Type())
	}
	out := make([]cloud.GuestCheck, 0, list.Len())
	for i := 0; i < list.Len(); i++ {
		p, ok := list.Index(i).(*starlarkstruct.Struct)
		if !ok {
			return nil, fmt.Errorf("local[%d]: got %s, want a predicate struct(kind, …)", i, list.Index(i).Type())
		}
		g := cloud.GuestCheck{Kind: attrString(p, "kind"), Path: attrString(p, "path"), Mode: attrString(p, "mode"), Text: attrString(p, "text"),
			Package: attrString(p, "package"), Version: attrString(p, "version")}
		if pv, err := p.Attr("percent"); err == nil {
			if err := starlark.AsInt(pv, &g.Percent); err != nil {
				return nil, fmt.Errorf("local[%d]: percent: %v", i, err)
			}
		}
		if err := g.Validate(); err != nil {
			return nil, fmt.Errorf("local[%d]: %w", i, err)
		}
		out = append(out, g)
	}
	return out, nil
}

// testVMNames are the throwaway group and VM of a run's test of an image:
// derived from the run and the image, so a resumed run finds them.
func testVMNames(runID, imageID string) (rg, vm string) {
	sum := sha256.Sum256([]byte(runID + "\x00" + strings.ToLower(imageID)))
	h := hex.EncodeToString(sum[:5])
	return "imgflow-testvm-" + h, "testvm-" + h
}

// testVMOSType is the OS of test_vm's VM: os_type, else the image
// definition's, else (a managed image) the image's own.
func (c *Call) testVMOSType(img, ds *starlarkstruct.Struct) (string, error) {
	osType := c.String("os_type", "")
	switch {
	case osType != "":
	case ds != nil:
		osType = attrString(ds, "os_type")
	default:
		mi, err := c.Run.Provider.GetManagedImage(c.Ctx(), attrString(img, "resource_group"), attrString(img, "name"))
		if err != nil {
			return "", fmt.Errorf("test_vm: read managed image %s: %w", attrString(img, "name"), err)
		}
		osType = mi.OSType
	}
	switch {
	case strings.EqualFold(osType, cloud.OSTypeWindows):
		return cloud.OSTypeWindows, nil
	case osType == "" || strings.EqualFold(osType, cloud.OSTypeLinux):
		return cloud.OSTypeLinux, nil
	}
	return "", fmt.Errorf("test_vm: os_type %q: use Linux or Windows", osType)
}

// checkScriptsFor refuses a bash script (#!) for a Windows VM, whose run
// commands run PowerShell, before any VM boots.
func checkScriptsFor(osType string, checks []vmCheck) error {
	if osType != cloud.OSTypeWindows {
		return nil
	}
	for _, ch := range checks {
		if strings.HasPrefix(strings.TrimSpace(ch.script), "#!") {
			return fmt.Errorf("test_vm: check %s is a shell script (%s) but the image is Windows, whose run commands run PowerShell: give Windows images PowerShell checks (lib/capz.star's windows_smoke_checks)", ch.name, strings.SplitN(strings.TrimSpace(ch.script), "\n", 2)[0])
		}
	}
	return nil
}

// imageSecurity is the security type a VM of the definition needs.
func imageSecurity(ds *starlarkstruct.Struct) string {
	if ds == nil {
		return ""
	}
	v, err := ds.Attr("features")
	if err != nil {
		return ""
	}
	d, ok := v.(*starlark.Dict)
	if !ok {
		return ""
	}
	st, _, _ := d.Get(starlark.String("SecurityType"))
	switch s, _ := starlark.AsString(st); s {
	case "TrustedLaunch", "ConfidentialVM":
		return s
	}
	return ""
}

func testVMImpl(c *Call) (starlark.Value, error) {
	checks, err := c.vmChecks()
	if err != nil {
		return nil, err
	}
	img := c.Struct("image")
	imageID := attrString(img, "id")
	ds := attrStruct(img, "definition") // nil for a managed image
	security := c.String("security_type", imageSecurity(ds))
	if security != "" && security != "TrustedLaunch" && security != "ConfidentialVM" {
		return nil, fmt.Errorf("test_vm: security_type %q: use TrustedLaunch or ConfidentialVM (or leave it unset)", security)
	}
	location := c.String("location", attrString(img, "location"))
	osType, err := c.testVMOSType(img, ds)
	if err != nil {
		return nil, err
	}
	if err := checkScriptsFor(osType, checks); err != nil {
		return nil, err
	}
	scansFail := c.Bool("scans_fail", true)
	rgName, vmName := testVMNames(c.Run.Info.ID, imageID)
	ctx, p := c.Ctx(), c.Run.Provider
	reports := c.Struct("reports")
	if name := firstScan(checks); name != "" && reports == nil {
		return nil, fmt.Errorf("test_vm: check %s is a scan, whose report is larger than Azure's run command keeps: pass reports = storage_account(…), where the VM writes it", name)
	}

	if _, err := p.CreateResourceGroup(ctx, cloud.ResourceGroup{Name: rgName, Location: location, Tags: c.temporaryTags()}); err != nil {
		return nil, fmt.Errorf("test_vm: create resource group %s: %w", rgName, err)
	}
	if err := c.AddCleanup("delete_resource_group", "delete resource group "+rgName+" (test VM)", map[string]any{"name": rgName}); err != nil {
		return nil, err
	}
	results, err := c.runChecks(ctx, rgName, vmName, location, imageID, security, osType, ds, reports, checks)
	if errors.Is(err, cloud.ErrHalt) {
		return nil, err // the process "died": nothing more runs
	}
	// The group goes now, whatever happened; the cleanup registered above
	// retries at the end of the run should this fail.
	if derr := p.DeleteResourceGroup(ctx, rgName); derr != nil && !cloud.IsNotFound(derr) {
		if errors.Is(derr, cloud.ErrHalt) {
			return nil, derr
		}
		return nil, errors.Join(err, fmt.Errorf("test_vm: delete resource group %s: %w", rgName, derr))
	}
	if err != nil {
		return nil, err
	}
	var failed []string
	stepFails := false
	vals := make([]any, len(results))
	byName := starlark.NewDict(len(results))
	for i, r := range results {
		if !r.res.Passed() {
			failed = append(failed, r.describe())
			stepFails = stepFails || scansFail || !r.foundFindings()
		}
		v := makeStruct("check", fields{"name": r.name, "passed": r.res.Passed(), "exit_code": r.res.ExitCode, "output": r.res.Output, "error": r.res.Error, "report": r.report})
		vals[i] = v
		if err := byName.SetKey(starlark.String(r.name), v); err != nil {
			return nil, err
		}
	}
	if stepFails {
		return nil, fmt.Errorf("test_vm: %d of %d checks failed on VM %s from %s (its resource group %s is deleted):\n%s",
			len(failed), len(results), vmName, imageID, rgName, strings.Join(failed, "\n"))
	}
	if c.Run.dryRun() {
		// Nothing booted and no check ran: the plan says what will.
		c.Report(cloud.Outcome("run"), fmt.Sprintf("%d checks on a VM from %s", len(results), attrString(img, "name")))
	} else if len(failed) > 0 {
		// Only scans failed, on their findings, and scans_fail = False:
		// the workflow writes their reports, then fails.
		c.Report(cloud.Outcome("findings"), fmt.Sprintf("%d checks on VM %s from %s; %d scans reached their fail_on (returned with passed = False)",
			len(results), vmName, attrString(img, "name"), len(failed)))
	} else {
		c.Report(cloud.Outcome("passed"), fmt.Sprintf("%d checks on VM %s from %s", len(results), vmName, attrString(img, "name")))
	}
	return makeStruct("test_vm", fields{"vm": vmName, "resource_group": rgName, "checks": vals, "results": byName}), nil
}

// checkResult is one check's outcome, redacted.
type checkResult struct {
	name string
	res  *cloud.RunCommandResult
	// report says the output is a scan's whole report.
	report bool
}

// foundFindings says a failed scan failed on its findings (fail_on): its
// script ran to the end with a report on stdout. The scans print their
// report before the fail_on check, so a scan that broke (no scanner, no
// database) has none.
func (r checkResult) foundFindings() bool {
	return r.report && strings.EqualFold(r.res.ExecutionState, cloud.RunSucceeded) && r.res.ExitCode != 0 && strings.TrimSpace(r.res.Output) != ""
}

func (r checkResult) describe() string {
	var b strings.Builder
	if strings.EqualFold(r.res.ExecutionState, cloud.RunSucceeded) {
		fmt.Fprintf(&b, "check %s failed with exit code %d", r.name, r.res.ExitCode)
	} else {
		fmt.Fprintf(&b, "check %s did not finish (run command %s, exit code %d)", r.name, r.res.ExecutionState, r.res.ExitCode)
	}
	stdout := r.res.Output
	if r.report && stdout != "" {
		// The findings that failed it are on stderr; the report is the
		// check's output, for artifact().
		fmt.Fprintf(&b, "\n  report: %d bytes (the check's output)", len(stdout))
		stdout = ""
	}
	for _, s := range []struct{ label, text string }{{"stdout", stdout}, {"stderr", r.res.Error}} {
		if t := strings.TrimRight(s.text, "\n"); t != "" {
			fmt.Fprintf(&b, "\n  %s:\n    %s", s.label, strings.ReplaceAll(t, "\n", "\n    "))
		}
	}
	return b.String()
}

// runChecks creates the VM and runs every check in it.
func (c *Call) runChecks(ctx context.Context, rg, vmName, location, imageID, security, osType string, ds, reports *starlarkstruct.Struct, checks []vmCheck) ([]checkResult, error) {
	p := c.Run.Provider
	// A managed image (ds nil) is generalized.
	specialized := ds != nil && strings.EqualFold(attrString(ds, "os_state"), cloud.OSStateSpecialized)
	vm := cloud.VM{
		Name: vmName, ResourceGroup: rg, Location: location, Size: c.String("size", DefaultTestVMSize), ImageID: imageID,
		SecurityType: security, Specialized: specialized, OSType: osType, Tags: c.temporaryTags(),
	}
	if _, err := p.CreateVM(ctx, vm); err != nil {
		return nil, fmt.Errorf("test_vm: create VM %s from %s in %s: %w", vmName, imageID, location, err)
	}
	timeout := c.Duration("timeout", 10*time.Minute)
	secrets := redact.SecretValues(os.Environ())
	out := make([]checkResult, 0, len(checks))
	for _, ch := range checks {
		cmd := cloud.RunCommand{Name: ch.name, Script: ch.script, Timeout: timeout, Simulated: ch.local, SimulatedScan: ch.scan, SecretEnv: ch.secretEnv}
		if ch.scan != nil {
			if err := c.reportBlobs(ctx, reports, vmName, &cmd); err != nil {
				return nil, fmt.Errorf("test_vm: check %s on VM %s: %w", ch.name, vmName, err)
			}
		}
		res, err := p.RunCommand(ctx, rg, vmName, cmd)
		if err != nil {
			return nil, fmt.Errorf("test_vm: check %s on VM %s: %w", ch.name, vmName, err)
		}
		hidden := append(slices.Collect(maps.Values(ch.secretEnv)), secrets...)
		res.Output = redact.Text(res.Output, hidden)
		res.Error = redact.Text(res.Error, hidden)
		if ch.scan == nil {
			res.Output, res.Error = tail(res.Output, maxCheckOutput), tail(res.Error, maxCheckOutput)
		}
		out = append(out, checkResult{name: ch.name, res: res, report: ch.scan != nil})
	}
	return out, nil
}

// tail keeps the last n bytes of s.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// vmCleanupKinds delete what test_vm made; a resource already gone is fine.
func vmCleanupKinds() map[string]CleanupFunc {
	return map[string]CleanupFunc{
		"delete_check_outputs": deleteCheckOutputs,
		"delete_resource_group": func(ctx context.Context, p cloud.Provider, a map[string]any) error {
			name, _ := a["name"].(string)
			if !strings.HasPrefix(name, "imgflow-testvm-") {
				// Only test_vm's throwaway groups: never a user's.
				return fmt.Errorf("refusing to delete resource group %q: imgflow deletes only the imgflow-testvm-… groups test_vm makes", name)
			}
			if err := p.DeleteResourceGroup(ctx, name); err != nil && !cloud.IsNotFound(err) {
				return err
			}
			return nil
		},
	}
}
