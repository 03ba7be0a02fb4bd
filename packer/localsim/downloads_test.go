package localsim

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/packer"
)

func TestDownloadsOfTheAKSTemplates(t *testing.T) {
	for file, want := range map[string][]packer.Download{
		"aks-ubuntu.json": {
			{Source: "/var/log/bcc_installation.log", Name: "bcc-tools-installation.log", ViaVar: true},
			{Source: "/opt/azure/vhd-install.complete", Name: "release-notes.txt", ViaVar: true},
			{Source: "/opt/azure/image-bom.json", Name: "image-bom.json", ViaVar: true},
		},
		"aks-ubuntu-cvm.pkr.hcl": { // HCL2: the destination is an expression
			{Source: "/var/log/bcc_installation.log", Name: "bcc-tools-installation.log", ViaVar: true},
			{Source: "/opt/azure/vhd-install.complete", Name: "release-notes.txt", ViaVar: true},
			{Source: "/opt/azure/image-bom.json", Name: "image-bom.json", ViaVar: true},
		},
		"aks-azurelinux-arm64.json": { // no BCC build on Azure Linux
			{Source: "/opt/azure/vhd-install.complete", Name: "release-notes.txt", ViaVar: true},
			{Source: "/opt/azure/image-bom.json", Name: "image-bom.json", ViaVar: true},
		},
		"sig-marketplace.json": nil,
	} {
		tpl, err := packer.LoadTemplate(filepath.Join("..", "..", "artifacts", "packer", file))
		require.NoError(t, err, file)
		got, err := packer.Downloads(tpl)
		require.NoError(t, err, file)
		assert.Equal(t, want, got, file)
	}
}

// A destination relative to packer's working directory is accepted as
// packer 1.9.5 accepts it (AgentBaker's templates download to
// "image-bom.json"); the old imgflow_downloads_dir form keeps working.
// What packer_build could not read back, or would write outside the
// build's own directory, is refused saying what to write.
func TestDownloadsAcceptsRelativeDestinationsAsPackerDoes(t *testing.T) {
	for dest, want := range map[string]string{
		"image-bom.json":       "image-bom.json",
		"./logs/build.log":     "logs/build.log",
		"logs/":                "logs/x.log", // a directory keeps the file's name, as in packer
		"vhdbuilder/out/x.log": "vhdbuilder/out/x.log",
		"{{user `imgflow_downloads_dir`}}/logs/build.log": "logs/build.log",
		"{{ user `imgflow_downloads_dir` }}/x.txt":        "x.txt",
		"{{user `imgflow_downloads_dir`}}/":               "x.log",
	} {
		tpl, err := packer.ParseTemplate([]byte(`{"builders": [{"type": "azure-arm"}], "provisioners": [
			{"type": "file", "direction": "download", "source": "/var/log/x.log", "destination": "` + dest + `"}]}`))
		require.NoError(t, err)
		got, err := packer.Downloads(tpl)
		require.NoError(t, err, dest)
		require.Len(t, got, 1, dest)
		assert.Equal(t, want, got[0].Name, dest)
		assert.Equal(t, "/var/log/x.log", got[0].Source)
		assert.Equal(t, strings.Contains(dest, "imgflow_downloads_dir"), got[0].ViaVar, dest)
	}
	for dest, why := range map[string]string{
		"/tmp/build.log":                        `an absolute path, outside the build's own directory: write a destination relative to packer's working directory, e.g. "x.log"`,
		"../build.log":                          "outside the build's working directory",
		".":                                     "outside the build's working directory",
		"{{user `imgflow_downloads_dir`}}/../x": "outside the build's working directory",
		"{{user `imgflow_files_dir`}}/x":        "packer_build reads downloads back by a name it knows before the build",
		"{{user `out`}}/x.log":                  "packer_build reads downloads back by a name it knows before the build",
	} {
		tpl, err := packer.ParseTemplate([]byte(`{"builders": [{"type": "azure-arm"}], "provisioners": [
			{"type": "file", "direction": "download", "source": "/var/log/x.log", "destination": "` + dest + `"}]}`))
		require.NoError(t, err)
		_, err = packer.Downloads(tpl)
		require.Error(t, err, dest)
		assert.Contains(t, err.Error(), "provisioner 1 (file, download /var/log/x.log) writes to "+dest+": "+why, dest)
		assert.Contains(t, err.Error(), `returns the file in downloads["x.log"]`, dest)
	}
}

// An HCL2 template's constant destination is read like a JSON one's.
func TestDownloadsOfAnHCL2TemplateWithARelativeDestination(t *testing.T) {
	tpl, err := packer.ParseHCL2Template([]byte(`
source "azure-arm" "a" {
  location = "westeurope"
}
build {
  sources = ["source.azure-arm.a"]
  provisioner "file" {
    direction   = "download"
    source      = "/opt/azure/containers/image-bom.json"
    destination = "image-bom.json"
  }
}
`), "t.pkr.hcl")
	require.NoError(t, err)
	got, err := packer.Downloads(tpl)
	require.NoError(t, err)
	assert.Equal(t, []packer.Download{{Source: "/opt/azure/containers/image-bom.json", Name: "image-bom.json"}}, got)
}

func TestDownloadAppliesToTheBuildsItNames(t *testing.T) {
	d := packer.Download{Only: []string{"a"}}
	assert.True(t, d.AppliesTo("a"))
	assert.False(t, d.AppliesTo("b"))
	assert.False(t, packer.Download{Except: []string{"a"}}.AppliesTo("a"))
	assert.True(t, packer.Download{}.AppliesTo("a"))
}
