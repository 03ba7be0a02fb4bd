package builtins

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud/local"
	"github.com/imgflow/imgflow/packer/localsim"
)

// A simulated build on the local target writes its VHD in the state's
// scratch directory, which the next open of the state empties, not in
// $TMPDIR, where a killed run left up to 30 GiB.
func TestASimulatedBuildWritesInTheStatesScratchDir(t *testing.T) {
	p, err := local.Open(t.TempDir(), local.Options{})
	require.NoError(t, err)
	defer p.Close()
	pb, _, err := (&Run{Provider: p, Workspace: simulating()}).packerBuilder()
	require.NoError(t, err)
	b, ok := pb.(*localsim.Builder)
	require.True(t, ok)
	assert.Equal(t, p.ScratchDir(), b.TempDir)
}
