package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// inDir runs the test in dir (fmt and lint take paths relative to it).
func inDir(t *testing.T, dir string) {
	t.Helper()
	wd, err := os.Getwd()
	require.NoError(t, err)
	require.NoError(t, os.Chdir(dir))
	t.Cleanup(func() { _ = os.Chdir(wd) })
}

// workspace makes a workspace with the given files.
func workspace(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	}
	return dir
}

// The repository's workflows and libraries are formatted and lint-clean:
// what `make lint` (part of make test) checks.
func TestRepositoryWorkflowsAreFormattedAndLintClean(t *testing.T) {
	inDir(t, repoRoot(t))
	res := imgflow(t, "fmt", "-check", "workflows", "lib")
	assert.Equal(t, 0, res.code, res.String())
	assert.Empty(t, res.stdout)

	res = imgflow(t, "lint", "workflows", "lib")
	assert.Equal(t, 0, res.code, res.String())
	assert.Empty(t, res.stdout)

	// Without paths: workflows and lib.
	res = imgflow(t, "lint")
	assert.Equal(t, 0, res.code, res.String())
	res = imgflow(t, "fmt", "-check")
	assert.Equal(t, 0, res.code, res.String())
}

// lib/aks documents every argument and result of its public functions
// (lint's optional docstring-args), as lucicfg's docstrings do.
func TestAKSLibraryDocumentsEveryArgument(t *testing.T) {
	inDir(t, repoRoot(t))
	res := imgflow(t, "lint", "--warnings=+docstring-args", "lib/aks.star", "lib/aks")
	assert.Equal(t, 0, res.code, res.String())
	assert.Empty(t, res.stdout)
}

const uglyWorkflow = `"""An ill-formatted workflow."""

rg = resource_group("rg", location = "westeurope")
tags = {"a":"1",
  "b": "2"}
output("rg", rg.id)
`

func TestFmtCheckListsIllFormattedFilesWithTheLine(t *testing.T) {
	dir := workspace(t, map[string]string{
		"workflows/ugly.star": uglyWorkflow,
		"workflows/fine.star": "\"\"\"Fine.\"\"\"\n\noutput(\"x\", 1)\n",
	})
	inDir(t, dir)
	res := imgflow(t, "fmt", "-check", "workflows")
	require.Equal(t, 1, res.code, res.String())
	assert.Equal(t, "workflows/ugly.star:4: not formatted from this line on (run: imgflow fmt workflows/ugly.star)\n", res.stdout)

	// -check changes nothing; fmt does, like buildifier.
	data, err := os.ReadFile("workflows/ugly.star")
	require.NoError(t, err)
	assert.Equal(t, uglyWorkflow, string(data))
	res = imgflow(t, "fmt", "workflows")
	require.Equal(t, 0, res.code, res.String())
	assert.Equal(t, "formatted workflows/ugly.star\n", res.stdout)
	data, err = os.ReadFile("workflows/ugly.star")
	require.NoError(t, err)
	assert.Contains(t, string(data), "tags = {\n    \"a\": \"1\",\n    \"b\": \"2\",\n}\n")

	res = imgflow(t, "fmt", "-check", "workflows")
	assert.Equal(t, 0, res.code, res.String())
}

func TestFmtReportsSyntaxErrorsWithTheLine(t *testing.T) {
	dir := workspace(t, map[string]string{"lib/broken.star": "x = (1,\n"})
	inDir(t, dir)
	res := imgflow(t, "fmt", "-check", "lib")
	require.Equal(t, 1, res.code, res.String())
	assert.Regexp(t, `^lib/broken.star:\d+:\d+: `, res.stderr)
}

func TestLintUnknownKeywordFailsWithFileLineCol(t *testing.T) {
	dir := workspace(t, map[string]string{
		"workflows/typo.star": `"""A typo in a keyword."""

rg = resource_group("rg", locaton = "westeurope")
output("rg", rg.id)
`,
	})
	inDir(t, dir)
	res := imgflow(t, "lint", "workflows")
	require.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stdout, `workflows/typo.star:3:27: unknown-keyword: resource_group() has no parameter "locaton" (did you mean location?)`)
	assert.Contains(t, res.stdout, `workflows/typo.star:3:20: missing-argument: resource_group() is missing its required argument location`)
	assert.Contains(t, res.stderr, "2 finding(s) in 1 file(s) checked")

	// check finds it too, without running anything.
	res = imgflow(t, "check", "--root", dir, "workflows/typo.star")
	require.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stdout, `workflows/typo.star:3:27: unknown-keyword:`)
}

// Each of imgflow's checks, and that buildifier's warnings run too.
func TestLintChecks(t *testing.T) {
	dir := workspace(t, map[string]string{
		"lib/names.star": `"""Names."""

PREFIX = "img"

def name(x):
    """A name."""
    return PREFIX + x
`,
		"workflows/all.star": `"""Every kind of mistake."""

load("//lib/names.star", "nmae", "PREFIX")
load("//lib/gone.star", "x")

rg = resourc_group("rg", location = "westeurope")
g = gallery("g", "rg", resource_group = rg)
image_version(g)
print(undefined_name, PREFIX, x)
`,
		"workflows/nothing_out.star": `"""No outputs."""

print("hello")
`,
		"workflows/silenced.star": `"""No outputs, on purpose."""  # buildifier: disable=no-outputs

print("hello")
`,
		"workflows/all_test.star": `"""Tests may use assert and run, and need no outputs."""

def test_it():
    assert.eq(run("all.star").ok, False)
`,
		"lib/unused.star": `"""Unused load."""

load("//lib/names.star", "name")

X = 1
`,
	})
	inDir(t, dir)
	res := imgflow(t, "lint", "workflows", "lib")
	require.Equal(t, 1, res.code, res.String())
	for _, want := range []string{
		`workflows/all.star:3:27: load-missing: lib/names.star does not define nmae (did you mean name?)`,
		`workflows/all.star:4:6: load-missing: cannot load //lib/gone.star: lib/gone.star does not exist`,
		`workflows/all.star:6:6: unknown-builtin: resourc_group() is not an imgflow builtin, a Starlark builtin, a load()ed symbol or defined in this file (did you mean resource_group?)`,
		`workflows/all.star:7:12: positional-argument: gallery() takes at most 1 positional argument(s) (name); pass the others by keyword`,
		`workflows/all.star:8:14: missing-argument: image_version() is missing its required arguments `,
		`workflows/all.star:9:7: undefined-name: undefined_name is not defined`,
		`workflows/all.star:1:1: no-outputs: workflow has no output() call`,
		`workflows/nothing_out.star:1:1: no-outputs:`,
		`lib/unused.star:3:27: load: Loaded symbol "name" is unused.`,
	} {
		assert.Contains(t, res.stdout, want)
	}
	assert.NotContains(t, res.stdout, "silenced.star")
	assert.NotContains(t, res.stdout, "all_test.star")
	for _, line := range strings.Split(strings.TrimSpace(res.stdout), "\n") {
		assert.Regexp(t, `^\S+\.star:\d+:\d+: [a-z-]+: .+$`, line)
	}

	// --warnings adjusts the set.
	res = imgflow(t, "lint", "--warnings=-no-outputs,-load", "workflows/nothing_out.star", "lib/unused.star")
	assert.Equal(t, 0, res.code, res.String())
	res = imgflow(t, "lint", "--warnings=bogus", "lib")
	assert.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stderr, `unknown warning "bogus"`)
	res = imgflow(t, "lint", "--list-warnings")
	assert.Equal(t, 0, res.code, res.String())
	assert.Contains(t, res.stdout, "* unknown-keyword")
	assert.Contains(t, res.stdout, "  module-docstring")
	assert.Contains(t, res.stdout, "* keyword-only")
	assert.Contains(t, res.stdout, "  docstring-args")
}

func TestCheck(t *testing.T) {
	root := repoRoot(t)
	res := imgflow(t, "check", "--root", root, filepath.Join(root, "workflows", "flatcar.star"))
	require.Equal(t, 0, res.code, res.String())
	assert.Equal(t, "workflows/flatcar.star: ok (parsed, resolved, loads found, lint clean, planned with the defaults, 1 job of releases/flatcar.star, 1 var set of workflows/flatcar_test.star; nothing ran)\n", res.stdout)

	dir := workspace(t, map[string]string{
		"workflows/w.star": "\"\"\"W.\"\"\"\n\nload(\"//lib/a.star\", \"A\")\n\noutput(\"a\", A)\n",
		"lib/a.star":       "\"\"\"A.\"\"\"\n\nload(\"//lib/b.star\", \"B\")\n\nA = B\n",
		"lib/b.star":       "\"\"\"B.\"\"\"\n\nload(\"//lib/a.star\", \"A\")\n\nB = A\n\nwhile True:\n    pass\n",
	})
	res = imgflow(t, "check", "--root", dir, filepath.Join(dir, "workflows", "w.star"))
	require.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stdout, "lib/b.star:3:6: resolve: cycle in load graph: lib/a.star → lib/b.star → lib/a.star")
	assert.Contains(t, res.stdout, "lib/b.star:7:1: resolve: this Starlark dialect does not support while loops")

	res = imgflow(t, "check")
	assert.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stderr, "check takes workflow files")
}

// check plans the workflow with its defaults and with each release job
// that runs it; any failed plan fails the check, with the whole error.
func TestCheckPlansTheDefaultsAndTheReleaseJobs(t *testing.T) {
	wf := "\"\"\"W.\"\"\"\n\nmode = param(\"mode\", default = \"%s\", doc = \"how\")\nif mode != \"fine\":\n    fail(\"mode %%s is broken\" %% mode)\noutput(\"mode\", mode)\n"
	dir := workspace(t, map[string]string{
		"workflows/w.star": fmt.Sprintf(wf, "broken"),
	})
	res := imgflow(t, "check", "--root", dir, "--no-packer-validate", filepath.Join(dir, "workflows", "w.star"))
	require.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stdout, "workflows/w.star [default]: plan failed:\n  workflows/w.star:5:9: fail: mode broken is broken\n")
	assert.NotContains(t, res.stdout, ": ok (")

	dir = workspace(t, map[string]string{
		"workflows/w.star": fmt.Sprintf(wf, "fine"),
		"releases/r.star":  "job(\"workflows/w.star\", mode = \"fine\")\njob(\"workflows/w.star\", id = \"bad\", mode = \"worse\")\n",
	})
	res = imgflow(t, "check", "--root", dir, "--no-packer-validate", filepath.Join(dir, "workflows", "w.star"))
	require.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stdout, "workflows/w.star [releases/r.star job bad]: plan failed:\n  workflows/w.star:5:9: fail: mode worse is broken\n")
	assert.NotContains(t, res.stdout, "[default]")
}
