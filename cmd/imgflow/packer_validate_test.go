package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/packer/packertest"
)

// packerWorkspace is a workspace whose workflow builds a template that
// imgflow's model accepts and packer rejects (its script does not exist).
func packerWorkspace(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	tpl := `{
  "builders": [{"type": "null", "communicator": "none"}],
  "provisioners": [{"type": "shell-local", "script": "{{user ` + "`script`" + `}}"}]
}`
	require.NoError(t, os.WriteFile(filepath.Join(root, "build.json"), []byte(tpl), 0o644))
	wf := "\"\"\"A build packer rejects.\"\"\"\n\nbuild = packer_build(\"build.json\", vars = {\"script\": \"/nonexistent/install.sh\"})\noutput(\"artifacts\", build.artifacts)\n"
	require.NoError(t, os.WriteFile(filepath.Join(root, "build.star"), []byte(wf), 0o644))
	return root
}

func TestPlanRunsPackerValidate(t *testing.T) {
	packertest.Require(t)
	root := packerWorkspace(t)
	res := imgflow(t, "plan", "--root", root, "--state", t.TempDir(), filepath.Join(root, "build.star"))
	require.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stderr, "build.star:3:21: packer validate build.json failed (exit status 1):")
	assert.Contains(t, res.stderr, "* Bad script '/nonexistent/install.sh'")
	assert.Contains(t, res.stderr, "change the template, or the vars, var_files or only of this packer_build")

	// Without packer validate the plan gets as far as the simulation.
	res = imgflow(t, "plan", "--root", root, "--state", t.TempDir(), "--no-packer-validate", filepath.Join(root, "build.star"))
	require.Equal(t, 1, res.code, res.String())
	assert.NotContains(t, res.stderr, "packer validate")
	assert.Contains(t, res.stderr, "the local target simulates only azure-arm builds")
}

func TestPlanWithoutPackerSkipsValidate(t *testing.T) {
	root := packerWorkspace(t)
	t.Setenv("PATH", t.TempDir())
	res := imgflow(t, "plan", "--root", root, "--state", t.TempDir(), filepath.Join(root, "build.star"))
	require.Equal(t, 1, res.code, res.String())
	assert.NotContains(t, res.stderr, "packer validate", "no packer, no validate, no complaint")
	assert.Contains(t, res.stderr, "the local target simulates only azure-arm builds")
}

func TestCheckRunsPackerValidate(t *testing.T) {
	packertest.Require(t)
	root := packerWorkspace(t)
	wf, err := os.ReadFile(filepath.Join(root, "build.star"))
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "workflows"), 0o755))
	rejected := filepath.Join(root, "workflows", "rejected.star")
	require.NoError(t, os.WriteFile(rejected, []byte(strings.Replace(string(wf), `"build.json"`, `"//build.json"`, 1)), 0o644))
	res := imgflow(t, "check", "--root", root, rejected)
	require.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stdout, "workflows/rejected.star:3:21: packer validate build.json failed (exit status 1):")
	assert.Contains(t, res.stdout, "* Bad script '/nonexistent/install.sh'")
	assert.NotContains(t, res.stdout, ": ok (")

	// Without packer validate the plan reaches the simulation, which runs
	// only azure-arm builds: the default plan fails, and check says so.
	res = imgflow(t, "check", "--root", root, "--no-packer-validate", rejected)
	require.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stdout, "workflows/rejected.star [default]: packer_build build.json: packer validate skipped: --no-packer-validate\n")
	assert.Contains(t, res.stdout, "workflows/rejected.star [default]: plan failed:\n")
	assert.Contains(t, res.stdout, "the local target simulates only azure-arm builds")

	// A param without default stops the default plan before packer_build:
	// check says so, naming the param, rather than passing in silence.
	needsVar := filepath.Join(root, "workflows", "needs_var.star")
	require.NoError(t, os.WriteFile(needsVar, []byte("\"\"\"Needs a var.\"\"\"\n\nscript = param(\"script\")\nbuild = packer_build(\"//build.json\", vars = {\"script\": script})\noutput(\"artifacts\", build.artifacts)\n"), 0o644))
	res = imgflow(t, "check", "--root", root, needsVar)
	require.Equal(t, 0, res.code, res.String())
	assert.Contains(t, res.stdout, "workflows/needs_var.star [default]: not planned: a param has no default\n")
	assert.Contains(t, res.stdout, `param "script" is required: pass --var script=<value>`)
	assert.Contains(t, res.stdout, "workflows/needs_var.star: ok (parsed, resolved, loads found, lint clean, no plan ran; nothing ran)\n")
}

func TestCheckValidatesTheRepositoryPackerBuilds(t *testing.T) {
	packertest.Require(t)
	root := repoRoot(t)
	res := imgflow(t, "check", "--root", root, filepath.Join(root, "workflows", "gen1.star"))
	require.Equal(t, 0, res.code, res.String())
	assert.Equal(t, "workflows/gen1.star [default]: packer_build artifacts/packer/vhd-marketplace.json: packer validate passed\n"+
		"workflows/gen1.star: ok (parsed, resolved, loads found, lint clean, planned with the defaults; nothing ran)\n", res.stdout)
}

// Without packer on PATH check still plans, and says packer validate was
// skipped and why.
func TestCheckSaysPackerValidateWasSkipped(t *testing.T) {
	root := repoRoot(t)
	bin := t.TempDir() // the tools the plan runs, without packer
	for _, tool := range []string{"make", "sh", "bash"} {
		if p, err := exec.LookPath(tool); err == nil {
			require.NoError(t, os.Symlink(p, filepath.Join(bin, tool)))
		}
	}
	t.Setenv("PATH", bin)
	res := imgflow(t, "check", "--root", root, filepath.Join(root, "workflows", "gen1.star"))
	require.Equal(t, 0, res.code, res.String())
	assert.Equal(t, "workflows/gen1.star [default]: packer_build artifacts/packer/vhd-marketplace.json: packer validate skipped: packer is not on PATH (make deps installs packer 1.9.5 in .tools/bin)\n"+
		"workflows/gen1.star: ok (parsed, resolved, loads found, lint clean, planned with the defaults; nothing ran)\n", res.stdout)
}
