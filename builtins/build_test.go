package builtins_test

import (
	"context"
	"encoding/json"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.starlark.net/starlark"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/builtins/faulthook"
	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/faults"
	"github.com/imgflow/imgflow/cloud/local"
	"github.com/imgflow/imgflow/cloud/overlay"
	"github.com/imgflow/imgflow/internal/localpacker"
	"github.com/imgflow/imgflow/interp"
	"github.com/imgflow/imgflow/journal"
	"github.com/imgflow/imgflow/vhd"
)

// The packer_build tests run testdata/build/*.star in the repository's
// workspace (they use artifacts/ and lib/) on an in-memory local cloud,
// through interp.Run: validation pass, then apply pass. The templates'
// os_disk_size_gb is 1 (GiB) to keep the simulated VHDs quick.

// printRecorder is a Reporter that keeps every printed line and step.
type printRecorder struct {
	mu    sync.Mutex
	lines []string
	steps []*builtins.Step
}

func (r *printRecorder) StepStarted(*builtins.Step) {}
func (r *printRecorder) StepFinished(s *builtins.Step) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.steps = append(r.steps, s)
}
func (r *printRecorder) Print(pos, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, pos+": "+msg)
}
func (r *printRecorder) text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.lines, "\n")
}

// buildFixture runs workflows of the repository against one fake cloud,
// journaling every run.
type buildFixture struct {
	t        *testing.T
	ws       *builtins.Workspace
	reg      *builtins.Registry
	cloud    *local.Provider
	apply    cloud.Provider
	rep      *printRecorder
	journals string
	runs     int
}

func newBuildFixture(t *testing.T) *buildFixture {
	t.Helper()
	return newBuildFixtureIn(t, "")
}

// newBuildFixtureIn is newBuildFixture with the target in subscription
// sub ("" a seeded random one).
func newBuildFixtureIn(t *testing.T, sub string) *buildFixture {
	t.Helper()
	ws, err := localpacker.NewWorkspace("..")
	require.NoError(t, err)
	p, err := local.NewMemory(local.Options{Rand: rand.New(rand.NewSource(1)), Now: func() time.Time { return snippetTime }, SubscriptionID: sub})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, p.Close()) })
	return &buildFixture{t: t, ws: ws, reg: builtins.NewRegistry(), cloud: p, apply: p, rep: &printRecorder{}, journals: t.TempDir()}
}

// run runs file with vars as a new run: validation pass, then apply pass.
func (f *buildFixture) run(file string, vars map[string]string) *interp.Result {
	f.t.Helper()
	f.runs++
	return f.runID(file, vars, "run-"+string(rune('a'+f.runs)), false, nil)
}

// runID runs (or resumes) the run id with faults in the apply pass.
func (f *buildFixture) runID(file string, vars map[string]string, id string, resume bool, injected map[string]faults.Fault) *interp.Result {
	f.t.Helper()
	var j *journal.File
	var err error
	if resume {
		j, err = journal.Open(f.journals, id)
	} else {
		rt := snippetTime
		j, err = journal.Create(f.journals, journal.Record{RunID: id, RunTime: &rt})
	}
	require.NoError(f.t, err)
	defer j.Close()
	values := map[string]starlark.Value{}
	for k, v := range vars {
		values[k] = starlark.String(v)
	}
	fs := faults.NewFaults(injected)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return interp.Run(ctx, "//"+file, interp.Config{
		Workspace: f.ws, Registry: f.reg, Vars: values, Reporter: f.rep, Journal: j, Hooks: faulthook.Hooks(fs),
		Info: builtins.RunInfo{ID: id, Time: snippetTime},
	}, interp.Target{Apply: faults.WithFaults(f.apply, fs), Validate: overlay.New(f.cloud)})
}

func (f *buildFixture) mustRun(file string, vars map[string]string) *interp.Result {
	f.t.Helper()
	res := f.run(file, vars)
	require.NoError(f.t, res.Err, "%s failed", file)
	return res
}

func (f *buildFixture) state() string {
	data, err := json.Marshal(f.cloud.Snapshot())
	require.NoError(f.t, err)
	return string(data)
}

// checkVHD reads a blob's footer and first sector: a fixed VHD of mib MiB
// with the simulation's marker.
func (f *buildFixture) checkVHD(url string, mib int64) {
	f.t.Helper()
	ref, err := cloud.ParseBlobURL(url)
	require.NoError(f.t, err)
	ctx := context.Background()
	b, err := f.cloud.GetBlob(ctx, ref)
	require.NoError(f.t, err)
	assert.Equal(f.t, cloud.BlobTypePage, b.Type)
	require.Equal(f.t, mib<<20+vhd.FooterSize, b.Size)
	footer, err := f.cloud.ReadBlob(ctx, ref, b.Size-vhd.FooterSize, vhd.FooterSize)
	require.NoError(f.t, err)
	ft, err := vhd.ParseFooter(footer)
	require.NoError(f.t, err)
	assert.Equal(f.t, vhd.DiskTypeFixed, ft.DiskType)
	assert.Equal(f.t, uint64(mib<<20), ft.CurrentSize)
	head, err := f.cloud.ReadBlob(ctx, ref, 0, 512)
	require.NoError(f.t, err)
	assert.Contains(f.t, string(head), "imgflow local packer build")
}

func outcomeOf(t *testing.T, res *interp.Result, builtin string) cloud.Outcome {
	t.Helper()
	return lastOutcome(t, res, builtin)
}

// Each artifacts template, on the local target: the right resources, and a
// rerun that finds them (outcome exists, state unchanged).
func TestPackerBuildLocalTargetMakesWhatAzureArmWould(t *testing.T) {
	cases := []struct {
		file  string
		check func(t *testing.T, f *buildFixture, out map[string]any)
	}{
		{"testdata/build/vhd_marketplace.star", func(t *testing.T, f *buildFixture, out map[string]any) {
			url, _ := out["vhd_url"].(string)
			assert.Regexp(t, `^https://aksvhds\.blob\.core\.windows\.net/system/Microsoft\.Compute/Images/aks-vhds/aks-osDisk\.[0-9a-f-]{36}\.vhd$`, url)
			f.checkVHD(url, 1024)
			assert.Nil(t, out["managed_image"])
			assert.Nil(t, out["sig_version"])
			assert.Equal(t, []any{url}, out["artifacts"])
		}},
		{"testdata/build/vhd_from_vhd.star", func(t *testing.T, f *buildFixture, out map[string]any) {
			url, _ := out["vhd_url"].(string)
			assert.Contains(t, url, "/system/Microsoft.Compute/Images/aks-vhds/aks-mariner-osDisk.")
			f.checkVHD(url, 1024)
			assert.Nil(t, out["managed_image"])
		}},
		{"testdata/build/sig_marketplace.star", func(t *testing.T, f *buildFixture, out map[string]any) {
			sub := f.cloud.SubscriptionID()
			assert.Equal(t, cloud.ManagedImageID(sub, "aks-build", "ubuntu2204-2026.1.2"), out["managed_image"])
			assert.Equal(t, "aks-build", out["resource_group"])
			assert.Equal(t, cloud.ImageVersionID(sub, "aks-build", "aksgallery", "ubuntu2204", "2026.1.2"), out["sig_version"])
			assert.Equal(t, []any{"westeurope", "northeurope"}, out["regions"], "sig_version is an image_version() that replicate() takes")
			assert.Nil(t, out["vhd_url"])
			rg := f.cloud.Snapshot().ResourceGroups["aks-build"]
			img := rg.Images["ubuntu2204-2026.1.2"]
			require.NotNil(t, img)
			assert.Equal(t, int64(1<<30), img.SizeBytes)
			assert.Equal(t, cloud.HyperVGenV2, img.HyperVGeneration)
			v := rg.Galleries["aksgallery"].Definitions["ubuntu2204"].Versions["2026.1.2"]
			require.NotNil(t, v)
			assert.Equal(t, cloud.ImageSource{Kind: cloud.SourceManagedImage, ID: img.ID}, v.Source)
			// The staged OS disk is gone; its (empty) account stays.
			for name, sa := range rg.StorageAccounts {
				if strings.HasPrefix(name, "pkr") {
					for _, c := range sa.Containers {
						assert.Empty(t, c.Blobs, "staged OS disk left in %s", name)
					}
				}
			}
		}},
		{"testdata/build/sig_from_gallery.star", func(t *testing.T, f *buildFixture, out map[string]any) {
			sub := f.cloud.SubscriptionID()
			assert.Equal(t, cloud.ImageVersionID(sub, "aks-build", "aksgallery", "ubuntu2204", "2026.1.2"), out["sig_version"])
			img := f.cloud.Snapshot().ResourceGroups["aks-build"].Images["ubuntu2204-2026.1.2"]
			require.NotNil(t, img)
			assert.Equal(t, int64(1<<30), img.SizeBytes, "os_disk_size_gb wins over the source's size")
		}},
		{"testdata/build/capi_sig.star", func(t *testing.T, f *buildFixture, out map[string]any) {
			sub := f.cloud.SubscriptionID()
			assert.Equal(t, cloud.ImageVersionID(sub, "flatcar-capi", "flatcar4capi_staging", "flatcar-stable-amd64-capi-v1.30.1", "4152.2.3"), out["sig_version"])
			assert.Equal(t, true, out["exclude_from_latest"])
			assert.Equal(t, "flatcar-stable-amd64-capi-v1.30.1-4152.2.3", out["managed_image"])
			img := f.cloud.Snapshot().ResourceGroups["flatcar-capi"].Images["flatcar-stable-amd64-capi-v1.30.1-4152.2.3"]
			require.NotNil(t, img)
			assert.Equal(t, "v1.30.1", img.Tags["kubernetes_version"], "var_files reach the template")
			assert.Equal(t, int64(4<<20), img.SizeBytes, "no os_disk_size_gb: the source version's size")
		}},
	}
	for _, tc := range cases {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			f := newBuildFixture(t)
			res := f.mustRun(tc.file, nil)
			assert.Equal(t, cloud.Created, outcomeOf(t, res, "packer_build"))
			tc.check(t, f, outputsOf(res))
			before := f.state()

			again := f.mustRun(tc.file, nil)
			assert.Equal(t, cloud.Exists, outcomeOf(t, again, "packer_build"), "a rerun reuses the build")
			assert.Equal(t, outputsOf(res), outputsOf(again))
			assert.JSONEq(t, before, f.state(), "a rerun changes nothing")
		})
	}
}

func TestPackerBuildUnsetVariablesFailBeforeAnythingIsCreated(t *testing.T) {
	f := newBuildFixture(t)
	res := f.run("testdata/build/missing_vars.star", nil)
	require.Error(t, res.Err)
	assert.Equal(t, "validate", res.Pass)
	msg := res.Err.Error()
	assert.Contains(t, msg, "testdata/build/missing_vars.star:5:21")
	assert.Contains(t, msg, "packer template artifacts/packer/sig-marketplace.json:")
	for _, name := range []string{"subscription_id", "imgflow_installs", "bcc_version", "managed_image_resource_group_name",
		"sig_resource_group_name", "sig_gallery_name", "sig_image_name", "sig_image_version"} {
		assert.Contains(t, msg, "\n  - "+name+": ", "missing variable %s is named", name)
	}
	assert.NotContains(t, msg, "  - location:")
	assert.NotContains(t, msg, "  - img_sku:", "it has a default")
	assert.NotContains(t, msg, "  - imgflow_files_dir:", "files=… sets it")
	assert.Empty(t, f.cloud.Snapshot().ResourceGroups, "nothing was created")
}

func TestPackerBuildRefusesMistakesBeforeAnythingIsCreated(t *testing.T) {
	cases := map[string][]string{
		"number_var":         {`vars["os_disk_size_gb"] is the int 30: packer takes only strings; quote it: "30"`, `vars["managed_image_resource_group_name"] is the bool True`, `quote it: "true"`},
		"missing_file":       {"files[", "testdata/build/nonexistent.sh does not exist in the workspace"},
		"no_definition":      {"shared_image_gallery_destination image ubuntu2204", "create it with image_definition() before packer_build"},
		"no_source_version":  {"source shared_image_gallery aksgallery/ubuntu2204/9.9.9"},
		"no_source_blob":     {"source image_url https://aksvhds.blob.core.windows.net/imports/missing.vhd", "does not exist"},
		"no_storage_account": {"storage_account nosuchaccount in resource group aks-build", "create it first"},
		"unknown_only":       {`only: "nope" matches no builder (builders: azure-arm)`},
		"files_unused":       {"files were given but the template never uses {{user `imgflow_files_dir`}}"},
		"plain_sensitive":    {`ua_token is a sensitive variable of the template: pass it as vars={"ua_token": secret("ua_token")}`},
		"env_in_vars":        {"imgflow_files_dir is set by packer_build from files=[…]; do not pass it"},
		"number_in_var_file": {"var_files: var-file testdata/build/number-vars.json: os_disk_size_gb is a number; packer accepts only strings (or null, read as \"\"): quote it"},
		"bad_env":            {`env["N"] is the int 1: environment variables are strings; quote it: "1"`, `env: key "1X" is not an environment variable name`, `env["FLAG"] is the bool True`, `quote it: "true"`, `env["L"] is a list`},
	}
	for name, wants := range cases {
		t.Run(name, func(t *testing.T) {
			f := newBuildFixture(t)
			res := f.run("testdata/build/errors.star", map[string]string{"case": name})
			require.Error(t, res.Err)
			assert.Equal(t, "validate", res.Pass)
			msg := res.Err.Error()
			assert.Contains(t, msg, "testdata/build/errors.star:")
			for _, w := range wants {
				assert.Contains(t, msg, w)
			}
			assert.NotContains(t, msg, "plain-token-value")
			assert.Empty(t, f.cloud.Snapshot().ResourceGroups, "nothing was created")
		})
	}
}

// A run that fails after packer_build resumes without rebuilding.
func TestPackerBuildIsJournaled(t *testing.T) {
	f := newBuildFixture(t)
	counter := &uploadCounter{Provider: f.cloud}
	f.apply = counter
	file := "testdata/build/sig_marketplace.star"
	res := f.runID(file, nil, "r1", false, map[string]faults.Fault{"replicate": {StatusCode: 500, Times: 1}})
	require.Error(t, res.Err)
	require.Equal(t, "apply", res.Pass)
	require.Equal(t, 1, counter.count())

	res = f.runID(file, nil, "r1", true, nil)
	require.NoError(t, res.Err)
	assert.Equal(t, cloud.Outcome("replayed"), outcomeOf(t, res, "packer_build"))
	assert.Equal(t, 1, counter.count(), "the resumed run did not rebuild")
	assert.Equal(t, []any{"westeurope", "northeurope"}, outputsOf(res)["regions"])
}

// uploadCounter counts page blob uploads (one per simulated build).
type uploadCounter struct {
	cloud.Provider
	mu sync.Mutex
	n  int
}

func (u *uploadCounter) UploadPageBlob(ctx context.Context, ref cloud.BlobRef, src cloud.PageSource, overwrite bool) (*cloud.Blob, error) {
	u.mu.Lock()
	u.n++
	u.mu.Unlock()
	return u.Provider.UploadPageBlob(ctx, ref, src, overwrite)
}

func (u *uploadCounter) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.n
}

// The build tools step: command() runs the Makefile target, streaming its
// output with a prefix; the validation pass only checks. It takes about 3 s
// once the Go build cache holds the standard library as -trimpath builds
// it (make deps builds the tools first); on a cold cache it compiles that
// too (25 s of CPU).
func TestCommandBuildsTheBuildTools(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Go binary")
	}
	f := newBuildFixture(t)
	out := t.TempDir()
	res := f.run("testdata/build/command.star", map[string]string{"out": out})
	require.NoError(t, res.Err)
	assert.Equal(t, cloud.Outcome("ran"), outcomeOf(t, res, "command"))
	st, err := os.Stat(filepath.Join(out, "lister-linux-amd64"))
	require.NoError(t, err)
	assert.NotZero(t, st.Mode().Perm()&0o100, "the tool is executable")
	assert.Contains(t, f.rep.text(), "testdata/build/command.star:5:16: [make] ")
	assert.Equal(t, int64(0), outputsOf(res)["exit_code"])
	// The validation pass ran nothing: one make run, whose output names OUT once.
	assert.Equal(t, 1, strings.Count(f.rep.text(), "go build"))
}

func TestPackerBuildDocumentsItsStruct(t *testing.T) {
	reg := builtins.NewRegistry()
	for _, name := range []string{"packer_build", "command", "stage_cse_modules", "secret"} {
		s, ok := reg.Lookup(name)
		require.True(t, ok, name)
		assert.NotEmpty(t, s.Doc)
	}
	s, _ := reg.Lookup("packer_build")
	assert.Equal(t, `packer_build(template, *, vars={}, env={}, files=[], plugins=[], var_files=[], only=[], cwd="//", generated={}, inputs={}, timeout="3h")`, s.Signature())
	s, _ = reg.Lookup("command")
	assert.Equal(t, `command(argv, *, cwd=".", env={}, timeout="30m")`, s.Signature())
}

// execReported runs src as main.star in a snippet sandbox with a reporter
// and, when id is set, a journal (resumed when resume is set).
func execReported(t *testing.T, s *snippetSandbox, src string, rep builtins.Reporter, journals, id string, resume bool, injected map[string]faults.Fault) *interp.Result {
	t.Helper()
	s.write("main.star", src)
	cfg := interp.Config{Workspace: s.ws, Registry: s.reg, Reporter: rep, Info: builtins.RunInfo{ID: "cmd", Time: snippetTime}}
	if id != "" {
		var j *journal.File
		var err error
		if resume {
			j, err = journal.Open(journals, id)
		} else {
			rt := snippetTime
			j, err = journal.Create(journals, journal.Record{RunID: id, RunTime: &rt})
		}
		require.NoError(t, err)
		defer j.Close()
		cfg.Journal = j
	}
	fs := faults.NewFaults(injected)
	cfg.Hooks = faulthook.Hooks(fs)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return interp.Run(ctx, "//main.star", cfg, interp.Target{Apply: faults.WithFaults(s.cloud, fs), Validate: overlay.New(s.cloud)})
}

func TestCommandStreamsOutputAndFailsWithItsTail(t *testing.T) {
	s := newSnippetSandbox(t)
	rep := &printRecorder{}
	res := execReported(t, s, `
r = command(["sh", "-c", "echo one; echo two >&2; echo three"])
output("r", r)
command(["sh", "-c", "echo four; echo five >&2; exit 3"])
`, rep, "", "", false, nil)
	require.Error(t, res.Err)
	msg := res.Err.Error()
	assert.Contains(t, msg, "main.star:4:8: command sh -c echo four; echo five >&2; exit 3 exited with status 3 (in .); last output:\n  four\n  five")
	assert.Equal(t, map[string]any{"exit_code": int64(0), "output": "one\ntwo\nthree\n"}, mustOutputs(t, res)["r"])
	text := rep.text()
	for _, want := range []string{"main.star:2:12: [sh] one", "main.star:2:12: [sh] two", "main.star:4:8: [sh] five"} {
		assert.Contains(t, text, want)
	}
	step := stepsOf(res, "command")[0]
	assert.Equal(t, []any{"sh", "-c", "echo one; echo two >&2; echo three"}, step.Args["argv"])
	assert.Equal(t, cloud.Outcome("ran"), step.Outcome)
}

func mustOutputs(t *testing.T, res *interp.Result) map[string]any {
	t.Helper()
	return outputsOf(res)
}

func TestCommandRunsOnlyInTheApplyPassAndOnceOnResume(t *testing.T) {
	s := newSnippetSandbox(t)
	journals := t.TempDir()
	src := `
command(["sh", "-c", "echo run >> count.txt"], cwd = "//")
resource_group("after-command", location = "westeurope")
`
	res := execReported(t, s, src, nil, journals, "r1", false, map[string]faults.Fault{"resource_group": {StatusCode: 500, Times: 1}})
	require.Error(t, res.Err)
	count := func() int {
		data, _ := os.ReadFile(filepath.Join(s.ws.Root, "count.txt"))
		return strings.Count(string(data), "run\n")
	}
	assert.Equal(t, 1, count(), "the validation pass ran nothing, the apply pass once")
	res = execReported(t, s, src, nil, journals, "r1", true, nil)
	require.NoError(t, res.Err)
	assert.Equal(t, 1, count(), "a resumed run replays the journaled command")
	assert.Equal(t, cloud.Outcome("replayed"), lastOutcome(t, res, "command"))
}

func TestCommandChecksProgramAndCwdBeforeAnythingRuns(t *testing.T) {
	sandbox := func() *snippetSandbox {
		s := newSnippetSandbox(t)
		s.write("tools/plain.sh", "#!/bin/sh\necho plain\n")
		s.write("tools/run.sh", "#!/bin/sh\necho ran in $(basename $(pwd))\n")
		require.NoError(t, os.Chmod(filepath.Join(s.ws.Root, "tools/run.sh"), 0o755))
		return s
	}
	for src, want := range map[string]string{
		`command(["no-such-program-imgflow"])`:    "no-such-program-imgflow is not on PATH",
		`command(["true"], cwd = "//missing")`:    "cwd missing is not a directory of the workspace",
		`command(["true"], cwd = "../")`:          "outside the workspace",
		`command(["//tools/plain.sh"])`:           "tools/plain.sh is not an executable file of the workspace",
		`command(["./nope.sh"], cwd = "//tools")`: "tools/nope.sh is not an executable file",
		`command([])`:                                    "argv is empty",
		`command(["true"], env = {"A": 1})`:              `env["A"] is a int: want a string or secret()`,
		`command(["true"], env = {"bad-key": "x"})`:      "env key \"bad-key\" is not a variable name",
		`command(["sleep", "5"], timeout = "200ms")`:     "timed out after 200ms",
		`command(["sh", "-c", "exit 0"], timeout = "x")`: "for parameter timeout",
	} {
		s := sandbox()
		res := s.exec(`resource_group("before", location = "westeurope")`+"\n"+src, nil)
		require.Error(t, res.Err, src)
		assert.Contains(t, res.Err.Error(), want, src)
		if !strings.Contains(src, "sleep") {
			assert.Equal(t, "validate", res.Pass, src)
			assert.Empty(t, s.cloud.Snapshot().ResourceGroups, "nothing created before: %s", src)
		}
	}
	rep := &printRecorder{}
	res := execReported(t, sandbox(), `command(["./run.sh"], cwd = "//tools")`, rep, "", "", false, nil)
	require.NoError(t, res.Err)
	assert.Contains(t, rep.text(), "[run.sh] ran in tools")
}

func TestCommandEnvTakesSecretsAndNeverInheritsThem(t *testing.T) {
	t.Setenv("IMGFLOW_SECRET_UA_TOKEN", secretValue)
	t.Setenv("IMGFLOW_AZURE_STORAGE_KEY", "a-storage-account-key")
	s := newSnippetSandbox(t)
	rep := &printRecorder{}
	res := execReported(t, s, `
r = command(["sh", "-c", "echo $GREETING token=$TOKEN; echo inherited=${IMGFLOW_SECRET_UA_TOKEN:-no} key=${IMGFLOW_AZURE_STORAGE_KEY:-no}"], env = {"GREETING": "hi", "TOKEN": secret("ua_token")})
output("out", r.output)
`, rep, t.TempDir(), "r", false, nil)
	require.NoError(t, res.Err)
	assert.Equal(t, "hi token=<secret>\ninherited=no key=no\n", outputsOf(res)["out"])
	data := jsonText(t, []any{res.Steps, rep.text()})
	assert.NotContains(t, data, secretValue)
	assert.Contains(t, data, "<secret ua_token>")
}

func TestCommandKeepsTheLast64KiB(t *testing.T) {
	s := newSnippetSandbox(t)
	res := s.mustRun(`
r = command(["sh", "-c", "i=0; while [ $i -lt 3000 ]; do echo line-$i-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa; i=$((i+1)); done"])
output("len", len(r.output))
output("tail", r.output[-60:])
`, nil)
	out := outputsOf(res)
	assert.LessOrEqual(t, out["len"], int64(64<<10))
	assert.Greater(t, out["len"], int64(60<<10))
	assert.Contains(t, out["tail"], "line-2999-")
}

// jsonText encodes v without HTML escaping, to search it for text.
func jsonText(t *testing.T, v any) string {
	t.Helper()
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(v))
	return b.String()
}
