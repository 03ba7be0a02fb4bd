//go:build unix

package packer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/internal/testutil"
)

const fakePacker = "../testdata/packer/fake-packer.sh"

// secret is passed as a sensitive variable; no test output may contain it.
const secret = "Sup3r-S3cret-Value-7d1f"

type fake struct {
	runner  *Runner
	out     *testutil.SyncBuffer
	argv    string
	pidFile string
}

func newFake(t *testing.T, mode string, env ...string) *fake {
	t.Helper()
	bin, err := filepath.Abs(fakePacker)
	require.NoError(t, err)
	dir := t.TempDir()
	f := &fake{out: &testutil.SyncBuffer{}, argv: filepath.Join(dir, "argv"), pidFile: filepath.Join(dir, "pids")}
	f.runner = &Runner{
		Binary: bin,
		Stdout: f.out,
		Prefix: "[packer] ",
		Env: append([]string{
			"FAKE_PACKER_MODE=" + mode,
			"FAKE_PACKER_ARGV_FILE=" + f.argv,
			"FAKE_PACKER_PID_FILE=" + f.pidFile,
		}, env...),
	}
	return f
}

func (f *fake) args(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(f.argv)
	require.NoError(t, err)
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

func azureVars() map[string]string {
	return map[string]string{
		"client_secret": secret, "subscription_id": "00000000-0000-0000-0000-000000000000",
		"storage_account_name": "imgflowvhds", "os_sku": "ubuntu", "build_id": "42",
	}
}

func assertNoSecret(t *testing.T, where string, s string) {
	t.Helper()
	assert.NotContains(t, s, secret, "secret leaked into %s", where)
	assert.NotContains(t, s, "Zm9vYmFyYmF6cXV4", "SAS signature leaked into %s", where)
}

func TestBuildFakeVHD(t *testing.T) {
	f := newFake(t, "vhd", "FAKE_PACKER_ECHO_VAR=client_secret")
	runDir := t.TempDir()
	res, err := f.runner.Build(context.Background(), BuildRequest{
		TemplatePath: azureVHDTemplate, Vars: azureVars(), Only: []string{"azure-arm"}, TempDir: runDir,
	})
	require.NoError(t, err)

	vhd := "https://imgflowvhds.blob.core.windows.net/system/Microsoft.Compute/Images/aks-vhds/aks-osDisk.5e8f1c2a-1b2c-4d5e-8f90-123456789abc.vhd"
	assert.Equal(t, vhd, res.OSDiskVHDURL)
	assert.Empty(t, res.ManagedImageID)
	require.Len(t, res.Builds, 1)
	assert.Equal(t, "packer-Resource-Group-k3v9x2m1qa", res.Builds[0].BuildResourceGroup)
	require.Len(t, res.Builds[0].Artifacts, 1)
	a := res.Builds[0].Artifacts[0]
	assert.Equal(t, AzureARMBuilderID, a.BuilderID)
	require.NotNil(t, a.Azure)
	assert.Equal(t, "westus2", a.Azure.StorageAccountLocation)
	assert.Contains(t, a.Azure.OSDiskURIReadOnlySAS, "?<redacted>")

	out := f.out.String()
	assert.Contains(t, out, "[packer] ==> azure-arm: Creating resource group ...\n")
	assert.Contains(t, out, "[packer]     azure-arm: Reading package lists... Done, 3 upgraded, 0 newly installed\n")
	assert.Contains(t, out, "[packer]     azure-arm: token=<sensitive>\n", "the fake echoed the secret; it must be masked")
	assert.Contains(t, out, "[packer] OSDiskUriReadOnlySas: "+vhd+"?<redacted>\n")
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		assert.True(t, strings.HasPrefix(line, "[packer] "), "unprefixed line %q", line)
	}
	assertNoSecret(t, "stdout", out)
	assertNoSecret(t, "result", fmt.Sprintf("%+v", res))

	args := f.args(t)
	assertNoSecret(t, "argv", strings.Join(args, " "))
	assert.Equal(t, "build", args[0])
	assert.Contains(t, args, "-machine-readable")
	assert.Contains(t, args, "-only=azure-arm")
	var varFile string
	for _, a := range args {
		if strings.HasPrefix(a, "varfile-mode ") {
			fields := strings.Fields(a)
			varFile = fields[1]
			assert.Equal(t, "600", fields[2], "var-file mode while packer runs")
		}
	}
	require.NotEmpty(t, varFile)
	assert.Contains(t, args, "-var-file="+varFile)
	assert.NoFileExists(t, varFile, "var-file removed after the build")
	assert.True(t, strings.HasPrefix(varFile, runDir+string(filepath.Separator)), "the var-file %s is in the run's temporary dir %s, which gc removes after a kill", varFile, runDir)
	entries, err := os.ReadDir(runDir)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing left in the run's dir")
	tplAbs, _ := filepath.Abs(azureVHDTemplate)
	last := len(args) - 1
	for strings.HasPrefix(args[last], "varfile-mode ") {
		last--
	}
	assert.Equal(t, tplAbs, args[last], "template is the last packer argument")
}

func TestBuildFakeManagedImageAndGallery(t *testing.T) {
	img := "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/aks-images/providers/Microsoft.Compute/images/aks-ubuntu-2204-2021.01.01"
	ver := "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/aks-galleries/providers/Microsoft.Compute/galleries/aksgallery/images/ubuntu2204/versions/2021.01.01"

	f := newFake(t, "managed")
	res, err := f.runner.Build(context.Background(), BuildRequest{TemplatePath: azureVHDTemplate, Vars: azureVars()})
	require.NoError(t, err)
	assert.Equal(t, img, res.ManagedImageID)
	assert.Equal(t, "aks-images", res.ResourceGroup)
	assert.Empty(t, res.GalleryImageVersionID)
	assert.Empty(t, res.OSDiskVHDURL)
	assert.NotContains(t, strings.Join(f.args(t), " "), "-only", "no -only unless asked")

	f = newFake(t, "sig")
	res, err = f.runner.Build(context.Background(), BuildRequest{TemplatePath: azureVHDTemplate, Vars: azureVars()})
	require.NoError(t, err)
	assert.Equal(t, img, res.ManagedImageID)
	assert.Equal(t, ver, res.GalleryImageVersionID)
	assert.Equal(t, "aks-images", res.ResourceGroup)
	require.NotNil(t, res.Builds[0].Artifacts[0].Azure)
	assert.Equal(t, "westus2, eastus", res.Builds[0].Artifacts[0].Azure.Extra["SharedImageGalleryReplicatedRegions"])
}

func TestBuildFakeFailureReturnsPackerErrors(t *testing.T) {
	f := newFake(t, "fail")
	res, err := f.runner.Build(context.Background(), BuildRequest{TemplatePath: azureVHDTemplate, Vars: azureVars()})
	require.Error(t, err)
	var be *BuildError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, 1, be.ExitCode)
	assert.False(t, be.Cancelled)
	assert.Contains(t, err.Error(), "failed (exit status 1)")
	assert.Contains(t, err.Error(), "Build 'azure-arm' errored after 3 minutes 1 second: Script exited with non-zero exit status: 100")
	assert.Contains(t, err.Error(), "--> azure-arm: Script exited with non-zero exit status: 100")
	require.NotNil(t, res, "a failed build still reports what it saw")
	require.Len(t, res.Builds, 1)
	assert.Equal(t, "packer-Resource-Group-k3v9x2m1qa", res.Builds[0].BuildResourceGroup)
	assertNoSecret(t, "error", err.Error())
}

func TestBuildChecksBeforeStartingPacker(t *testing.T) {
	f := newFake(t, "vhd")
	_, err := f.runner.Build(context.Background(), BuildRequest{
		TemplatePath: azureVHDTemplate, Vars: map[string]string{"client_secret": secret},
	})
	var mv *MissingVariablesError
	require.ErrorAs(t, err, &mv)
	assert.Equal(t, []string{"storage_account_name", "subscription_id"}, mv.Names())
	assertNoSecret(t, "error", err.Error())
	assert.NoFileExists(t, f.argv, "packer must not have started")

	_, err = f.runner.Build(context.Background(), BuildRequest{TemplatePath: azureVHDTemplate, Vars: azureVars(), Only: []string{"azure"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `-only "azure" matches no builder (builders: azure-arm)`)
	assert.NoFileExists(t, f.argv)

	_, err = f.runner.Build(context.Background(), BuildRequest{TemplatePath: "missing.json"})
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestBuildVarFilesComeBeforeVars(t *testing.T) {
	dir := t.TempDir()
	vf := filepath.Join(dir, "settings.json")
	require.NoError(t, os.WriteFile(vf, []byte(`{"storage_account_name": "fromfile", "os_sku": "ubuntu", "build_id": "1", "subscription_id": "s"}`), 0o600))

	f := newFake(t, "vhd")
	f.runner.Stdout = nil
	_, err := f.runner.Build(context.Background(), BuildRequest{
		TemplatePath: "azure-vhd.json", WorkDir: "../testdata/packer",
		VarFiles: []string{vf}, Vars: map[string]string{"client_secret": secret},
	})
	require.NoError(t, err, "values from var-files count for the variable check")
	var files []string
	for _, a := range f.args(t) {
		if p, ok := strings.CutPrefix(a, "-var-file="); ok {
			files = append(files, p)
		}
	}
	require.Len(t, files, 2)
	assert.Equal(t, vf, files[0], "caller's var-files first, so Vars win")

	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"n": 5}`), 0o600))
	_, err = f.runner.Build(context.Background(), BuildRequest{TemplatePath: azureVHDTemplate, VarFiles: []string{bad}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "accepts only strings")
}

func readPIDs(t *testing.T, path string) []int {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var pids []int
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		fields := strings.Fields(line)
		require.Len(t, fields, 2)
		pid, err := strconv.Atoi(fields[1])
		require.NoError(t, err)
		pids = append(pids, pid)
	}
	return pids
}

// processGone reports whether pid no longer runs (zombies count as gone:
// an orphan is reaped by init, which may be slow in a container).
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(data, ')')
	fields := strings.Fields(string(data[i+1:]))
	return len(fields) == 0 || fields[0] == "Z" || fields[0] == "X"
}

// startAndCancel starts a hanging build, cancels it once the fake wrote its
// pids, and returns the error, the time Build took after cancel, and the pids.
func startAndCancel(t *testing.T, f *fake) (error, time.Duration, []int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type ret struct {
		err error
		at  time.Time
	}
	done := make(chan ret, 1)
	go func() {
		_, err := f.runner.Build(ctx, BuildRequest{TemplatePath: azureVHDTemplate, Vars: azureVars()})
		done <- ret{err, time.Now()}
	}()
	require.Eventually(t, func() bool {
		data, err := os.ReadFile(f.pidFile)
		return err == nil && strings.Count(string(data), "\n") == 2
	}, 10*time.Second, 20*time.Millisecond, "fake packer did not start")
	pids := readPIDs(t, f.pidFile)
	cancelled := time.Now()
	cancel()
	select {
	case r := <-done:
		return r.err, r.at.Sub(cancelled), pids
	case <-time.After(60 * time.Second):
		t.Fatal("Build did not return after cancellation")
		return nil, 0, nil
	}
}

func TestBuildCancelSendsSIGINT(t *testing.T) {
	f := newFake(t, "hang")
	f.runner.KillGrace = 30 * time.Second
	err, took, pids := startAndCancel(t, f)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	var be *BuildError
	require.ErrorAs(t, err, &be)
	assert.True(t, be.Cancelled)
	assert.Contains(t, err.Error(), "cancelled")
	assert.Contains(t, err.Error(), "Cancelling build after receiving interrupt", "packer's reaction to SIGINT is reported")
	// Not a timing test: packer ended on the interrupt, not killed.
	assert.NotEqual(t, -1, be.ExitCode, "packer exited by itself; it was not killed after KillGrace")
	assert.Less(t, took, f.runner.KillGrace, "SIGINT alone stops a cooperative packer, before KillGrace")
	for _, pid := range pids {
		assert.Eventually(t, func() bool { return processGone(pid) }, 15*time.Second, 20*time.Millisecond, "pid %d still running", pid)
	}
	assert.Contains(t, f.out.String(), "[packer] Cancelling build after receiving interrupt\n")
}

func TestBuildCancelKillsAfterGrace(t *testing.T) {
	f := newFake(t, "hang-ignore-int")
	f.runner.KillGrace = 400 * time.Millisecond
	err, took, pids := startAndCancel(t, f)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	assert.GreaterOrEqual(t, took, 400*time.Millisecond, "SIGKILL only after KillGrace")
	assert.Less(t, took, f.runner.KillGrace+30*time.Second, "killed soon after KillGrace, not left running")
	var be *BuildError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, -1, be.ExitCode, "killed by a signal")
	for _, pid := range pids {
		assert.Eventually(t, func() bool { return processGone(pid) }, 15*time.Second, 20*time.Millisecond,
			"pid %d survived: the whole process group must be killed", pid)
	}
}

func TestBuildAlreadyCancelled(t *testing.T) {
	f := newFake(t, "vhd")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := f.runner.Build(ctx, BuildRequest{TemplatePath: azureVHDTemplate, Vars: azureVars()})
	assert.ErrorIs(t, err, context.Canceled)
	assert.NoFileExists(t, f.argv)
}

func TestBinaryMissing(t *testing.T) {
	r := &Runner{Binary: filepath.Join(t.TempDir(), "no-packer")}
	_, err := r.Build(context.Background(), BuildRequest{TemplatePath: azureVHDTemplate, Vars: azureVars()})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "make deps")
	_, err = r.Version(context.Background())
	assert.Contains(t, err.Error(), "not found")
}

func TestVersionFake(t *testing.T) {
	f := newFake(t, "vhd")
	v, err := f.runner.Version(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "1.9.5", v)
	assert.Empty(t, f.out.String(), "version prints nothing")
}

func TestWriteVarFile(t *testing.T) {
	path, stop, err := writeVarFile(map[string]string{"b": secret, "a": "x,y\n\"z\""}, "")
	require.NoError(t, err)
	defer stop()
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	got, err := ReadVarFile(path)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"b": secret, "a": "x,y\n\"z\""}, got)
}

func TestBuildPassesEnvAfterRunnerEnvAndRedactsSecretEnv(t *testing.T) {
	f := newFake(t, "vhd", "FAKE_PACKER_ECHO_ENV=PACKER_BUILD_LOCATION UA_TOKEN", "PACKER_BUILD_LOCATION=from-runner")
	res, err := f.runner.Build(context.Background(), BuildRequest{
		TemplatePath: azureVHDTemplate, Vars: azureVars(),
		Env:          map[string]string{"PACKER_BUILD_LOCATION": "westeurope", "UA_TOKEN": secret},
		SensitiveEnv: []string{"UA_TOKEN"},
	})
	require.NoError(t, err)
	out := f.out.String()
	assert.Contains(t, out, "azure-arm: env PACKER_BUILD_LOCATION=westeurope\n", "the request's env wins over Runner.Env")
	assert.Contains(t, out, "azure-arm: env UA_TOKEN=<sensitive>\n")
	assertNoSecret(t, "stdout", out)
	assertNoSecret(t, "result", fmt.Sprintf("%+v", res))
	assertNoSecret(t, "argv", strings.Join(f.args(t), " "))
}

func TestBuildOnlySelectsRenderedBuildNames(t *testing.T) {
	dir := t.TempDir()
	tpl := filepath.Join(dir, "t.json")
	require.NoError(t, os.WriteFile(tpl, []byte(`{
	  "variables": {"build_name": null, "suffix": "{{env `+"`NAME_SUFFIX`"+`}}"},
	  "builders": [{"type": "azure-arm", "name": "sig-{{user `+"`build_name`"+`}}{{user `+"`suffix`"+`}}"}]
	}`), 0o644))
	f := newFake(t, "vhd")
	req := BuildRequest{TemplatePath: tpl, Vars: map[string]string{"build_name": "flatcar-gen2"}, Only: []string{"sig-flatcar-gen2"}}
	_, err := f.runner.Build(context.Background(), req)
	require.NoError(t, err, "packer renders build names before matching -only")
	assert.Contains(t, f.args(t), "-only=sig-flatcar-gen2")

	req.Only = []string{"sig-{{user `build_name`}}"}
	_, err = f.runner.Build(context.Background(), req)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-only \"sig-{{user `build_name`}}\" matches no builder (builders: sig-flatcar-gen2)")

	req.Only, req.Env = []string{"sig-flatcar-gen2-x"}, map[string]string{"NAME_SUFFIX": "-x"}
	_, err = f.runner.Build(context.Background(), req)
	require.NoError(t, err, "names render from the environment packer gets")
}

func TestReadVarFileReadsNullAsEmpty(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cni.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"kubernetes_cni_deb_version": null, "kubernetes_cni_semver": "v1.2.0"}`), 0o600))
	got, err := ReadVarFile(path)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"kubernetes_cni_deb_version": "", "kubernetes_cni_semver": "v1.2.0"}, got)

	require.NoError(t, os.WriteFile(path, []byte(`{"a": 5, "b": true, "c": "ok"}`), 0o600))
	_, err = ReadVarFile(path)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "a is a number; packer accepts only strings")
	assert.Contains(t, err.Error(), "b is a boolean")
}

// imgflow's own secret() variables never reach packer's environment: a
// workflow passes a secret to packer through vars or env, or not at all.
func TestBuildDoesNotPassImgflowSecretsToPacker(t *testing.T) {
	t.Setenv("IMGFLOW_SECRET_UA_TOKEN", secret)
	t.Setenv("IMGFLOW_AZURE_STORAGE_KEY", "a-storage-account-key")
	f := newFake(t, "vhd", "FAKE_PACKER_ECHO_ENV=IMGFLOW_SECRET_UA_TOKEN IMGFLOW_AZURE_STORAGE_KEY")
	_, err := f.runner.Build(context.Background(), BuildRequest{TemplatePath: azureVHDTemplate, Vars: azureVars()})
	require.NoError(t, err)
	assert.Contains(t, f.out.String(), "azure-arm: env IMGFLOW_SECRET_UA_TOKEN=\n", "packer sees the variable unset")
	assert.Contains(t, f.out.String(), "azure-arm: env IMGFLOW_AZURE_STORAGE_KEY=\n", "imgflow's own settings stay imgflow's")
	assertNoSecret(t, "stdout", f.out.String())
}
