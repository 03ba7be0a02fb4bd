package packer

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// MirrorWorkDir makes dir, an empty directory, the working directory of
// one build that would otherwise run in src (a checkout, where the
// template's relative paths point): every entry of src is a symlink in
// dir, so upload sources, scripts and var-files resolve as from src, while
// what packer writes into its working directory (a file provisioner's
// relative download destination, packer_cache) lands in dir. Two builds
// from one checkout, parallel ones too, so never write the same file, and
// the checkout is never written.
//
// own lists the paths (slash-separated, relative to dir) the build
// writes: each is left for the build to create, and every directory on
// its way is a real directory mirroring src's one level down, so a write
// to "vhdbuilder/out.json" stays in dir too.
func MirrorWorkDir(src, dir string, own []string) error {
	abs, err := filepath.Abs(src)
	if err != nil {
		return err
	}
	tree, err := ownTree(src, own)
	if err != nil {
		return err
	}
	return mirror(abs, dir, tree)
}

// CheckOwn checks own as MirrorWorkDir does, for a build whose working
// directory is not made a mirror (BuildRequest.Unmirrored).
func CheckOwn(src string, own []string) error {
	_, err := ownTree(src, own)
	return err
}

func ownTree(src string, own []string) (map[string]any, error) {
	tree := map[string]any{}
	for _, p := range own {
		p = path.Clean(p)
		if path.IsAbs(p) || p == "." || p == ".." || strings.HasPrefix(p, "../") {
			return nil, fmt.Errorf("mirror %s: %q is not a path inside the working directory", src, p)
		}
		addOwned(tree, strings.Split(p, "/"))
	}
	return tree, nil
}

// ErrNeedsMirror is ReadPath's answer for a directory that holds both
// own paths and the checkout's entries, which only the mirror shows: the
// caller makes the mirror and builds again.
var ErrNeedsMirror = errors.New("the build reads a directory it also writes into: it needs its mirrored working directory")

// LinkedInMirror reports whether p is, in the mirror an Unmirrored
// request does without, one of the links MirrorWorkDir makes: an entry of
// the checkout at the top of the working directory that the build does
// not own.
func (r BuildRequest) LinkedInMirror(p string) bool {
	if !r.Unmirrored || r.Mirrors == "" || filepath.IsAbs(p) {
		return false
	}
	rel := path.Clean(filepath.ToSlash(p))
	if rel == "." || rel == ".." || strings.Contains(rel, "/") {
		return false
	}
	for _, o := range r.Own {
		if o = path.Clean(o); o == rel || strings.HasPrefix(o, rel+"/") {
			return false
		}
	}
	return true
}

// PrepareWorkDir makes WorkDir what packer runs in when it is made
// lazily (MakeWorkDir). Runner calls it before packer runs; so must any
// other validator or builder that reads WorkDir.
func (r BuildRequest) PrepareWorkDir() error {
	if r.MakeWorkDir == nil {
		return nil
	}
	if err := r.MakeWorkDir(); err != nil {
		return fmt.Errorf("working directory: %w", err)
	}
	return nil
}

// ReadPath is where the build reads p (relative to its working directory,
// or absolute) from: in WorkDir, or, for an Unmirrored request, in
// Mirrors unless p is one of Own or under one, as through the mirror.
func (r BuildRequest) ReadPath(p string) (string, error) {
	if !r.Unmirrored || r.Mirrors == "" || filepath.IsAbs(p) {
		return ResolvePath(r.WorkDir, p), nil
	}
	rel := path.Clean(filepath.ToSlash(p))
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return ResolvePath(r.WorkDir, p), nil // beside the mirror, as from it
	}
	for _, o := range r.Own {
		o = path.Clean(o)
		switch {
		case rel == o || strings.HasPrefix(rel, o+"/"):
			return ResolvePath(r.WorkDir, p), nil
		case rel == "." || strings.HasPrefix(o, rel+"/"):
			return "", ErrNeedsMirror
		}
	}
	return ResolvePath(r.Mirrors, p), nil
}

// addOwned adds a path's components to tree: a directory on the way maps
// to its subtree, the path itself to nil.
func addOwned(tree map[string]any, parts []string) {
	if len(parts) == 1 {
		if _, dirToo := tree[parts[0]]; !dirToo {
			tree[parts[0]] = nil
		}
		return
	}
	sub, _ := tree[parts[0]].(map[string]any)
	if sub == nil {
		sub = map[string]any{}
		tree[parts[0]] = sub
	}
	addOwned(sub, parts[1:])
}

// mirror links src's entries into dir except those in own: a directory
// in own is mirrored one level down, a path in own is left out.
func mirror(src, dir string, own map[string]any) error {
	entries, err := os.ReadDir(src)
	if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
		return fmt.Errorf("mirror %s: %w", src, err)
	}
	names := map[string]bool{}
	for _, e := range entries {
		names[e.Name()] = true
		if _, owned := own[e.Name()]; owned {
			continue
		}
		if err := os.Symlink(filepath.Join(src, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("mirror %s: %w", src, err)
		}
	}
	keys := make([]string, 0, len(own))
	for k := range own {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		sub, _ := own[k].(map[string]any)
		if sub == nil {
			continue
		}
		if err := os.Mkdir(filepath.Join(dir, k), 0o755); err != nil {
			return fmt.Errorf("mirror %s: %w", src, err)
		}
		// A name src lacks (or has as a file) is a new, empty directory.
		if err := mirror(filepath.Join(src, k), filepath.Join(dir, k), sub); err != nil {
			return err
		}
	}
	return nil
}
