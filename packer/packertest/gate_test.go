package packertest

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// usesPacker matches a test that runs the real packer.
var usesPacker = regexp.MustCompile(`packertest\.Require\(|testtool\.Require\(t, "packer"`)

// TestMakefileGatesEveryPackageThatRunsPacker holds the Makefile's
// PACKER_TESTS to the packages whose tests run packer: `make test` starts
// those only once packer's background build is done, so on a fresh
// machine a package missing from the list fails (CI=true) before packer
// exists.
func TestMakefileGatesEveryPackageThatRunsPacker(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^PACKER_TESTS\s*:=\s*(.*)$`).FindSubmatch(makefile)
	require.NotNil(t, m, "the Makefile sets PACKER_TESTS")
	gated := map[string]bool{}
	for _, p := range strings.Fields(string(m[1])) {
		gated[p] = true
	}

	need := map[string]bool{}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "third_party" || n == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") || filepath.Dir(path) == mustAbs(t, ".") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if usesPacker.Match(src) {
			rel, err := filepath.Rel(root, filepath.Dir(path))
			require.NoError(t, err)
			need["./"+filepath.ToSlash(rel)] = true
		}
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, need)
	for pkg := range need {
		assert.True(t, gated[pkg], "%s runs packer in its tests: add it to the Makefile's PACKER_TESTS", pkg)
	}
}

func mustAbs(t *testing.T, p string) string {
	a, err := filepath.Abs(p)
	require.NoError(t, err)
	return a
}
