package main

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// plan runs the workflow's code as run does, under the same budget.
func TestPlanStopsAtTheMemoryBudget(t *testing.T) {
	root := repoRoot(t)
	res := imgflow(t, "plan", "--root", root, "--target", "local", "--state", t.TempDir(), "--max-memory", "300MiB", filepath.Join(root, "testdata", "cli", "grow.star"))
	require.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stderr, "testdata/cli/grow.star:6:")
	assert.Contains(t, res.stderr, "memory budget exceeded")
	assert.Contains(t, res.stderr, "more than its limit of 300.0 MiB")
}

// Under an address-space limit below the budget's reach, a growing
// workflow ends with the budget's error at its line, not with the Go
// runtime's "fatal error: out of memory" dump.
func TestPlanUnderAnAddressSpaceLimitFailsWithoutADump(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("ulimit -v and /proc/self/statm are Linux's")
	}
	t.Parallel() // a process of its own, with its own limit
	bin := buildImgflow(t)
	root := repoRoot(t)
	cmd := exec.Command("sh", "-c", `ulimit -v 2500000 && exec "$0" "$@"`, bin, "plan", "--root", root, "--target", "local",
		"--state", t.TempDir(), "--max-memory", "8GiB", filepath.Join(root, "testdata", "cli", "grow.star"))
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	assert.NotContains(t, string(out), "fatal error")
	assert.Contains(t, string(out), "testdata/cli/grow.star:6:")
	assert.Contains(t, string(out), "memory budget exceeded")
	assert.Contains(t, string(out), "ulimit -v")
}
