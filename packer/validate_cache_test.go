//go:build unix

package packer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/imgflow/imgflow/internal/cachetrim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cacheFixture is a template of its own (so that tests can change it), a
// fake packer that counts its runs, and a cache in a temporary directory.
type cacheFixture struct {
	t      *testing.T
	dir    string // the working directory: template, script, var-file
	calls  string // one line per packer run
	runner *Runner
	cache  *ValidateCache
}

const cacheTemplate = `{
  "variables": {"client_secret": null, "subscription_id": null, "storage_account_name": null, "os_sku": "ubuntu", "build_id": ""},
  "sensitive-variables": ["client_secret"],
  "builders": [{"type": "azure-arm", "subscription_id": "{{user ` + "`subscription_id`" + `}}",
    "storage_account": "{{user ` + "`storage_account_name`" + `}}", "os_type": "Linux"}],
  "provisioners": [{"type": "shell", "script": "{{template_dir}}/setup.sh"}]
}`

func newCacheFixture(t *testing.T, mode string, env ...string) *cacheFixture {
	t.Helper()
	f := &cacheFixture{t: t, dir: t.TempDir()}
	f.write("template.json", cacheTemplate)
	f.write("setup.sh", "echo setup\n")
	f.write("vars.json", `{"storage_account_name": "fromfile"}`)
	fake, err := filepath.Abs(fakePacker)
	require.NoError(t, err)
	bin := t.TempDir()
	f.calls = filepath.Join(bin, "calls")
	wrapper := filepath.Join(bin, "packer")
	require.NoError(t, os.WriteFile(wrapper, []byte("#!/bin/sh\necho \"$1\" >>'"+f.calls+"'\nexec '"+fake+"' \"$@\"\n"), 0o755))
	f.runner = &Runner{Binary: wrapper, Env: append([]string{"FAKE_PACKER_MODE=" + mode}, env...)}
	f.cache, err = OpenValidateCache(filepath.Join(t.TempDir(), "cache"), nil)
	require.NoError(t, err)
	return f
}

func (f *cacheFixture) write(name, body string) {
	f.t.Helper()
	require.NoError(f.t, os.WriteFile(filepath.Join(f.dir, name), []byte(body), 0o644))
}

func (f *cacheFixture) request() BuildRequest {
	return BuildRequest{TemplatePath: "template.json", WorkDir: f.dir, Vars: map[string]string{
		"client_secret": secret, "subscription_id": "00000000-0000-0000-0000-000000000000",
	}, VarFiles: []string{"vars.json"}, Env: map[string]string{"BUILD_REASON": "manual"}}
}

// runs is how many times packer ran so far.
func (f *cacheFixture) runs() int {
	data, err := os.ReadFile(f.calls)
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(f.t, err)
	return strings.Count(string(data), "validate\n")
}

// validate validates req through the cache and returns whether packer ran.
func (f *cacheFixture) validate(req BuildRequest) (bool, error) {
	return f.cache.Validate(context.Background(), f.runner, req, nil, nil)
}

func TestValidateCacheHitDoesNotRunPacker(t *testing.T) {
	f := newCacheFixture(t, "vhd")
	ran, err := f.validate(f.request())
	require.NoError(t, err)
	assert.True(t, ran)
	assert.Equal(t, 1, f.runs())

	// A new cache object on the same directory: another process.
	again, err := OpenValidateCache(f.cache.Dir(), nil)
	require.NoError(t, err)
	ran, err = again.Validate(context.Background(), f.runner, f.request(), nil, nil)
	require.NoError(t, err)
	assert.False(t, ran, "the verdict comes from the cache")
	assert.Equal(t, 1, f.runs(), "packer ran once")
}

func TestValidateCacheChangedInputsRunPackerAgain(t *testing.T) {
	f := newCacheFixture(t, "vhd")
	_, err := f.validate(f.request())
	require.NoError(t, err)
	changes := []struct {
		name   string
		change func(req *BuildRequest)
	}{
		{"a var value", func(req *BuildRequest) { req.Vars["subscription_id"] = "11111111-1111-1111-1111-111111111111" }},
		{"a secret var value", func(req *BuildRequest) { req.Vars["client_secret"] = secret + "x" }},
		{"the template", func(*BuildRequest) {
			f.write("template.json", strings.Replace(cacheTemplate, `"Linux"`, `"Windows"`, 1))
		}},
		{"a var-file", func(*BuildRequest) { f.write("vars.json", `{"storage_account_name": "other"}`) }},
		{"the script the template names", func(*BuildRequest) { f.write("setup.sh", "echo changed\n") }},
		{"an env value", func(req *BuildRequest) { req.Env["BUILD_REASON"] = "schedule" }},
		{"-only", func(req *BuildRequest) { req.Only = []string{"azure-arm"} }},
	}
	for i, c := range changes {
		req := f.request()
		c.change(&req)
		ran, err := f.validate(req)
		require.NoError(t, err, c.name)
		assert.True(t, ran, "changing %s runs packer", c.name)
		assert.Equal(t, i+2, f.runs(), c.name)
		ran, err = f.validate(req)
		require.NoError(t, err, c.name)
		assert.False(t, ran, "the same inputs again after changing %s", c.name)
	}

	// The script the template names, gone: packer would say so.
	require.NoError(t, os.Remove(filepath.Join(f.dir, "setup.sh")))
	ran, err := f.validate(f.request())
	require.NoError(t, err)
	assert.True(t, ran, "a file the template names that disappears runs packer")
}

func TestValidateCacheKeepsFailuresWithoutSecrets(t *testing.T) {
	const envSecret = "EnvS3cret-Token-q8w7e6r5"
	f := newCacheFixture(t, "fail", "FAKE_PACKER_ECHO_VAR=client_secret")
	req := f.request()
	req.Env["ARM_TOKEN"] = envSecret
	req.SensitiveEnv = []string{"ARM_TOKEN"}
	_, first := f.validate(req)
	var ve *ValidateError
	require.ErrorAs(t, first, &ve)
	require.Contains(t, first.Error(), "Bad script '/scripts/<sensitive>.sh'", "packer's line, redacted")

	ran, cached := f.validate(req)
	assert.False(t, ran)
	require.ErrorAs(t, cached, &ve, "a stored failure is the failure")
	assert.Equal(t, first.Error(), cached.Error())
	assert.Equal(t, 1, f.runs())

	entries, err := os.ReadDir(f.cache.Dir())
	require.NoError(t, err)
	require.Len(t, entries, 2, "the key and one verdict")
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(f.cache.Dir(), e.Name()))
		require.NoError(t, err)
		for _, s := range []string{secret, envSecret} {
			assert.NotContains(t, string(data), s[:8], "a secret's prefix is in %s", e.Name())
			assert.NotContains(t, e.Name(), s[:8])
		}
	}
}

func TestValidateCacheDoesNotKeepCancelledRuns(t *testing.T) {
	f := newCacheFixture(t, "vhd")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := f.cache.Validate(ctx, f.runner, f.request(), nil, nil)
	require.Error(t, err)
	ran, err := f.validate(f.request())
	require.NoError(t, err)
	assert.True(t, ran, "a cancelled validation says nothing about the build")
}

func TestValidateCacheStableDirectoriesCountByIdentity(t *testing.T) {
	f := newCacheFixture(t, "vhd")
	staged := func() (BuildRequest, map[string]string) {
		dir := t.TempDir()
		req := f.request()
		req.Vars["build_id"] = dir
		return req, map[string]string{dir: "(staged abc)"}
	}
	req, stable := staged()
	ran, err := f.cache.Validate(context.Background(), f.runner, req, stable, nil)
	require.NoError(t, err)
	require.True(t, ran)
	req, stable = staged()
	ran, err = f.cache.Validate(context.Background(), f.runner, req, stable, nil)
	require.NoError(t, err)
	assert.False(t, ran, "another directory of the same identity is the same input")
}

func TestValidateCacheRunNamesCountAsTheirShape(t *testing.T) {
	f := newCacheFixture(t, "vhd")
	version := func(ts string) BuildRequest {
		req := f.request()
		req.Vars["build_id"] = "1." + ts + ".3"
		return req
	}
	ran, err := f.cache.Validate(context.Background(), f.runner, version("1796528090"), nil, []string{"run-a", "1796528090"})
	require.NoError(t, err)
	require.True(t, ran)
	ran, err = f.cache.Validate(context.Background(), f.runner, version("1796528099"), nil, []string{"run-b", "1796528099"})
	require.NoError(t, err)
	assert.False(t, ran, "another run's timestamp in a value is the same input")
	ran, err = f.cache.Validate(context.Background(), f.runner, version("1796528099"), nil, []string{"run-c", "1796528100"})
	require.NoError(t, err)
	assert.True(t, ran, "a value that is not the run's own counts as itself")
}

// A verdict read from the cache, and the cache's key, are marked used, so
// that the cache's daily trim (cachetrim) keeps what plans still read:
// losing the key would lose every verdict with it.
func TestValidateCacheMarksWhatItReadsUsed(t *testing.T) {
	f := newCacheFixture(t, "vhd")
	_, err := f.validate(f.request())
	require.NoError(t, err)
	files, err := filepath.Glob(filepath.Join(f.cache.Dir(), "*"))
	require.NoError(t, err)
	require.Len(t, files, 2, "the key and one verdict")
	long := time.Now().Add(-cachetrim.MaxAge)
	for _, name := range files {
		require.NoError(t, os.Chtimes(name, long, long))
	}

	again, err := OpenValidateCache(f.cache.Dir(), nil)
	require.NoError(t, err)
	ran, err := again.Validate(context.Background(), f.runner, f.request(), nil, nil)
	require.NoError(t, err)
	require.False(t, ran, "the verdict comes from the cache")
	for _, name := range files {
		info, err := os.Stat(name)
		require.NoError(t, err)
		assert.WithinDuration(t, time.Now(), info.ModTime(), time.Minute, filepath.Base(name))
	}
}

// The sum of a large file a template names is kept in the sums cache, so
// that the next process's key takes it from there instead of reading the
// file again: shown by planting another sum, which changes the key.
func TestValidateCacheKeepsLargeFilesSumsForTheNextProcess(t *testing.T) {
	f := newCacheFixture(t, "vhd")
	f.write("setup.sh", "echo setup\n"+strings.Repeat("# padding\n", 10_000)) // 100 kB
	sumsDir := filepath.Join(t.TempDir(), "sums")
	process := func() bool {
		cache, err := OpenValidateCache(f.cache.Dir(), OpenSumCache(sumsDir))
		require.NoError(t, err)
		ran, err := cache.Validate(context.Background(), f.runner, f.request(), nil, nil)
		require.NoError(t, err)
		return ran
	}
	require.True(t, process())
	kept, err := os.ReadDir(sumsDir)
	require.NoError(t, err)
	require.Len(t, kept, 1, "the large script's sum; the template's and var-file's are small")
	assert.False(t, process(), "the same inputs: the verdict is found")

	require.NoError(t, os.WriteFile(filepath.Join(sumsDir, kept[0].Name()), make([]byte, 32), 0o600))
	assert.True(t, process(), "the kept sum, not the file, went into the key")
	assert.Equal(t, 2, f.runs())
}

// imgflow's own settings (a profile, the cache directory) are not packer's
// environment, so they do not change the key: profiling a plan finds the
// verdicts the plans before it stored.
func TestValidateCacheIgnoresImgflowsOwnVariables(t *testing.T) {
	f := newCacheFixture(t, "vhd")
	ran, err := f.validate(f.request())
	require.NoError(t, err)
	require.True(t, ran)
	t.Setenv("IMGFLOW_CPUPROFILE", filepath.Join(t.TempDir(), "cpu.prof"))
	ran, err = f.validate(f.request())
	require.NoError(t, err)
	assert.False(t, ran)
	t.Setenv("SOMETHING_PACKER_MAY_READ", "1")
	ran, err = f.validate(f.request())
	require.NoError(t, err)
	assert.True(t, ran, "any other variable is packer's and counts")
}
