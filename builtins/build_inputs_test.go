package builtins_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// inputTemplate uploads a file a pipeline downloads into its working
// directory before packer runs (AgentBaker's kata-containers.img), and
// fetches it back so the test sees what the build uploaded.
const inputTemplate = `{
  "builders": [{"type": "azure-arm", "use_azure_cli_auth": true, "location": "westeurope", "os_type": "Linux", "vm_size": "Standard_D2s_v3",
    "image_publisher": "Canonical", "image_offer": "o", "image_sku": "s",
    "managed_image_name": "img", "managed_image_resource_group_name": "rg", "skip_create_image": true}],
  "provisioners": [
    {"type": "file", "source": "kata-containers.img", "destination": "/home/packer/kata-containers.img"},
    {"type": "file", "direction": "download", "source": "/home/packer/kata-containers.img", "destination": "uploaded.img"}
  ]
}
`

func newInputSandbox(t *testing.T) *snippetSandbox {
	s := newSnippetSandbox(t)
	s.write("ab/t.json", inputTemplate)
	s.write("downloads/kata.img", "kata uvm\n")
	return s
}

// An input appears at its path in the build's directory: the build
// uploads it, and the checkout (cwd) is not written.
func TestPackerBuildPlacesAnInputInItsOwnDirectory(t *testing.T) {
	s := newInputSandbox(t)
	res := s.mustRun(`resource_group("rg", location = "westeurope")
b = packer_build("ab/t.json", cwd = "ab", inputs = {"kata-containers.img": "//downloads/kata.img"})
output("uploaded", b.downloads["uploaded.img"])
`, nil)
	assert.Equal(t, "kata uvm\n", outputsOf(res)["uploaded"])
	assert.NoFileExists(t, filepath.Join(s.ws.Root, "ab", "kata-containers.img"), "the checkout is not written")
	entries, err := os.ReadDir(filepath.Join(s.ws.Root, "ab"))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "only the template: nothing left in cwd")
}

// Without the input the build is refused before anything runs, saying
// how to pass it; a missing input file or a path outside cwd are refused
// too.
func TestPackerBuildRefusesAMissingInput(t *testing.T) {
	s := newInputSandbox(t)
	msg := s.mustFail(`resource_group("rg", location = "westeurope")
packer_build("ab/t.json", cwd = "ab")
`, nil)
	assert.Contains(t, msg, `if it comes from elsewhere, pass it: inputs = {"kata-containers.img": "//path/to/it"}`)
	assert.Empty(t, s.cloud.Snapshot().ResourceGroups, "refused before anything runs")

	msg = s.mustFail(`packer_build("ab/t.json", cwd = "ab", inputs = {"kata-containers.img": "//downloads/none.img"})
`, nil)
	assert.Contains(t, msg, "inputs[\"kata-containers.img\"]: downloads/none.img is not a file in the workspace")

	msg = s.mustFail(`packer_build("ab/t.json", cwd = "ab", inputs = {"../kata-containers.img": "//downloads/kata.img"})
`, nil)
	assert.Contains(t, msg, "inputs[\"../kata-containers.img\"]: want a path inside cwd")
}
