package builtins

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/packer/localsim"
)

// A simulated build of the validation pass (a dry-run view, which has no
// scratch dir) writes its VHD in the run's own temporary place, which gc
// and resume remove, not in $TMPDIR where a killed run would leave it
// (the kill matrix found one there).
func TestSimulatedBuildOfTheValidationPassUsesTheRunsTempDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "imgflow-run-x")
	r := &Run{Validating: true, TempDir: dir}
	b, ok := r.packerBuilder().(*localsim.Builder)
	require.True(t, ok, "the validation pass simulates the build")
	assert.Equal(t, dir, b.TempDir)
	assert.DirExists(t, dir)
}
