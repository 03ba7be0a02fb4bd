package local

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What a killed process left in the state dir, a state save's temp file
// or a file in the scratch directory (a simulated build's VHD), goes when
// the state is next opened for a change (a resume, gc).
func TestOpenRemovesTheTemporariesOfAKilledProcess(t *testing.T) {
	dir := t.TempDir()
	p, err := Open(dir, Options{})
	require.NoError(t, err)
	vhd := filepath.Join(p.ScratchDir(), "imgflow-localsim-1.vhd")
	require.NoError(t, os.WriteFile(vhd, []byte("x"), 0o600))
	save := filepath.Join(dir, ".state-42.json")
	require.NoError(t, os.WriteFile(save, []byte("{"), 0o600))
	require.NoError(t, p.Close())

	p, err = Open(dir, Options{ReadOnly: true})
	require.NoError(t, err)
	require.NoError(t, p.Close())
	assert.FileExists(t, vhd, "a display never cleans")

	p, err = Open(dir, Options{})
	require.NoError(t, err)
	defer p.Close()
	assert.NoFileExists(t, vhd)
	assert.NoFileExists(t, save)
	assert.DirExists(t, p.ScratchDir())
}
