package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSeveralWorkflowsRunSideBySide(t *testing.T) {
	root := repoRoot(t)
	state := t.TempDir()
	res := imgflow(t, "run", "--root", root, "--state", state, "-j", "2",
		filepath.Join(root, "workflows", "flatcar.star"), filepath.Join(root, "testdata", "interp", "parallel_ok.star"),
		"--var", "version=4152.2.3", "--var", "vhd=//testdata/flatcar/flatcar-linux-test-amd64.vhd")
	require.Equal(t, 0, res.code, res.String())
	assert.Contains(t, res.stdout, "[flatcar]  12 image_version")
	assert.Contains(t, res.stdout, "[parallel_ok]   1 resource_group")
	assert.Contains(t, res.stdout, `[parallel_ok] names = ["rg-a","rg-b","rg-c"]`)
	assert.Contains(t, res.stdout, "2 workflow(s) succeeded, 0 failed")

	runs := imgflow(t, "runs", "--root", root, "--state", state)
	assert.Contains(t, runs.stdout, "workflows/flatcar.star")
	assert.Contains(t, runs.stdout, "testdata/interp/parallel_ok.star")
}

func TestSeveralWorkflowsRefuseAVarNoneDeclares(t *testing.T) {
	root := repoRoot(t)
	res := imgflow(t, "run", "--root", root, "--state", t.TempDir(), "-j", "2",
		filepath.Join(root, "testdata", "interp", "parallel_ok.star"), filepath.Join(root, "testdata", "interp", "loads_twice.star"),
		"--var", "verison=1")
	require.NotEqual(t, 0, res.code, res.String())
	assert.Contains(t, res.stderr, "unknown --var verison")
}
