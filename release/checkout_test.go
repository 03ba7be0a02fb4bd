package release

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func capzTargets(rel *Release) []string {
	var out []string
	for _, j := range rel.Jobs {
		out = append(out, j.Vars["generations"]+"/"+j.Vars["targets"])
	}
	return out
}

// releases/capz.star lists a job per target of the checkout given with
// --var image_builder (var() and read_text()), Windows and 26.04 included.
func TestCAPZReleaseListsTheCheckoutsTargets(t *testing.T) {
	ws := repo(t)
	rel, err := LoadVars(context.Background(), ws, "//releases/capz.star", map[string]string{"image_builder": "//testdata/image-builder"})
	require.NoError(t, err)
	assert.Equal(t, []string{
		"gen1/ubuntu-2204", "gen1/ubuntu-2404", "gen1/ubuntu-2604", "gen1/azurelinux-3", "gen1/windows-2022-containerd", "gen1/windows-2025-containerd",
		"gen2/ubuntu-2204", "gen2/ubuntu-2404", "gen2/ubuntu-2604", "gen2/azurelinux-3",
		"cvm/ubuntu-2204", "cvm/ubuntu-2404", "cvm/windows-2022-containerd",
	}, capzTargets(rel), "flatcar is releases/flatcar.star's")

	scratchWS := scratch(t, `
job("workflows/w.star", os = var("os", "Ubuntu"), os_version = read_text("//releases/r.star", default = "")[:2])
job("workflows/w.star", os = "Windows", os_version = read_text("//nothing.txt", default = "none"))
`)
	rel, err = LoadVars(context.Background(), scratchWS, "//releases/r.star", map[string]string{"os": "Flatcar"})
	require.NoError(t, err)
	assert.Equal(t, "Flatcar", rel.Jobs[0].Vars["os"], "var() sees the command's --var")
	assert.Equal(t, "\njob"[:2], rel.Jobs[0].Vars["os_version"], "read_text() reads a workspace file")
	assert.Equal(t, "none", rel.Jobs[1].Vars["os_version"], "a missing file is the default")
}

// Without a checkout the release falls back to the lists it pins, so CI
// files can be generated on a machine without one.
func TestCAPZReleaseWithoutACheckoutUsesItsFallbackTargets(t *testing.T) {
	rel, err := LoadVars(context.Background(), repo(t), "//releases/capz.star", map[string]string{"image_builder": "//no/such/checkout"})
	require.NoError(t, err)
	assert.Contains(t, capzTargets(rel), "cvm/windows-2022-containerd")
	assert.Contains(t, capzTargets(rel), "gen2/ubuntu-2604")
}

func TestReleaseReadTextStaysInTheWorkspace(t *testing.T) {
	ws := scratch(t, `job("workflows/w.star", os = read_text("//../etc/passwd", default = "x"))`)
	_, err := Load(context.Background(), ws, "//releases/r.star")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "read_text")
}
