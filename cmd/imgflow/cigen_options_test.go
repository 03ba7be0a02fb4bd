package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// imgflow ci refuses options its consumers would not take, before it
// writes anything: a shell word in --imgflow-version would otherwise run
// in every job.
func TestCIRefusesBadOptions(t *testing.T) {
	root := repoRoot(t)
	aks := filepath.Join(root, "releases", "aks.star")
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--max-parallel", "-1"}, "--max-parallel -1: want 0"},
		{[]string{"--run-target", "bogus"}, `--run-target "bogus": want azure or local`},
		{[]string{"--imgflow-version", "v1; touch pwned"}, `--imgflow-version "v1; touch pwned": want a version go install takes`},
		{[]string{"--imgflow-version", "-v1"}, "--imgflow-version"},
		{[]string{"--go-version", "1.26 && x"}, "--go-version"},
		{[]string{"--packer-version", "1.9.5/../x"}, "--packer-version"},
	} {
		args := append(append([]string{"ci", "--root", root}, tc.flags...), "github", aks)
		res := imgflow(t, args...)
		assert.Equal(t, 1, res.code, "%v", tc.flags)
		assert.Contains(t, res.stderr, tc.want, "%v", tc.flags)
		assert.Empty(t, res.stdout, "%v", tc.flags)
	}
	for _, v := range []string{"latest", "v1.4.0", "v0.0.0-20260101000000-0123456789ab", "0123456789abcdef", "main"} {
		res := imgflow(t, "ci", "--root", root, "--imgflow-version", v, "github", aks)
		assert.Equal(t, 0, res.code, "%s: %s", v, res.stderr)
		assert.Contains(t, res.stdout, "go install github.com/imgflow/imgflow/cmd/imgflow@"+v)
	}
}

// A release file that does not exist is reported as missing, not as "not
// a release file".
func TestMissingReleaseFileIsSaidToBeMissing(t *testing.T) {
	root := repoRoot(t)
	missing := filepath.Join(root, "releases", "no-such-release.star")
	res := imgflow(t, "ci", "--root", root, "github", missing)
	assert.Equal(t, 1, res.code)
	assert.Contains(t, res.stderr, "release file "+missing+" does not exist")
	assert.NotContains(t, res.stderr, "not a release file")

	res = imgflow(t, "runs", "--root", root, "--journal", t.TempDir(), "--release", missing)
	assert.Equal(t, 1, res.code)
	assert.Contains(t, res.stderr, "does not exist")
}

// What imgflow ci pastes into run: lines is a shell word each.
func TestCICommandsQuoteTheirWords(t *testing.T) {
	o := ciOptions{imgflowVersion: "v1.2.3", target: "azure"}
	assert.Equal(t, "go install github.com/imgflow/imgflow/cmd/imgflow@v1.2.3", installCommand(o))
	o.imgflowVersion = "v1 x"
	assert.Equal(t, "go install 'github.com/imgflow/imgflow/cmd/imgflow@v1 x'", installCommand(o))
}
