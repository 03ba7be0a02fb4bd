package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cliResult is what one imgflow invocation printed and returned.
type cliResult struct {
	code           int
	stdout, stderr string
}

func (r cliResult) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// repoRoot is the absolute repository root (the workspace of the repo's
// workflows).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	return root
}

// imgflow runs the CLI in-process. Output never holds ANSI escapes: it
// does not go to a terminal.
func imgflow(t *testing.T, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := runMain(ctx, args, &stdout, &stderr)
	res := cliResult{code: code, stdout: stdout.String(), stderr: stderr.String()}
	assert.NotContains(t, res.stdout, "\x1b[", "ANSI escape in stdout of %v", args)
	assert.NotContains(t, res.stderr, "\x1b[", "ANSI escape in stderr of %v", args)
	return res
}

const flatcarVersion = "4152.2.3"

// runFlatcar runs workflows/flatcar.star of the repository on state.
func runFlatcar(t *testing.T, state string, extra ...string) cliResult {
	t.Helper()
	root := repoRoot(t)
	args := append([]string{
		"run", "--root", root, filepath.Join(root, "workflows", "flatcar.star"),
		"--state", state,
		"--var", "version=" + flatcarVersion,
		"--var", "vhd=//testdata/flatcar/flatcar-linux-test-amd64.vhd",
	}, extra...)
	return imgflow(t, args...)
}

// stepLineRE matches a step line: number, builtin, summary, outcome,
// duration and the workflow position (with the library line that made the
// call, when a library function did).
var stepLineRE = regexp.MustCompile(`^\s*(\d+) (\w+)\s+(.*) (created|exists|updated|failed) (\S+) (\S+\.star:\d+:\d+)(?: \((\S+\.star:\d+:\d+)\))?$`)

type stepLine struct {
	n                int
	builtin, outcome string
	pos, libPos      string
	line             string
}

// stepLines parses the step lines of a run's stdout.
func stepLines(t *testing.T, stdout string) []stepLine {
	t.Helper()
	var out []stepLine
	for _, line := range strings.Split(stdout, "\n") {
		m := stepLineRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n, err := strconv.Atoi(m[1])
		require.NoError(t, err)
		out = append(out, stepLine{n: n, builtin: m[2], outcome: m[4], pos: m[6], libPos: m[7], line: line})
	}
	return out
}

// flatcarOutputs is the JSON --outputs writes for the Flatcar workflow.
type flatcarOutputs struct {
	PublicGalleryName string   `json:"public_gallery_name"`
	CommunityImageID  string   `json:"community_image_id"`
	Regions           []string `json:"regions"`
}

var guidRE = `[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`

func TestRunFlatcarWorkflow(t *testing.T) {
	state := t.TempDir()
	outFile := filepath.Join(t.TempDir(), "outputs.json")
	res := runFlatcar(t, state, "--outputs", outFile)
	require.Equal(t, 0, res.code, res.String())
	assert.Empty(t, res.stderr)

	assert.True(t, strings.HasPrefix(res.stdout, "imgflow run workflows/flatcar.star (target local, run "), res.stdout)

	// One line per step, numbered in order, each with its outcome and the
	// workflow line that asked for it.
	steps := stepLines(t, res.stdout)
	require.NotEmpty(t, steps, res.stdout)
	builtinsSeen := map[string]bool{}
	for i, s := range steps {
		assert.Equal(t, i+1, s.n, s.line)
		assert.Equal(t, "created", s.outcome, s.line)
		assert.True(t, strings.HasPrefix(s.pos, "workflows/flatcar.star:"), "step position %q is not a workflows/flatcar.star line: %s", s.pos, s.line)
		if s.libPos != "" {
			assert.True(t, strings.HasPrefix(s.libPos, "lib/flatcar.star:"), s.line)
		}
		builtinsSeen[s.builtin] = true
	}
	for _, b := range []string{"resource_group", "storage_account", "vhd_upload", "gallery", "image_definition", "image_version", "share_community"} {
		assert.True(t, builtinsSeen[b], "no %s step in\n%s", b, res.stdout)
	}

	// The outputs section, then the same values as JSON.
	_, outputsText, found := strings.Cut(res.stdout, "\nOutputs:\n")
	require.True(t, found, res.stdout)
	assert.Contains(t, outputsText, "  public_gallery_name = \"flatcar-")
	assert.Contains(t, outputsText, "  community_image_id = \"/CommunityGalleries/flatcar-")
	assert.Contains(t, outputsText, "  regions = [")

	data, err := os.ReadFile(outFile)
	require.NoError(t, err)
	var out flatcarOutputs
	require.NoError(t, json.Unmarshal(data, &out), string(data))
	assert.Regexp(t, "^flatcar-"+guidRE+"$", out.PublicGalleryName)
	assert.Equal(t, "/CommunityGalleries/"+out.PublicGalleryName+"/Images/flatcar-stable-amd64/Versions/"+flatcarVersion, out.CommunityImageID)
	require.NotEmpty(t, out.Regions)
	assert.Equal(t, "westeurope", out.Regions[0], "the gallery region comes first")
	assert.Contains(t, out.Regions, "eastus")
	for _, blacklisted := range []string{"polandcentral", "eastus2euap", "centraluseuap", "switzerlandwest"} {
		assert.NotContains(t, out.Regions, blacklisted)
	}
	for _, geography := range []string{"europe", "global", "unitedstates"} {
		assert.NotContains(t, out.Regions, geography)
	}
	assert.Contains(t, res.stdout, "  public_gallery_name = \""+out.PublicGalleryName+"\"")

	// state: the tree with the community gallery's public name and the
	// published version's regions.
	st := imgflow(t, "state", "--state", state)
	require.Equal(t, 0, st.code, st.String())
	assert.Contains(t, st.stdout, "resource group flatcar-image-gallery-publishing westeurope")
	assert.Contains(t, st.stdout, "gallery flatcar westeurope community "+out.PublicGalleryName)
	assert.Contains(t, st.stdout, "gallery flatcar_staging westeurope\n")
	assert.Contains(t, st.stdout, "definition flatcar-stable-amd64")
	assert.Contains(t, st.stdout, "version "+flatcarVersion)
	assert.Regexp(t, `(?m)^\s+replicated to `+strconv.Itoa(len(out.Regions))+` regions: westeurope Completed, `, st.stdout)
	assert.Contains(t, st.stdout, "replicated to 1 region: westeurope Completed\n", "the staging version stays in its region")
	assert.Regexp(t, `flatcar-linux-`+regexp.QuoteMeta(flatcarVersion)+`-stable-amd64\.vhd PageBlob 4194816 bytes sparse-sha256:[0-9a-f]{64}\n`, st.stdout, "the blob with what identifies its content")

	// state --output json parses and agrees.
	js := imgflow(t, "state", "--state", state, "--output", "json")
	require.Equal(t, 0, js.code, js.String())
	var snap struct {
		SubscriptionID string `json:"subscription_id"`
		ResourceGroups map[string]struct {
			Galleries map[string]struct {
				PublicNames      []string `json:"public_names"`
				CommunityEnabled bool     `json:"community_enabled"`
			} `json:"galleries"`
		} `json:"resource_groups"`
	}
	require.NoError(t, json.Unmarshal([]byte(js.stdout), &snap), js.stdout)
	assert.Regexp(t, "^"+guidRE+"$", snap.SubscriptionID)
	assert.Len(t, snap.ResourceGroups, 3)
	community := snap.ResourceGroups["flatcar-image-gallery-publishing"].Galleries["flatcar"]
	assert.True(t, community.CommunityEnabled)
	assert.Equal(t, []string{out.PublicGalleryName}, community.PublicNames)
}

func TestRunFlatcarTwiceChangesNothing(t *testing.T) {
	state := t.TempDir()
	first := runFlatcar(t, state, "--outputs", filepath.Join(state, "..", "first.json"))
	require.Equal(t, 0, first.code, first.String())
	before := imgflow(t, "state", "--state", state, "--output", "json")

	second := runFlatcar(t, state)
	require.Equal(t, 0, second.code, second.String())
	steps := stepLines(t, second.stdout)
	require.Len(t, steps, len(stepLines(t, first.stdout)))
	for _, s := range steps {
		assert.Equal(t, "exists", s.outcome, s.line)
	}
	_, out1, _ := strings.Cut(first.stdout, "\nOutputs:\n")
	_, out2, _ := strings.Cut(second.stdout, "\nOutputs:\n")
	assert.Equal(t, out1, out2, "same outputs on the rerun")

	after := imgflow(t, "state", "--state", state, "--output", "json")
	assert.Equal(t, before.stdout, after.stdout, "the rerun changed the state")
}

// failingRun runs a fixture workflow of testdata/cli on a fresh state and
// checks that it failed and left nothing behind.
func failingRun(t *testing.T, fixture string, vars ...string) cliResult {
	t.Helper()
	root := repoRoot(t)
	state := t.TempDir()
	args := []string{"run", "--root", root, "--state", state, filepath.Join(root, "testdata", "cli", fixture)}
	for _, v := range vars {
		args = append(args, "--var", v)
	}
	res := imgflow(t, args...)
	require.NotEqual(t, 0, res.code, res.String())
	assert.True(t, strings.HasPrefix(res.stderr, "error: "), res.stderr)
	assertStateEmpty(t, state)
	return res
}

// assertStateEmpty checks with `state --output json` that no resource group exists.
func assertStateEmpty(t *testing.T, state string) {
	t.Helper()
	js := imgflow(t, "state", "--state", state, "--output", "json")
	require.Equal(t, 0, js.code, js.String())
	var snap map[string]any
	require.NoError(t, json.Unmarshal([]byte(js.stdout), &snap), js.stdout)
	rgs, _ := snap["resource_groups"].(map[string]any)
	assert.Empty(t, rgs, "resource groups exist after a failed run:\n%s", js.stdout)

	tree := imgflow(t, "state", "--state", state)
	assert.Contains(t, tree.stdout, "(empty: run a workflow first)")
}

func TestRunRefusesInvalidInputBeforeChangingAnything(t *testing.T) {
	tests := []struct {
		fixture string
		// pos is the workflow line that asked for the failing call.
		pos string
		// want are fragments of the message: what is wrong, what to change.
		want []string
	}{
		{
			// The resource group is created on line 3 before the gallery on
			// line 4 fails: the validation pass catches it first.
			fixture: "bad_gallery_name.star", pos: "testdata/cli/bad_gallery_name.star:4:",
			want: []string{`invalid gallery name "flatcar-staging"`, "'-'", "'_'", "flatcar_staging"},
		},
		{
			fixture: "community_prefix_hyphen.star", pos: "testdata/cli/community_prefix_hyphen.star:5:",
			want: []string{`invalid community prefix "flatcar-capi"`, "alphanumeric", "flatcar4capi"},
		},
		{
			fixture: "arm64_v1.star", pos: "testdata/cli/arm64_v1.star:5:",
			want: []string{"Arm64", `hyper_v_generation="V2"`},
		},
		{
			fixture: "version_too_big.star", pos: "testdata/cli/version_too_big.star:8:",
			want: []string{`invalid version "1.0.2147483648"`, "2147483647"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			res := failingRun(t, tt.fixture)
			assert.Equal(t, 1, res.code)
			assert.Contains(t, res.stderr, "error: "+tt.pos)
			for _, w := range tt.want {
				assert.Contains(t, res.stderr, w)
			}
			assert.Contains(t, res.stderr, "nothing was changed")
			assert.Contains(t, res.stderr, "Traceback (most recent call last):")
			assert.NotContains(t, res.stdout, "Outputs:")
			assert.Empty(t, stepLines(t, res.stdout), "no step ran")
		})
	}
}

func TestRunFlatcarVersionAboveInt32(t *testing.T) {
	root := repoRoot(t)
	state := t.TempDir()
	res := imgflow(t, "run", "--root", root, filepath.Join(root, "workflows", "flatcar.star"), "--state", state,
		"--var", "version=4152.2.2147483648", "--var", "vhd=//testdata/flatcar/flatcar-linux-test-amd64.vhd")
	require.Equal(t, 1, res.code, res.String())
	assert.Regexp(t, `error: (workflows|lib)/flatcar\.star:`, res.stderr)
	assert.Contains(t, res.stderr, "workflows/flatcar.star:", "the workflow's own line is named")
	assert.Contains(t, res.stderr, "2147483647")
	assertStateEmpty(t, state)
}

// params.star declares name (required), count (int), enabled (bool) and
// regions (list) and outputs them.
func runParams(t *testing.T, state string, args ...string) cliResult {
	t.Helper()
	root := repoRoot(t)
	return imgflow(t, append([]string{"run", "--root", root, "--state", state, filepath.Join(root, "testdata", "cli", "params.star")}, args...)...)
}

func outputLine(name, jsonValue string) string { return "  " + name + " = " + jsonValue + "\n" }

func TestRunVars(t *testing.T) {
	state := t.TempDir()
	res := runParams(t, state, "--var", "name=x", "--var", "count=3", "--var", "enabled=true", "--var", "regions=eastus,westus")
	require.Equal(t, 0, res.code, res.String())
	assert.Contains(t, res.stdout, outputLine("name", `"x"`))
	assert.Contains(t, res.stdout, outputLine("count", "3"))
	assert.Contains(t, res.stdout, outputLine("enabled", "true"))
	assert.Contains(t, res.stdout, outputLine("regions", `["eastus","westus"]`))
}

func TestRunUnknownVarListsTheParams(t *testing.T) {
	state := t.TempDir()
	res := runParams(t, state, "--var", "name=x", "--var", "colour=red")
	require.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stderr, "unknown --var colour")
	assert.Contains(t, res.stderr, "declared params:")
	for _, p := range []string{"name (required): a required string", "count (default 1): an int", "enabled (default False)", "regions (default"} {
		assert.Contains(t, res.stderr, p)
	}
	assertStateEmpty(t, state)
}

func TestRunMissingParamListsTheParams(t *testing.T) {
	state := t.TempDir()
	res := runParams(t, state)
	require.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stderr, "error: testdata/cli/params.star:3:")
	assert.Contains(t, res.stderr, `param "name" is required: pass --var name=<value>`)
	assert.Contains(t, res.stderr, "declared params:")
	for _, p := range []string{"count", "enabled", "regions"} {
		assert.Contains(t, res.stderr, p)
	}
}

func TestRunBadVarValue(t *testing.T) {
	res := runParams(t, t.TempDir(), "--var", "name=x", "--var", "count=many")
	require.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stderr, "error: testdata/cli/params.star:4:")
	assert.Contains(t, res.stderr, "is not an integer")

	res = runParams(t, t.TempDir(), "--var", "nameonly")
	assert.Equal(t, 2, res.code, res.String())
	assert.Contains(t, res.stderr, "want name=value")

	res = runParams(t, t.TempDir(), "--var", "name=a", "--var", "name=b")
	assert.Equal(t, 2, res.code, res.String())
	assert.Contains(t, res.stderr, "--var name given twice")
}

func TestRunVarsFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "vars.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"name": "from-file", "count": 5, "enabled": true, "regions": ["eastus", "westus2"]}`), 0o644))
	outFile := filepath.Join(dir, "out.json")

	res := runParams(t, t.TempDir(), "--vars-file", file, "--outputs", outFile)
	require.Equal(t, 0, res.code, res.String())
	data, err := os.ReadFile(outFile)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(data, &out))
	assert.Equal(t, map[string]any{
		"name": "from-file", "count": float64(5), "enabled": true, "regions": []any{"eastus", "westus2"},
		"count_type": "int", "enabled_type": "bool",
	}, out)

	// A --var wins over the file.
	res = runParams(t, t.TempDir(), "--vars-file", file, "--var", "count=7")
	require.Equal(t, 0, res.code, res.String())
	assert.Contains(t, res.stdout, outputLine("count", "7"))
	assert.Contains(t, res.stdout, outputLine("name", `"from-file"`))

	// Unknown names in the file are refused like unknown --vars.
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"name": "x", "colour": "red"}`), 0o644))
	res = runParams(t, t.TempDir(), "--vars-file", bad)
	require.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stderr, "unknown --var colour")

	notJSON := filepath.Join(dir, "vars.txt")
	require.NoError(t, os.WriteFile(notJSON, []byte("name=x\n"), 0o644))
	res = runParams(t, t.TempDir(), "--vars-file", notJSON)
	require.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stderr, "want a JSON object of param values")

	res = runParams(t, t.TempDir(), "--vars-file", filepath.Join(dir, "missing.json"))
	require.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stderr, "vars file")
}

// A typed value in a vars file must fit the param's default like a --var
// string must: a bool or a list for an int param is an error, not a value
// the workflow then formats with %d.
func TestRunVarsFileValueOfTheWrongType(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "vars.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"name": "x", "count": "7"}`), 0o644))
	res := runParams(t, t.TempDir(), "--vars-file", file)
	require.Equal(t, 0, res.code, res.String())
	assert.Contains(t, res.stdout, outputLine("count", "7"), "a string is converted like a --var")

	require.NoError(t, os.WriteFile(file, []byte(`{"name": "x", "count": true}`), 0o644))
	res = runParams(t, t.TempDir(), "--vars-file", file)
	assert.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stderr, `param "count"`)
}

// A SAS is a secret: it reaches neither the console nor anything under the
// state directory (state, journals of the run).
func TestRunNeverStoresOrPrintsASAS(t *testing.T) {
	const secret = "TOPSECRETSIGNATURE"
	root := repoRoot(t)
	state := t.TempDir()
	res := imgflow(t, "run", "--root", root, "--state", state, filepath.Join(root, "testdata", "cli", "sas_copy.star"))
	require.Equal(t, 0, res.code, res.String())
	assert.Contains(t, res.stdout, "blob_copy")
	assert.NotContains(t, res.stdout, secret)
	assert.NotContains(t, res.stderr, secret)
	err := filepath.WalkDir(state, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil || info.Size() > 1<<20 {
			return err // blob data
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		assert.NotContains(t, string(data), secret, "the SAS is stored in %s", strings.TrimPrefix(path, state))
		return nil
	})
	require.NoError(t, err)
}

func TestRunTargets(t *testing.T) {
	state := t.TempDir()
	t.Setenv("AZURE_SUBSCRIPTION_ID", "")
	t.Setenv("IMGFLOW_AZURE_ARM_ENDPOINT", "")
	res := runParams(t, state, "--var", "name=x", "--target", "azure")
	require.NotEqual(t, 0, res.code, res.String())
	assert.Contains(t, res.stderr, "no subscription: pass --subscription")
	assert.Contains(t, res.stderr, "AZURE_SUBSCRIPTION_ID")
	assert.Empty(t, res.stdout)

	res = runParams(t, state, "--var", "name=x", "--target", "gcp")
	require.NotEqual(t, 0, res.code, res.String())
	assert.Contains(t, res.stderr, `unknown target "gcp": use local or azure`)
}

func TestRunArguments(t *testing.T) {
	root := repoRoot(t)
	res := imgflow(t, "run", "--root", root, "--state", t.TempDir())
	assert.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stderr, "run takes a workflow file")

	state := t.TempDir()
	res = imgflow(t, "run", "--root", root, "--state", state, "a.star", "b.star")
	assert.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stderr, "a.star: no such workflow file")
	runs := imgflow(t, "runs", "--state", state)
	assert.Contains(t, runs.stdout, "no runs yet", "a missing file starts no run")

	outside := filepath.Join(t.TempDir(), "x.star")
	require.NoError(t, os.WriteFile(outside, []byte("print(1)\n"), 0o644))
	res = imgflow(t, "run", "--root", root, "--state", t.TempDir(), outside)
	assert.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stderr, "is outside the workspace")

	res = imgflow(t, "run", "--no-such-flag")
	assert.Equal(t, 2, res.code, res.String())
}

func TestCommands(t *testing.T) {
	res := imgflow(t, "frobnicate")
	assert.Equal(t, 2, res.code)
	assert.Contains(t, res.stderr, `unknown command "frobnicate": run 'imgflow help' for the list of commands`)

	res = imgflow(t)
	assert.Equal(t, 2, res.code)
	assert.Contains(t, res.stderr, "Usage:")

	res = imgflow(t, "help")
	assert.Equal(t, 0, res.code)
	assert.Regexp(t, `(?m)^  run +run a workflow$`, res.stdout)

	res = imgflow(t, "version")
	assert.Equal(t, 0, res.code)
	assert.Regexp(t, `^imgflow \S+\n$`, res.stdout)
	assert.Empty(t, res.stderr)
}

func TestStateOfAnEmptyTarget(t *testing.T) {
	state := t.TempDir()
	res := imgflow(t, "state", "--state", state)
	require.Equal(t, 0, res.code, res.String())
	assert.Regexp(t, `^subscription `+guidRE+`\n  \(empty: run a workflow first\)\n$`, res.stdout)
	assertStateEmpty(t, state)
}

// A workflow that keeps allocating stops at its line with an error naming
// the limit, not with a Go runtime dump.
func TestRunStopsAtTheMemoryBudget(t *testing.T) {
	root := repoRoot(t)
	res := imgflow(t, "run", "--root", root, "--state", t.TempDir(), "--max-memory", "300MiB", filepath.Join(root, "testdata", "cli", "grow.star"))
	require.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stderr, "error: testdata/cli/grow.star:6:")
	assert.Contains(t, res.stderr, "memory budget exceeded")
	assert.Contains(t, res.stderr, "more than its limit of 300.0 MiB")

	res = imgflow(t, "run", "--root", root, "--state", t.TempDir(), "--max-memory", "lots", filepath.Join(root, "testdata", "cli", "grow.star"))
	require.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stderr, `--max-memory: invalid size "lots"`)
}

// A run refused before any change is listed as invalid, not as a failed
// run to resume; a torn journal is listed with the reason, and gc warns.
func TestRunsListsInvalidAndUnreadableRuns(t *testing.T) {
	state := t.TempDir()
	res := runParams(t, state, "--var", "name=x", "--var", "count=many")
	require.Equal(t, 1, res.code, res.String())
	require.NoError(t, os.WriteFile(filepath.Join(state, "runs", "20260101-000000-torn.jsonl"), []byte(`{"type":"ru`), 0o600))

	runs := imgflow(t, "runs", "--state", state)
	require.Equal(t, 0, runs.code, runs.String())
	assert.Regexp(t, `testdata/cli/params\.star\s+invalid\s+0`, runs.stdout)
	assert.NotContains(t, runs.stdout, "resumable")
	assert.Regexp(t, `20260101-000000-torn\s+-\s+not-started\s+0\s+-\s+no complete record.*run the workflow again`, runs.stdout)

	resume := imgflow(t, "run", "--root", repoRoot(t), "--state", state, "--resume", "20260101-000000-torn")
	require.Equal(t, 1, resume.code, resume.String())
	assert.Contains(t, resume.stderr, "run 20260101-000000-torn had not started")

	gc := imgflow(t, "gc", "--root", repoRoot(t), "--state", state, "--older-than", "0s")
	require.Equal(t, 0, gc.code, gc.String())
	assert.Contains(t, gc.stdout, "removed the journal of run 20260101-000000-torn, which had not started")
	assert.NoFileExists(t, filepath.Join(state, "runs", "20260101-000000-torn.jsonl"))
}
