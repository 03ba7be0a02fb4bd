package packer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/internal/testutil"
)

// fakePackerOnPath installs testdata's recording fake as "packer" first on
// PATH and returns the file its invocations are logged to.
func fakePackerOnPath(t *testing.T) string {
	t.Helper()
	script, err := filepath.Abs("../testdata/packer/hcl/fake-packer-init.sh")
	require.NoError(t, err)
	bin := t.TempDir()
	require.NoError(t, os.Symlink(script, filepath.Join(bin, "packer")))
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	log := filepath.Join(t.TempDir(), "log")
	t.Setenv("FAKE_PACKER_LOG", log)
	t.Setenv("HOME", t.TempDir())
	return log
}

func readLog(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

func cvmVars() map[string]string {
	return map[string]string{
		"subscription_id": "00000000-0000-0000-0000-000000000000", "sig_image_version": "1.2.3",
		"client_secret": secret, "replication_regions": `["westeurope"]`,
	}
}

func TestBuildRunsPackerInitForRequiredPlugins(t *testing.T) {
	log := fakePackerOnPath(t)
	out := &testutil.SyncBuffer{}
	r := &Runner{Stdout: out, Prefix: "[packer] "}
	tpl, err := filepath.Abs(cvmTemplate)
	require.NoError(t, err)

	res, err := r.Build(context.Background(), BuildRequest{TemplatePath: tpl, Vars: cvmVars(), Sensitive: []string{"client_secret"}})
	require.NoError(t, err)
	require.Len(t, res.Builds, 1)
	assert.Equal(t, "cvm.azure-arm.cvm", res.Builds[0].Name)

	lines := readLog(t, log)
	require.GreaterOrEqual(t, len(lines), 3)
	assert.Equal(t, "init "+tpl, lines[0], "packer init <template> runs first")
	assert.Regexp(t, `^build -machine-readable -var-file=\S+ `+tpl+`$`, lines[1])
	varFile := strings.Join(lines[3:], "\n")
	assert.Contains(t, varFile, `"replication_regions": [`, "a list variable is written as a JSON list: packer 1.9.5 refuses a string")
	assert.Contains(t, varFile, `"sig_image_version": "1.2.3"`)
	assert.Contains(t, out.String(), "[packer] packer init "+tpl)
	assert.Contains(t, out.String(), "[packer] Installed plugin github.com/hashicorp/azure v2.5.0")
	assertNoSecret(t, "output", out.String())
}

func TestBuildWithoutRequiredPluginsSkipsInit(t *testing.T) {
	log := fakePackerOnPath(t)
	tpl := filepath.Join(t.TempDir(), "null.pkr.hcl")
	require.NoError(t, os.WriteFile(tpl, []byte(`
source "null" "a" { communicator = "none" }
build { sources = ["source.null.a"] }
`), 0o644))
	_, err := (&Runner{}).Build(context.Background(), BuildRequest{TemplatePath: tpl})
	require.NoError(t, err)
	lines := readLog(t, log)
	require.Len(t, lines, 1)
	assert.Equal(t, "build -machine-readable "+tpl, lines[0])
}

func TestBuildFailsWhenPackerInitFails(t *testing.T) {
	log := fakePackerOnPath(t)
	t.Setenv("FAKE_PACKER_INIT_FAIL", "1")
	_, err := (&Runner{}).Build(context.Background(), BuildRequest{TemplatePath: cvmTemplate, Vars: cvmVars(), Sensitive: []string{"client_secret"}})
	require.Error(t, err)
	msg := err.Error()
	assert.Contains(t, msg, "cvm-sig.pkr.hcl failed (exit status 1) installing github.com/hashicorp/azure >= 2.5.0")
	assert.Contains(t, msg, "lookup api.github.com: no such host", "packer's own reason")
	lines := readLog(t, log)
	require.Len(t, lines, 1, "no build after a failed init")
	assert.True(t, strings.HasPrefix(lines[0], "init "))
}

func TestBuildRefusesUndeclaredHCL2VarsBeforePackerRuns(t *testing.T) {
	log := fakePackerOnPath(t)
	vars := cvmVars()
	vars["sig_image_verison"] = "1.2.4"
	_, err := (&Runner{}).Build(context.Background(), BuildRequest{TemplatePath: cvmTemplate, Vars: vars})
	var mv *MissingVariablesError
	require.ErrorAs(t, err, &mv)
	assert.Equal(t, []string{"sig_image_verison"}, mv.Names())
	assert.Nil(t, readLog(t, log), "packer never ran")

	delete(vars, "sig_image_verison")
	vars["replication_regions"] = "westeurope,eastus"
	_, err = (&Runner{}).Build(context.Background(), BuildRequest{TemplatePath: cvmTemplate, Vars: vars})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `variable replication_regions`)
	assert.Contains(t, err.Error(), `pass its value as JSON, e.g. ["a", "b"]`)
	assert.Nil(t, readLog(t, log), "packer never ran")
}
