// Package gitrev reads the commit a git checkout has checked out, from its
// files (HEAD, refs, packed-refs), without running git: imgflow records
// which commit of a template source and of the workflow built an image.
package gitrev

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

var hashRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`) })

// ErrNotGit is returned for a directory that is not a git checkout.
var ErrNotGit = errors.New("not a git checkout")

// Commit returns the commit dir has checked out: dir's .git directory, or
// the one a .git file (a worktree, a submodule) points to. It does not look
// in dir's parents: a checkout inside the workspace is its own.
func Commit(dir string) (string, error) {
	gitDir, err := gitDirOf(dir)
	if err != nil {
		return "", err
	}
	head, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return "", fmt.Errorf("%s: %w", dir, ErrNotGit)
	}
	line := strings.TrimSpace(string(head))
	ref, isRef := strings.CutPrefix(line, "ref: ")
	if !isRef {
		if hashRE().MatchString(line) {
			return line, nil
		}
		return "", fmt.Errorf("%s: HEAD holds %q, neither a commit nor a ref", dir, line)
	}
	// A worktree keeps its HEAD; refs live in the common directory.
	common := gitDir
	if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		c := strings.TrimSpace(string(b))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		common = c
	}
	for _, d := range []string{gitDir, common} {
		if b, err := os.ReadFile(filepath.Join(d, filepath.FromSlash(ref))); err == nil {
			if h := strings.TrimSpace(string(b)); hashRE().MatchString(h) {
				return h, nil
			}
		}
	}
	if h := packedRef(filepath.Join(common, "packed-refs"), ref); h != "" {
		return h, nil
	}
	return "", fmt.Errorf("%s: HEAD is %s, which has no commit yet", dir, ref)
}

func gitDirOf(dir string) (string, error) {
	dotGit := filepath.Join(dir, ".git")
	st, err := os.Stat(dotGit)
	if err != nil {
		return "", fmt.Errorf("%s: %w", dir, ErrNotGit)
	}
	if st.IsDir() {
		return dotGit, nil
	}
	b, err := os.ReadFile(dotGit)
	if err != nil {
		return "", err
	}
	target, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok {
		return "", fmt.Errorf("%s: .git is neither a directory nor a gitdir: file", dir)
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(dir, target)
	}
	return target, nil
}

func packedRef(path, ref string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		hash, name, ok := strings.Cut(s.Text(), " ")
		if ok && name == ref && hashRE().MatchString(hash) {
			return hash
		}
	}
	return ""
}
