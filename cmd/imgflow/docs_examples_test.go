package main

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud/azure/azuritetest"
	"github.com/imgflow/imgflow/internal/testtool"
)

// docExampleSkips are the shell examples the doc-examples test does not
// run, each with why: matched against the block's text.
var docExampleSkips = []struct{ marker, why string }{
	{"make test", "runs every test suite"},
	{"git clone", "clones from the network, which the tests do not reach"},
	{"go test", "runs a test suite"},
	{"make install", "installs into GOPATH; the test puts imgflow on PATH itself"},
	// The emulator's blocks run (needsAzurite); the others need a
	// subscription.
	{"--journal \"$IMGFLOW_JOURNAL_URL", "needs an Azure subscription and its journal container"},
}

// needsAzurite marks the blocks that start imgflow-emulator: they run with
// the repository's .tools (Azurite), and fail under CI=true without it.
const needsAzurite = "imgflow-emulator --background"

var shellBlockRE = regexp.MustCompile("(?ms)^```(?:sh|bash)\n(.*?)^```")

// TestDocShellExamples runs the README's and WORKFLOWS.md's ```sh blocks
// that need no Azure, as written, in a copy of the repository with
// imgflow (this test binary) and bin/imgflow on PATH: a doc example that
// no longer works fails here.
func TestDocShellExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the docs' examples")
	}
	requireBash(t)
	// Each block runs in its own copy, mostly waiting on go build and the
	// emulator's start: side by side, and beside the package's other
	// parallel tests.
	t.Parallel()
	root := repoRoot(t)
	for _, doc := range []string{"README.md", "WORKFLOWS.md"} {
		text, err := os.ReadFile(filepath.Join(root, doc))
		require.NoError(t, err)
		for i, m := range shellBlockRE.FindAllStringSubmatch(string(text), -1) {
			block := m[1]
			t.Run(doc+"#"+strconv.Itoa(i+1), func(t *testing.T) {
				t.Parallel()
				for _, s := range docExampleSkips {
					if strings.Contains(block, s.marker) {
						t.Skipf("%s: %s", s.marker, s.why)
					}
				}
				if strings.Contains(block, needsAzurite) {
					if _, err := azuritetest.FindScript(); err != nil {
						testtool.Unavailable(t, "the emulator's example needs Azurite: "+err.Error(), "`make deps` installs it")
					}
				}
				runDocBlock(t, root, block)
			})
		}
	}
}

// runDocBlock runs a shell block with bash -e in a fresh copy of the
// repository's tracked files.
func runDocBlock(t *testing.T, root, block string) {
	t.Helper()
	dir := copyTracked(t, root)
	self, err := os.Executable()
	require.NoError(t, err)
	bin := filepath.Join(dir, "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	require.NoError(t, os.Symlink(self, filepath.Join(bin, "imgflow")))
	// Azurite, as make deps installed it, for the emulator's examples.
	if tools := filepath.Join(root, ".tools"); dirExists(tools) {
		require.NoError(t, os.Symlink(tools, filepath.Join(dir, ".tools")))
	}
	seedDocBuilds(t, dir, block)
	cmd := exec.Command("bash", "--norc", "--noprofile", "-e", "-c", block)
	cmd.Dir = dir
	// Without packer on PATH plans skip packer validate: the examples stay
	// quick (the packer tests validate the templates).
	cmd.Env = append(os.Environ(), "IMGFLOW_TEST_MAIN=1", "PATH="+bin+":"+pathWithout(t, "packer"),
		"GOFLAGS="+docGoFlags())
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s\n%s", block, out)
}

// docGoBuildRE matches a doc example's build of one of the module's
// commands into the copy's bin/.
var docGoBuildRE = regexp.MustCompile(`go build -o (bin/[\w-]+) \./cmd/([\w-]+)`)

// seedDocBuilds puts at each output path of the block's `go build -o
// bin/X ./cmd/Y` the package's one build of ./cmd/Y (buildCmd), built
// from the same sources with the same flags. The example's go build
// still runs, checks that binary against the copy's sources and finds it
// up to date, where it would otherwise link the same imgflow and
// imgflow-emulator again in every example (seconds of CPU each); were
// anything different, it would build anew over it.
func seedDocBuilds(t *testing.T, dir, block string) {
	t.Helper()
	for _, m := range docGoBuildRE.FindAllStringSubmatch(block, -1) {
		out := filepath.Join(dir, m[1])
		if err := os.Remove(out); err != nil && !os.IsNotExist(err) {
			require.NoError(t, err)
		}
		require.NoError(t, os.Link(buildCmd(t, m[2]), out))
	}
}

// pathWithout is $PATH without the directories that hold tool.
func pathWithout(t *testing.T, tool string) string {
	var keep []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(d, tool)); err != nil {
			keep = append(keep, d)
		}
	}
	return strings.Join(keep, string(os.PathListSeparator))
}

// copyTracked copies the files git tracks, as a fresh clone has them.
func copyTracked(t *testing.T, root string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v (the test copies what a fresh clone has)", err)
	}
	dir := t.TempDir()
	for _, rel := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		src := filepath.Join(root, rel)
		info, err := os.Lstat(src)
		if err != nil || !info.Mode().IsRegular() {
			continue // deleted in the work tree, or a symlink (.tools)
		}
		data, err := os.ReadFile(src)
		require.NoError(t, err)
		dst := filepath.Join(dir, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
		require.NoError(t, os.WriteFile(dst, data, info.Mode().Perm()|fs.FileMode(0o200)))
	}
	return dir
}

func dirExists(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}
