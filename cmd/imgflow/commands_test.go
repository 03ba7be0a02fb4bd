package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/builtins"
)

func TestDocPrintsEveryBuiltin(t *testing.T) {
	res := imgflow(t, "doc")
	require.Equal(t, 0, res.code, res.String())
	reg := builtins.NewRegistry()
	assert.Equal(t, reg.Reference(), res.stdout)
	for _, g := range reg.Groups() {
		assert.Contains(t, res.stdout, "### "+g)
	}
	specs := reg.Specs("")
	require.NotEmpty(t, specs)
	for _, s := range specs {
		assert.Contains(t, res.stdout, "#### `"+s.Name+"`")
		assert.Contains(t, res.stdout, s.Signature())
	}
}

var summaryRE = regexp.MustCompile(`(?m)^(\d+) passed, (\d+) failed$`)

func TestTestCommandOnTheRepositoryWorkflows(t *testing.T) {
	t.Parallel() // reads the repository, sets nothing
	root := repoRoot(t)
	res := imgflow(t, "test", "--root", root, filepath.Join(root, "workflows")+"/...")
	require.Equal(t, 0, res.code, res.String())
	m := summaryRE.FindStringSubmatch(res.stdout)
	require.NotNil(t, m, res.stdout)
	assert.NotEqual(t, "0", m[1], "no test ran")
	assert.Equal(t, "0", m[2])
	assert.NotContains(t, res.stdout, "FAIL")

	verbose := imgflow(t, "test", "--root", root, "-v", filepath.Join(root, "workflows", "flatcar_test.star"))
	require.Equal(t, 0, verbose.code, verbose.String())
	assert.Contains(t, verbose.stdout, "PASS workflows/flatcar_test.star:test_rerun_changes_nothing")
}

// Without paths, `imgflow test` runs the workspace's workflows/ and its
// subdirectories — the workspace given with --root, wherever imgflow is
// started from — and nothing else. A workspace of its own shows exactly
// which files ran (the repository's suite runs in the test above).
func TestTestCommandDefaultsToTheWorkspaceWorkflows(t *testing.T) {
	root := t.TempDir()
	for file, src := range map[string]string{
		"workflows/a_test.star":     "def test_a():\n    assert.eq(1, 1)\n",
		"workflows/sub/b_test.star": "def test_b():\n    assert.eq(2, 2)\n",
		"other/c_test.star":         "def test_c():\n    assert.fail(\"outside workflows/: must not run\")\n",
	} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, filepath.Dir(file)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, file), []byte(src), 0o644))
	}
	res := imgflow(t, "test", "--root", root, "-v")
	require.Equal(t, 0, res.code, res.String())
	assert.Contains(t, res.stdout, "PASS workflows/a_test.star:test_a")
	assert.Contains(t, res.stdout, "PASS workflows/sub/b_test.star:test_b")
	assert.NotContains(t, res.stdout, "other/")
	m := summaryRE.FindStringSubmatch(res.stdout)
	require.NotNil(t, m, res.stdout)
	assert.Equal(t, []string{"2", "0"}, m[1:3])
}

func TestTestCommandReportsFailures(t *testing.T) {
	root := repoRoot(t)
	res := imgflow(t, "test", "--root", root, filepath.Join(root, "testdata", "cli", "failing_test.star"))
	require.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stdout, "FAIL testdata/cli/failing_test.star:test_fails_on_purpose")
	assert.Contains(t, res.stdout, "beta")
	assert.NotContains(t, res.stdout, "FAIL testdata/cli/failing_test.star:test_passes")
	assert.Contains(t, res.stdout, "1 passed, 1 failed\n")

	verbose := imgflow(t, "test", "--root", root, "-v", filepath.Join(root, "testdata", "cli", "failing_test.star"))
	require.Equal(t, 1, verbose.code, verbose.String())
	assert.Contains(t, verbose.stdout, "PASS testdata/cli/failing_test.star:test_passes")

	empty := t.TempDir()
	res = imgflow(t, "test", "--root", empty, empty)
	assert.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stderr, "no *_test.star files")
}

// Output to files (not terminals) and with NO_COLOR set carries no ANSI
// escapes.
func TestNoColorOutsideATerminal(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	root := repoRoot(t)
	state := t.TempDir()
	runArgs := []string{
		"run", "--root", root, filepath.Join(root, "workflows", "flatcar.star"), "--state", state,
		"--var", "version=4152.2.3", "--var", "vhd=//testdata/flatcar/flatcar-linux-test-amd64.vhd",
	}
	commands := [][]string{
		runArgs,
		{"state", "--state", state},
		{"run", "--root", root, filepath.Join(root, "testdata", "cli", "bad_gallery_name.star"), "--state", t.TempDir()},
		{"test", "--root", root, filepath.Join(root, "testdata", "cli", "failing_test.star")},
		{"doc"},
	}
	check := func(t *testing.T) {
		for _, args := range commands {
			dir := t.TempDir()
			stdout, err := os.Create(filepath.Join(dir, "stdout"))
			require.NoError(t, err)
			stderr, err := os.Create(filepath.Join(dir, "stderr"))
			require.NoError(t, err)
			runMain(context.Background(), args, stdout, stderr)
			require.NoError(t, stdout.Close())
			require.NoError(t, stderr.Close())
			for _, f := range []string{"stdout", "stderr"} {
				data, err := os.ReadFile(filepath.Join(dir, f))
				require.NoError(t, err)
				assert.NotContains(t, string(data), "\x1b[", "%s of %v", f, args[0])
			}
		}
	}
	t.Run("not a terminal", check)
	t.Setenv("NO_COLOR", "1")
	t.Run("NO_COLOR", check)
}
