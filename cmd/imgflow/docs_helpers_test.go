package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// WORKFLOWS.md names only test helpers workflows/helpers_test.star has,
// and the docs use the current flags.
func TestDocsNameRealTestHelpersAndFlags(t *testing.T) {
	root := repoRoot(t)
	helpers, err := os.ReadFile(filepath.Join(root, "workflows", "helpers_test.star"))
	require.NoError(t, err)
	_, fields, ok := strings.Cut(string(helpers), "\nt = struct(")
	require.True(t, ok, "helpers_test.star defines t = struct(…)")
	have := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+(\w+) = `).FindAllStringSubmatch(fields, -1) {
		have[m[1]] = true
	}
	doc, err := os.ReadFile(filepath.Join(root, "WORKFLOWS.md"))
	require.NoError(t, err)
	used := regexp.MustCompile("`t\\.(\\w+)").FindAllStringSubmatch(string(doc), -1)
	require.NotEmpty(t, used)
	for _, m := range used {
		assert.True(t, have[m[1]], "WORKFLOWS.md names t.%s, which helpers_test.star does not define", m[1])
	}
	for _, name := range []string{"README.md", "WORKFLOWS.md"} {
		text, err := os.ReadFile(filepath.Join(root, name))
		require.NoError(t, err)
		assert.NotRegexp(t, `imgflow (state|runs)[^\n]*--json`, string(text), "%s: --json is deprecated, use --output json", name)
	}
}
