package localsim

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/guest"
	"github.com/imgflow/imgflow/packer"
)

// guestTemplate provisions like the AKS templates: staged uploads to
// /home/packer, install-files.sh with the install list, install-bcc.sh.
const guestTemplate = `{
  "variables": {"sa": null, "rg": null, "imgflow_files_dir": "", "imgflow_installs": "", "bcc_version": ""},
  "builders": [{
    "type": "azure-arm", "os_type": "Linux", "location": "westeurope", "os_disk_size_gb": "1",
    "image_publisher": "Canonical", "image_offer": "ubuntu", "image_sku": "22_04-lts",
    "storage_account": "{{user ` + "`sa`" + `}}", "resource_group_name": "{{user ` + "`rg`" + `}}",
    "capture_container_name": "aks-vhds", "capture_name_prefix": "aks"
  }],
  "provisioners": [
    {"type": "file", "source": "{{user ` + "`imgflow_files_dir`" + `}}/home/packer/", "destination": "/home/packer/"},
    {"type": "shell", "script": "{{template_dir}}/../scripts/install-files.sh",
     "environment_vars": ["IMGFLOW_INSTALLS={{user ` + "`imgflow_installs`" + `}}"]},
    {"type": "shell", "script": "{{template_dir}}/../scripts/install-bcc.sh",
     "environment_vars": ["BCC_VERSION={{user ` + "`bcc_version`" + `}}"]}
  ]
}`

// readGuest reads the content record of a simulated build's VHD.
func readGuest(t *testing.T, p interface {
	ReadBlob(context.Context, cloud.BlobRef, int64, int64) ([]byte, error)
}, url string) *guest.GuestContent {
	t.Helper()
	ref, err := cloud.ParseBlobURL(url)
	require.NoError(t, err)
	data, err := p.ReadBlob(context.Background(), ref, guest.GuestContentOffset, guest.GuestContentMax)
	require.NoError(t, err)
	g, err := guest.DecodeGuestContent(data)
	require.NoError(t, err)
	return g
}

func TestBuildRecordsGuestContent(t *testing.T) {
	p := newCloud(t)
	files := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(files, "home/packer"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(files, "home/packer/cse_config.sh"), []byte("#!/bin/bash\necho cse\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(files, "home/packer/aks-mglru.conf"), []byte("w! /sys/kernel/mm/lru_gen/enabled - - - - 0\n"), 0o644))
	req := packer.BuildRequest{TemplatePath: writeTemplate(t, guestTemplate), Vars: map[string]string{
		"sa": "aksvhds", "rg": "rg", packer.FilesDirVar: files, "bcc_version": "v0.29.0",
		"imgflow_installs": "/home/packer/cse_config.sh:/opt/azure/containers/provision_configs.sh:0744 /home/packer/aks-mglru.conf:/etc/tmpfiles.d/aks-mglru.conf:0644",
	}}
	res, err := New(p).Build(context.Background(), req)
	require.NoError(t, err)

	g := readGuest(t, p, res.OSDiskVHDURL)
	assert.Equal(t, []string{"/etc/tmpfiles.d/aks-mglru.conf", "/home/packer/aks-mglru.conf", "/home/packer/cse_config.sh", "/opt/azure/containers/provision_configs.sh"}, g.SortedPaths())
	assert.Equal(t, guest.GuestFile{Mode: "0744", Size: 21, Text: "#!/bin/bash\necho cse\n"}, g.Files["/opt/azure/containers/provision_configs.sh"])
	assert.Equal(t, "0644", g.Files["/home/packer/cse_config.sh"].Mode, "the upload keeps its staged mode")
	assert.Equal(t, "0644", g.Files["/etc/tmpfiles.d/aks-mglru.conf"].Mode)
	assert.Equal(t, map[string]string{"bcc": "0.29.0"}, g.Packages)
	assert.Equal(t, int64(2*21+2*44), g.UsedBytes)
}

func TestBuildRecordsNoInstallOfAFileNotUploaded(t *testing.T) {
	p := newCloud(t)
	files := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(files, "home/packer"), 0o755))
	req := packer.BuildRequest{TemplatePath: writeTemplate(t, guestTemplate), Vars: map[string]string{
		"sa": "aksvhds", "rg": "rg", packer.FilesDirVar: files, "imgflow_installs": "/home/packer/missing.sh:/opt/x.sh:0744",
	}}
	_, err := New(p).Build(context.Background(), req)
	assert.ErrorContains(t, err, "install-files: /home/packer/missing.sh was not uploaded", "as the script fails the build")
}
