package gitrev

import (
	"github.com/imgflow/imgflow/internal/testtool"

	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

const a = "0123456789abcdef0123456789abcdef01234567"
const b = "89abcdef0123456789abcdef0123456789abcdef"

func TestCommitOfABranchALooseRefAPackedRefAndADetachedHead(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, ".git", "HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(dir, ".git", "refs", "heads", "main"), a+"\n")
	got, err := Commit(dir)
	require.NoError(t, err)
	assert.Equal(t, a, got)

	require.NoError(t, os.Remove(filepath.Join(dir, ".git", "refs", "heads", "main")))
	write(t, filepath.Join(dir, ".git", "packed-refs"), "# pack-refs with: peeled\n"+b+" refs/heads/main\n")
	got, err = Commit(dir)
	require.NoError(t, err)
	assert.Equal(t, b, got, "packed-refs")

	write(t, filepath.Join(dir, ".git", "HEAD"), a+"\n")
	got, err = Commit(dir)
	require.NoError(t, err)
	assert.Equal(t, a, got, "detached HEAD")
}

func TestCommitOfAWorktreeReadsRefsFromTheCommonDir(t *testing.T) {
	root := t.TempDir()
	common := filepath.Join(root, "repo.git")
	write(t, filepath.Join(common, "refs", "heads", "topic"), b+"\n")
	wtGit := filepath.Join(common, "worktrees", "wt")
	write(t, filepath.Join(wtGit, "HEAD"), "ref: refs/heads/topic\n")
	write(t, filepath.Join(wtGit, "commondir"), "../..\n")
	wt := filepath.Join(root, "wt")
	write(t, filepath.Join(wt, ".git"), "gitdir: "+wtGit+"\n")
	got, err := Commit(wt)
	require.NoError(t, err)
	assert.Equal(t, b, got)
}

func TestNotAGitCheckout(t *testing.T) {
	_, err := Commit(t.TempDir())
	assert.ErrorIs(t, err, ErrNotGit)
}

// The reader agrees with git on a real repository when git is installed.
func TestCommitAgreesWithGit(t *testing.T) {
	testtool.Require(t, "git", "apt-get install git")
	dir := t.TempDir()
	run := func(args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		return strings.TrimSpace(string(out))
	}
	run("init", "-q")
	write(t, filepath.Join(dir, "f"), "x")
	run("add", "f")
	run("commit", "-q", "-m", "x")
	got, err := Commit(dir)
	require.NoError(t, err)
	assert.Equal(t, run("rev-parse", "HEAD"), got)
}
