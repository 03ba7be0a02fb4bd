package localsim

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/packer"
)

func TestDownloadsOfTheAKSTemplates(t *testing.T) {
	for file, want := range map[string][]Download{
		"aks-ubuntu.json": {
			{Source: "/var/log/bcc_installation.log", Name: "bcc-tools-installation.log"},
			{Source: "/opt/azure/vhd-install.complete", Name: "release-notes.txt"},
			{Source: "/opt/azure/image-bom.json", Name: "image-bom.json"},
		},
		"aks-ubuntu-cvm.pkr.hcl": { // HCL2: the destination is an expression
			{Source: "/var/log/bcc_installation.log", Name: "bcc-tools-installation.log"},
			{Source: "/opt/azure/vhd-install.complete", Name: "release-notes.txt"},
			{Source: "/opt/azure/image-bom.json", Name: "image-bom.json"},
		},
		"aks-azurelinux-arm64.json": { // no BCC build on Azure Linux
			{Source: "/opt/azure/vhd-install.complete", Name: "release-notes.txt"},
			{Source: "/opt/azure/image-bom.json", Name: "image-bom.json"},
		},
		"sig-marketplace.json": nil,
	} {
		tpl, err := packer.LoadTemplate(filepath.Join("..", "..", "artifacts", "packer", file))
		require.NoError(t, err, file)
		got, err := Downloads(tpl)
		require.NoError(t, err, file)
		assert.Equal(t, want, got, file)
	}
}

func TestDownloadsRefusesADestinationOutsideTheDownloadsDir(t *testing.T) {
	for dest, ok := range map[string]bool{
		"{{user `imgflow_downloads_dir`}}/logs/build.log": true,
		"{{ user `imgflow_downloads_dir` }}/x.txt":        true,
		"build.log":                             false,
		"/tmp/build.log":                        false,
		"{{user `imgflow_downloads_dir`}}/":     false, // a directory: name the file
		"{{user `imgflow_downloads_dir`}}/../x": false,
		"{{user `imgflow_files_dir`}}/x":        false,
	} {
		tpl, err := packer.ParseTemplate([]byte(`{"builders": [{"type": "azure-arm"}], "provisioners": [
			{"type": "file", "direction": "download", "source": "/var/log/x", "destination": "` + dest + `"}]}`))
		require.NoError(t, err)
		_, err = Downloads(tpl)
		if ok {
			assert.NoError(t, err, dest)
			continue
		}
		require.Error(t, err, dest)
		assert.Contains(t, err.Error(), "download into the build's downloads directory", dest)
	}
}

func TestDownloadAppliesToTheBuildsItNames(t *testing.T) {
	d := Download{Only: []string{"a"}}
	assert.True(t, d.appliesTo("a"))
	assert.False(t, d.appliesTo("b"))
	assert.False(t, Download{Except: []string{"a"}}.appliesTo("a"))
	assert.True(t, Download{}.appliesTo("a"))
}
