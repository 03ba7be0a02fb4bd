package builtins

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/packer"
	"github.com/imgflow/imgflow/packer/localsim"
)

// A simulated build of the validation pass (a dry-run view, which has no
// scratch dir) writes its VHD in the run's own temporary place, which gc
// and resume remove, not in $TMPDIR where a killed run would leave it
// (the kill matrix found one there).
func TestSimulatedBuildOfTheValidationPassUsesTheRunsTempDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "imgflow-run-x")
	r := &Run{Validating: true, TempDir: dir, Packer: realPacker{}, Workspace: simulating()}
	pb, simulated, err := r.packerBuilder()
	require.NoError(t, err)
	assert.True(t, simulated)
	b, ok := pb.(*localsim.Builder)
	require.True(t, ok, "the validation pass simulates the build, even with a packer")
	assert.Equal(t, dir, b.TempDir)
	assert.DirExists(t, dir)
}

// simulating is a workspace with packer/localsim plugged in, as
// internal/localpacker plugs it (which this package's own tests cannot
// import).
func simulating() *Workspace {
	sim := localsim.NewSimulator("")
	return &Workspace{SimulatePacker: func(p cloud.Provider, tempDir string, subs func(context.Context, string) (cloud.Provider, error)) PackerBuilder {
		b := sim(p, tempDir)
		b.Subscriptions = subs
		return b
	}}
}

// Without a simulator, a run that has no packer says what is missing
// rather than building nothing.
func TestABuildWithoutPackerOrSimulatorFails(t *testing.T) {
	_, _, err := (&Run{Workspace: &Workspace{}}).packerBuilder()
	require.ErrorContains(t, err, "no packer simulator")
	b, simulated, err := (&Run{Packer: realPacker{}}).packerBuilder()
	require.NoError(t, err, "the apply pass with a packer needs no simulator")
	assert.False(t, simulated)
	assert.IsType(t, realPacker{}, b)
}

// realPacker stands for packer.Runner: a builder that is not the simulation.
type realPacker struct{}

func (realPacker) Build(context.Context, packer.BuildRequest) (*packer.Result, error) {
	return nil, errors.New("no packer here")
}
