package localsim

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/imgflow/imgflow/cloud/guest"
	"github.com/imgflow/imgflow/packer"
)

// stagedFile is a file the build uploaded, as the VM holds it.
type stagedFile struct {
	Path   string `json:"path"`
	Mode   string `json:"mode"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	abs    string
	// text is the content of a file of at most guest.MaxGuestText bytes
	// (for the guest record's file_contains checks), else "".
	text string
}

// stagedTree is the staged-files directory, read once per build: the
// build's identity, its simulated downloads and its guest record all
// describe the same files, and the build tools among them are megabytes.
type stagedTree struct {
	// digest hashes the relative paths, modes, sizes and content sums of
	// the tree.
	digest []byte
	// files are the regular files by their path on the VM (the staged
	// directory mirrors it).
	files map[string]stagedFile
}

// readStaged walks the staged-files directory dir. Files larger than
// guest.MaxGuestText (their text is not recorded) take their sum from
// sums when it knows them.
func readStaged(dir string, sums *packer.SumCache) (*stagedTree, error) {
	tree := &stagedTree{files: map[string]stagedFile{}}
	h := sha256.New()
	err := filepath.WalkDir(dir, func(file string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, file)
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %o\n", filepath.ToSlash(rel), info.Mode())
		if !info.Mode().IsRegular() {
			return nil
		}
		f, err := stagedFileOf(file, info, sums)
		if err != nil {
			return err
		}
		// The tree's digest takes each file's sum, not its bytes again:
		// the build tools are megabytes, hashed once.
		fmt.Fprintf(h, "%d %s\n", f.Size, f.SHA256)
		f.Path = "/" + filepath.ToSlash(rel)
		tree.files[f.Path] = f
		return nil
	})
	if err != nil {
		return nil, err
	}
	tree.digest = h.Sum(nil)
	return tree, nil
}

// stagedFileOf reads (or finds in sums) what the tree records of a file.
func stagedFileOf(file string, info fs.FileInfo, sums *packer.SumCache) (stagedFile, error) {
	f := stagedFile{Mode: fmt.Sprintf("%04o", info.Mode().Perm()), Size: info.Size(), abs: file}
	if info.Size() > guest.MaxGuestText {
		// Hashed as it is read: the build tools are megabytes, which
		// read whole would be as many fresh pages of heap.
		sum, n, err := sums.File(file, info)
		if err != nil {
			return f, err
		}
		if n > guest.MaxGuestText {
			f.SHA256, f.Size = hex.EncodeToString(sum[:]), n
			return f, nil
		}
		// Shrunk since its stat: read whole below, text and all.
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return f, err
	}
	sum := sha256.Sum256(data)
	f.SHA256, f.Size = hex.EncodeToString(sum[:]), int64(len(data))
	if len(data) <= guest.MaxGuestText {
		f.text = string(data)
	}
	return f, nil
}

// addUploads adds to tree (nil: none yet) the files the template's file
// provisioners upload from packer's working directory (a checkout's
// scripts and binaries), at their paths on the VM as packer 1.9.5 puts
// them: a destination ending in "/" is a directory keeping the file's
// name; a source directory lands whole in the destination, only its
// contents when it ends in "/". They enter the build's identity (an
// edited script is another build) and its simulated downloads.
func addUploads(tree *stagedTree, uploads []packer.Upload, req packer.BuildRequest, sums *packer.SumCache) (*stagedTree, error) {
	if len(uploads) == 0 {
		return tree, nil
	}
	added := map[string]stagedFile{}
	for _, u := range uploads {
		dest := u.Destination
		if !path.IsAbs(dest) || strings.ContainsAny(dest, "{$\"") {
			continue // an expression or a relative path: packer resolves it on the VM
		}
		src, err := req.ReadPath(filepath.FromSlash(u.Source))
		if err != nil {
			return nil, err
		}
		info, err := os.Stat(src)
		if err != nil {
			return nil, err
		}
		if !info.IsDir() {
			vm := dest
			if strings.HasSuffix(dest, "/") {
				vm = path.Join(dest, path.Base(u.Source))
			}
			f, err := stagedFileOf(src, info, sums)
			if err != nil {
				return nil, err
			}
			f.Path = path.Clean(vm)
			added[f.Path] = f
			continue
		}
		root := dest
		if !strings.HasSuffix(u.Source, "/") {
			root = path.Join(dest, path.Base(u.Source))
		}
		if req.LinkedInMirror(filepath.FromSlash(u.Source)) {
			// Read in place, src is the checkout's directory; through the
			// mirror it is a link, which WalkDir does not descend into:
			// the build is the same either way. (packer itself uploads
			// the linked directory's files.)
			continue
		}
		err = filepath.WalkDir(src, func(file string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			info, err := os.Stat(file)
			if err != nil || !info.Mode().IsRegular() {
				return err
			}
			f, err := stagedFileOf(file, info, sums)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(src, file)
			f.Path = path.Join(root, filepath.ToSlash(rel))
			added[f.Path] = f
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if len(added) == 0 {
		return tree, nil
	}
	if tree == nil {
		tree = &stagedTree{files: map[string]stagedFile{}}
	}
	names := make([]string, 0, len(added))
	for n := range added {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	h.Write(tree.digest)
	for _, n := range names {
		f := added[n]
		fmt.Fprintf(h, "upload %s %s %d %s\n", n, f.Mode, f.Size, f.SHA256)
		tree.files[n] = f
	}
	tree.digest = h.Sum(nil)
	return tree, nil
}
