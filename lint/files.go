package lint

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// StarFiles lists the .star files named by paths: files as given,
// directories walked (hidden directories skipped), "dir/..." like dir.
// The result is sorted and has no duplicates.
func StarFiles(paths []string) ([]string, error) {
	seen := map[string]bool{}
	var files []string
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			files = append(files, p)
		}
	}
	for _, p := range paths {
		p = strings.TrimSuffix(p, "/...")
		info, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !info.IsDir() {
			add(filepath.Clean(p))
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && path != p && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(d.Name(), ".star") {
				add(path)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("find .star files in %s: %w", p, err)
		}
	}
	sort.Strings(files)
	return files, nil
}
