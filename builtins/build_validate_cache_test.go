//go:build unix

package builtins_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/packer"
)

// countingFakePacker is testdata's fake packer behind a wrapper that logs
// each run to the returned file.
func countingFakePacker(t *testing.T, mode string) (*packer.Runner, string) {
	t.Helper()
	fake, err := filepath.Abs("../testdata/packer/fake-packer.sh")
	require.NoError(t, err)
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	bin := filepath.Join(dir, "packer")
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\necho \"$1\" >>'"+calls+"'\nexec '"+fake+"' \"$@\"\n"), 0o755))
	return &packer.Runner{Binary: bin, Env: []string{"FAKE_PACKER_MODE=" + mode}}, calls
}

func packerRuns(t *testing.T, calls string) int {
	t.Helper()
	data, err := os.ReadFile(calls)
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	return strings.Count(string(data), "validate\n")
}

func TestPlanShowsACachedPackerFailureAtTheCall(t *testing.T) {
	f := newBuildFixture(t)
	runner, calls := countingFakePacker(t, "fail")
	dir := filepath.Join(t.TempDir(), "cache")
	plan := func() string {
		// A new cache and once-wrapper per plan: a new imgflow process.
		cache, err := packer.OpenValidateCache(dir)
		require.NoError(t, err)
		res := f.plan(vhdMarketplaceStar, builtins.PackerValidateOnce(builtins.PackerValidateCached(runner, cache)))
		require.Error(t, res.Err)
		return res.Err.Error()
	}
	first := plan()
	assert.Equal(t, 1, packerRuns(t, calls))
	second := plan()
	assert.Equal(t, 1, packerRuns(t, calls), "the second plan's build (its files staged anew, the same files) is in the cache")
	assert.Equal(t, first, second, "the cached failure is shown as the failure")
	assert.Contains(t, second, vhdMarketplaceStar+":9:", "at the packer_build call")
	assert.Contains(t, second, "packer validate artifacts/packer/vhd-marketplace.json failed (exit status 1):")
	assert.Contains(t, second, "Bad script")
}

func TestPlanWithAValidatedBuildInTheCacheRunsNoPacker(t *testing.T) {
	f := newBuildFixture(t)
	runner, calls := countingFakePacker(t, "vhd")
	cache, err := packer.OpenValidateCache(filepath.Join(t.TempDir(), "cache"))
	require.NoError(t, err)
	for range 3 {
		require.NoError(t, f.plan(vhdMarketplaceStar, builtins.PackerValidateOnce(builtins.PackerValidateCached(runner, cache))).Err)
	}
	assert.Equal(t, 1, packerRuns(t, calls))
}
