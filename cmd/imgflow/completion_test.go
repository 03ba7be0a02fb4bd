package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/imgflow/imgflow/internal/testtool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCompleteParams(t *testing.T) {
	root := repoRoot(t)
	res := imgflow(t, "__complete-params", filepath.Join(root, "workflows", "flatcar.star"))
	require.Equal(t, 0, res.code, res.String())
	assert.Equal(t, "channel=\narch=\nversion=\nvhd=\nstorage_account=\neula=\n", res.stdout)

	res = imgflow(t, "__complete-params", filepath.Join(root, "no-such.star"))
	assert.NotEqual(t, 0, res.code)
	assert.Empty(t, res.stdout)
	assert.Empty(t, res.stderr, "completion stays quiet")
}

// completeBash runs the bash completion of a command line (the last word
// is the one being completed) and returns the candidates. imgflow is the
// test binary itself (TestMain).
func completeBash(t *testing.T, script, dir string, words ...string) []string {
	t.Helper()
	return completeBashAt(t, script, dir, len(words)-1, words...)
}

// completeBashAt completes words[cword].
func completeBashAt(t *testing.T, script, dir string, cword int, words ...string) []string {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	bin := filepath.Join(t.TempDir(), "imgflow")
	require.NoError(t, os.Symlink(self, bin))
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	prog := script + `
COMP_WORDS=(` + strings.Join(quoted, " ") + `)
COMP_CWORD=` + strconv.Itoa(cword) + `
compopt() { :; }
_imgflow
printf '%s\n' "${COMPREPLY[@]}"
`
	cmd := exec.Command("bash", "--norc", "--noprofile", "-c", prog)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "IMGFLOW_TEST_MAIN=1", "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line != "" {
			got = append(got, line)
		}
	}
	return got
}

func TestBashCompletion(t *testing.T) {
	requireBash(t)
	res := imgflow(t, "completion", "bash")
	require.Equal(t, 0, res.code, res.String())
	script := res.stdout
	root := repoRoot(t)

	assert.Equal(t, []string{"plan"}, completeBash(t, script, root, "imgflow", "pl"))
	assert.Equal(t, []string{"fmt"}, completeBash(t, script, root, "imgflow", "fm"))
	// Flags come from the commands themselves.
	assert.Subset(t, completeBash(t, script, root, "imgflow", "run", "--"), []string{"--var", "--vars-file", "--output", "--export-outputs", "--resume"})
	assert.Equal(t, []string{"--junit"}, completeBash(t, script, root, "imgflow", "test", "--ju"))
	assert.Equal(t, []string{"json"}, completeBash(t, script, root, "imgflow", "plan", "--output", "j"))
	assert.Equal(t, []string{"local", "azure"}, completeBash(t, script, root, "imgflow", "run", "--target", ""))
	// Workflow files for FILE arguments.
	assert.Contains(t, completeBash(t, script, root, "imgflow", "run", "workflows/"), "workflows/flatcar.star")
	assert.NotContains(t, completeBash(t, script, root, "imgflow", "run", "workflows/"), "workflows/flatcar_test.star", "imgflow test runs tests")
	assert.Contains(t, completeBash(t, script, root, "imgflow", "test", "workflows/"), "workflows/flatcar_test.star")
	// --var completes the params the workflow on the command line declares.
	assert.Equal(t, []string{"channel=", "arch=", "version=", "vhd=", "storage_account=", "eula="},
		completeBash(t, script, root, "imgflow", "run", "workflows/flatcar.star", "--var", ""))
	assert.Equal(t, []string{"version=", "vhd="},
		completeBashAt(t, script, root, 3, "imgflow", "plan", "--var", "v", "workflows/flatcar.star"))
	assert.Empty(t, completeBash(t, script, root, "imgflow", "run", "--var", ""), "no workflow yet")
	// A list param's choices, element by element.
	assert.Equal(t, []string{"features=fips,gpu"}, completeBash(t, script, root, "imgflow", "run", "workflows/linux.star", "--var", "features=fips,g"))
	// Where bash splits the word at "=".
	assert.Equal(t, []string{"fips", "gpu", "cvm", "tl"}, completeBash(t, script, root, "imgflow", "run", "workflows/linux.star", "--var", "features", "=", ""))
	assert.Equal(t, []string{"fips,gpu"}, completeBash(t, script, root, "imgflow", "run", "workflows/linux.star", "--var", "features", "=", "fips,g"))
	// A release's --var: its var()s and its jobs' workflows' params.
	assert.Subset(t, completeBash(t, script, root, "imgflow", "plan", "releases/flatcar.star", "--var", ""), []string{"channel=", "image_builder=", "kubernetes_versions="})
	assert.Equal(t, []string{"image_builder=", "image_builder_version="}, completeBash(t, script, root, "imgflow", "run", "releases/capz.star", "--var", "image_b"))
	assert.Equal(t, []string{"channel=beta"}, completeBash(t, script, root, "imgflow", "plan", "releases/flatcar.star", "--var", "channel=b"))
	assert.Equal(t, []string{"bash", "zsh"}, completeBash(t, script, root, "imgflow", "completion", ""))
	// ci: the engine, then the release file.
	assert.Equal(t, []string{"github", "azure-pipelines"}, completeBash(t, script, root, "imgflow", "ci", ""))
	assert.Equal(t, []string{"releases/aks.star"}, completeBash(t, script, root, "imgflow", "ci", "github", "releases/ak"))
	// --artifacts takes a directory.
	assert.Contains(t, completeBash(t, script, root, "imgflow", "run", "--artifacts", "workf"), "workflows")
	assert.NotContains(t, completeBash(t, script, root, "imgflow", "run", "--artifacts", "workflows/"), "workflows/linux.star", "a directory, not a workflow")
}

// The script completes imgflow on PATH and the bin/imgflow make builds.
func TestBashCompletionRegistersBinImgflow(t *testing.T) {
	requireBash(t)
	res := imgflow(t, "completion", "bash")
	require.Equal(t, 0, res.code, res.String())
	for _, name := range []string{"imgflow", "bin/imgflow", "./bin/imgflow"} {
		out, err := exec.Command("bash", "--norc", "--noprofile", "-c", res.stdout+"\ncomplete -p "+name).CombinedOutput()
		require.NoError(t, err, "%s: %s", name, out)
		assert.Contains(t, string(out), "-F _imgflow", name)
	}
}

func TestZshCompletion(t *testing.T) {
	res := imgflow(t, "completion", "zsh")
	require.Equal(t, 0, res.code, res.String())
	assert.True(t, strings.HasPrefix(res.stdout, "#compdef imgflow\n"))
	assert.Contains(t, res.stdout, "__complete-params")
	assert.Contains(t, res.stdout, "ci) if ((CURRENT == 3)); then compadd github azure-pipelines; else _files -g '*.star'; fi ;;")
	assert.Contains(t, res.stdout, "--export-outputs")
	assert.Contains(t, res.stdout, "    run) _files -g '*.star~*_test.star' ;;", "run is offered no test file")
	assert.Contains(t, res.stdout, "    test) _files -g '*.star' ;;")
	zsh, err := exec.LookPath("zsh")
	if err != nil {
		t.Log("zsh not installed: syntax not checked")
		return
	}
	f := filepath.Join(t.TempDir(), "_imgflow")
	require.NoError(t, os.WriteFile(f, []byte(res.stdout), 0o644))
	out, err := exec.Command(zsh, "-n", f).CombinedOutput()
	assert.NoError(t, err, string(out))
}

func TestCompletionArguments(t *testing.T) {
	res := imgflow(t, "completion")
	assert.Equal(t, 1, res.code)
	assert.Contains(t, res.stderr, "completion takes a shell")
	res = imgflow(t, "completion", "fish")
	assert.Equal(t, 1, res.code)
}

// requireBash skips a completion test where bash is missing, except in CI,
// where the completion script must be checked.
func requireBash(t *testing.T) {
	t.Helper()
	testtool.Require(t, "bash", "install bash: the completion tests run it")
}
