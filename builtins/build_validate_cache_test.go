//go:build unix

package builtins_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/cloud/local"
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
		cache, err := packer.OpenValidateCache(dir, nil)
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
	cache, err := packer.OpenValidateCache(filepath.Join(t.TempDir(), "cache"), nil)
	require.NoError(t, err)
	for range 3 {
		require.NoError(t, f.plan(vhdMarketplaceStar, builtins.PackerValidateOnce(builtins.PackerValidateCached(runner, cache))).Err)
	}
	assert.Equal(t, 1, packerRuns(t, calls))
}

func TestPlansOfTargetsWithNewSubscriptionsShareTheCachedVerdict(t *testing.T) {
	runner, calls := countingFakePacker(t, "vhd")
	cache, err := packer.OpenValidateCache(filepath.Join(t.TempDir(), "cache"), nil)
	require.NoError(t, err)
	subs := map[string]bool{}
	for range 3 {
		// A local target no run has written draws a new subscription at
		// every plan; the build's subscription_id var is that one.
		f := newBuildFixture(t)
		p, err := local.NewMemory(local.Options{Now: func() time.Time { return snippetTime }})
		require.NoError(t, err)
		t.Cleanup(func() { assert.NoError(t, p.Close()) })
		f.cloud, f.apply = p, p
		subs[p.SubscriptionID()] = true
		require.NoError(t, f.plan(vhdMarketplaceStar, builtins.PackerValidateOnce(builtins.PackerValidateCached(runner, cache))).Err)
	}
	require.Len(t, subs, 3)
	assert.Equal(t, 1, packerRuns(t, calls), "packer validate never calls Azure: the subscription cannot change its verdict")
}
