// Command lister writes a bill of materials of a directory tree as JSON:
// every regular file with its mode, size and SHA-256, sorted by path. The
// AKS templates upload it and run it on the build VM over
// /opt/azure/containers, so the image's installed scripts are recorded.
//
// It is imgflow's small stand-in for AgentBaker's lister binary, built by
// artifacts/build-tools/Makefile before packer runs.
//
//	lister DIR > bom.json
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// entry is one file of the tree.
type entry struct {
	Path   string `json:"path"`
	Mode   string `json:"mode"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: lister DIR")
		os.Exit(2)
	}
	entries, err := list(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "lister:", err)
		os.Exit(1)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(entries); err != nil {
		fmt.Fprintln(os.Stderr, "lister:", err)
		os.Exit(1)
	}
}

// list walks root in lexical order (filepath.WalkDir's order).
func list(root string) ([]entry, error) {
	out := []entry{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		sum, err := hashFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		out = append(out, entry{Path: filepath.ToSlash(rel), Mode: fmt.Sprintf("%04o", info.Mode().Perm()), Size: info.Size(), SHA256: sum})
		return nil
	})
	return out, err
}

func hashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
