package main

import (
	"os"
	"path/filepath"
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
	wf := "\"\"\"A build packer rejects.\"\"\"\n\nbuild = packer_build(\"build.json\", vars = {\"script\": \"/nonexistent/install.sh\"})\n"
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
