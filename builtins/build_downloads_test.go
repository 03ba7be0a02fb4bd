package builtins_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// downloadsTemplate provisions a VM (capturing nothing) and downloads an
// uploaded file, release notes and a JSON BOM.
const downloadsTemplate = `{
  "variables": {"imgflow_files_dir": null, "imgflow_downloads_dir": null, "token": ""},
  "sensitive-variables": ["token"],
  "builders": [{
    "type": "azure-arm", "use_azure_cli_auth": true,
    "location": "westeurope", "os_type": "Linux", "vm_size": "Standard_D2s_v3",
    "image_publisher": "Canonical", "image_offer": "ubuntu-24_04-lts", "image_sku": "server", "image_version": "latest",
    "managed_image_name": "img", "managed_image_resource_group_name": "rg", "skip_create_image": true
  }],
  "provisioners": [
    {"type": "file", "source": "{{user ` + "`imgflow_files_dir`" + `}}/home/packer/", "destination": "/home/packer/"},
    {"type": "shell", "inline": ["echo {{user ` + "`token`" + `}} > /dev/null"]},
    {"type": "file", "direction": "download", "source": "/home/packer/config.txt", "destination": "{{user ` + "`imgflow_downloads_dir`" + `}}/config.txt"},
    {"type": "file", "direction": "download", "source": "/opt/azure/vhd-install.complete", "destination": "{{user ` + "`imgflow_downloads_dir`" + `}}/release-notes.txt"},
    {"type": "file", "direction": "download", "source": "/opt/azure/image-bom.json", "destination": "{{user ` + "`imgflow_downloads_dir`" + `}}/image-bom.json"}
  ]
}
`

func TestPackerBuildReturnsWhatTheTemplateDownloads(t *testing.T) {
	s := newSnippetSandbox(t)
	s.write("t.json", downloadsTemplate)
	s.write("config.txt", "setting=1\ntoken=s3cr3t-value\n")
	t.Setenv("IMGFLOW_SECRET_TOKEN", "s3cr3t-value")
	res := s.mustRun(`
resource_group("rg", location = "westeurope")
b = packer_build("t.json", vars = {"token": secret("token")}, files = ["config.txt:/home/packer/config.txt"])
output("names", sorted(b.downloads.keys()))
output("config", b.downloads["config.txt"])
output("notes", b.downloads["release-notes.txt"])
output("bom", json.decode(b.downloads["image-bom.json"]))
`, nil)
	out := outputsOf(res)
	assert.Equal(t, []any{"config.txt", "image-bom.json", "release-notes.txt"}, out["names"])
	assert.Equal(t, "setting=1\ntoken=<secret>\n", out["config"], "an uploaded file comes back as uploaded, secrets redacted")
	notes := out["notes"].(string)
	assert.Contains(t, notes, "/opt/azure/vhd-install.complete of build azure-arm, simulated by imgflow: no VM ran")
	assert.Contains(t, notes, "sku=server")
	assert.Contains(t, notes, "/home/packer/config.txt 0644")
	assert.NotContains(t, notes, "token", "secret variables are not described")
	bom := out["bom"].(map[string]any)
	assert.Equal(t, map[string]any{"publisher": "Canonical", "offer": "ubuntu-24_04-lts", "sku": "server", "version": "latest"}, bom["source_image"])
	files := bom["files"].([]any)
	require.Len(t, files, 1)
	assert.Equal(t, "/home/packer/config.txt", files[0].(map[string]any)["path"])
}

// checkoutTemplate has the shape of AgentBaker's: it uploads files from
// the checkout by paths relative to packer's working directory and
// downloads to relative destinations, no imgflow variable in sight.
const checkoutTemplate = `{
  "variables": {"sku": "{{env ` + "`IMG_SKU`" + `}}"},
  "builders": [{"type": "azure-arm", "use_azure_cli_auth": true, "location": "westeurope", "os_type": "Linux", "vm_size": "Standard_D2s_v3",
    "image_publisher": "Canonical", "image_offer": "o", "image_sku": "{{user ` + "`sku`" + `}}",
    "managed_image_name": "img", "managed_image_resource_group_name": "rg", "skip_create_image": true}],
  "provisioners": [
    {"type": "file", "source": "parts/linux/provision.sh", "destination": "/home/packer/provision.sh"},
    {"type": "file", "direction": "download", "source": "/home/packer/provision.sh", "destination": "provision-copy.sh"},
    {"type": "file", "direction": "download", "source": "/opt/azure/containers/image-bom.json", "destination": "image-bom.json"},
    {"type": "file", "direction": "download", "source": "/opt/azure/vhd-install.complete", "destination": "release-notes.txt"},
    {"type": "file", "direction": "download", "source": "/var/log/build.log", "destination": "parts/logs/"}
  ]
}
`

// A template downloading to relative destinations runs unmodified: two
// builds of one run, in parallel, each get their own files (the build's
// SKU in them), under the names the template wrote, and the checkout
// they run from is untouched.
func TestPackerBuildReturnsRelativeDownloadsOfParallelBuilds(t *testing.T) {
	s := newSnippetSandbox(t)
	s.write("ab/vhdbuilder/packer/t.json", checkoutTemplate)
	s.write("ab/parts/linux/provision.sh", "#!/bin/sh\necho provision\n")
	s.write("ab/image-bom.json", "the checkout's own file\n")
	before := treeOf(t, filepath.Join(s.ws.Root, "ab"))
	res := s.mustRun(`
resource_group("rg", location = "westeurope")
def build(sku):
    return lambda: packer_build("ab/vhdbuilder/packer/t.json", cwd = "ab", env = {"IMG_SKU": sku})
a, b = parallel([build("sku-a"), build("sku-b")])
output("names", sorted(a.downloads.keys()))
output("a", a.downloads["image-bom.json"])
output("b", b.downloads["image-bom.json"])
output("copy", a.downloads["provision-copy.sh"])
output("log", b.downloads["parts/logs/build.log"])
`, nil)
	out := outputsOf(res)
	assert.Equal(t, []any{"image-bom.json", "parts/logs/build.log", "provision-copy.sh", "release-notes.txt"}, out["names"])
	assert.Contains(t, out["a"], `"sku": "sku-a"`)
	assert.Contains(t, out["b"], `"sku": "sku-b"`)
	assert.Contains(t, out["log"], "/var/log/build.log of build azure-arm")
	assert.Equal(t, before, treeOf(t, filepath.Join(s.ws.Root, "ab")), "nothing written into the checkout")
	leftovers, _ := filepath.Glob(filepath.Join(os.TempDir(), "imgflow-build-*"))
	for _, dir := range leftovers {
		_, err := os.Stat(filepath.Join(dir, "cwd", "vhdbuilder", "packer", "t.json"))
		assert.Error(t, err, "the build's directory %s is removed", dir)
	}
}

// treeOf maps every path under dir to its content.
func treeOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(data)
		return err
	}))
	return out
}

func TestPackerBuildRefusesADownloadOutsideItsDirectory(t *testing.T) {
	s := newSnippetSandbox(t)
	s.write("t.json", `{
  "builders": [{"type": "azure-arm", "subscription_id": "00000000-0000-0000-0000-000000000000", "location": "westeurope", "os_type": "Linux",
    "image_publisher": "Canonical", "image_offer": "o", "image_sku": "s",
    "managed_image_name": "img", "managed_image_resource_group_name": "rg", "skip_create_image": true}],
  "provisioners": [{"type": "file", "direction": "download", "source": "/var/log/cloud-init.log", "destination": "/home/me/cloud-init.log"}]
}`)
	msg := s.mustFail(`packer_build("t.json")`, nil)
	assert.Contains(t, msg, "provisioner 1 (file, download /var/log/cloud-init.log) writes to /home/me/cloud-init.log: an absolute path, outside the build's own directory: write a destination relative to packer's working directory, e.g. \"cloud-init.log\"")
	assert.Contains(t, msg, "main.star:1:")

	s.write("t.json", `{
  "variables": {"imgflow_downloads_dir": null},
  "builders": [{"type": "azure-arm", "subscription_id": "00000000-0000-0000-0000-000000000000", "location": "westeurope", "os_type": "Linux",
    "image_publisher": "Canonical", "image_offer": "o", "image_sku": "s",
    "managed_image_name": "img", "managed_image_resource_group_name": "rg", "skip_create_image": true}],
  "provisioners": [{"type": "file", "direction": "download", "source": "/var/log/cloud-init.log", "destination": "cloud-init.log"}]
}`)
	msg = s.mustFail(`packer_build("t.json", vars = {"imgflow_downloads_dir": "/tmp"})`, nil)
	assert.Contains(t, msg, "imgflow_downloads_dir is set by packer_build")
}

// bigDownloadTemplate downloads an uploaded file as a log and as JSON.
const bigDownloadTemplate = `{
  "variables": {"imgflow_files_dir": null, "imgflow_downloads_dir": null, "name": null},
  "builders": [{"type": "azure-arm", "location": "westeurope", "os_type": "Linux",
    "image_publisher": "Canonical", "image_offer": "o", "image_sku": "s",
    "managed_image_name": "img", "managed_image_resource_group_name": "rg", "skip_create_image": true}],
  "provisioners": [
    {"type": "file", "source": "{{user ` + "`imgflow_files_dir`" + `}}/home/packer/", "destination": "/home/packer/"},
    {"type": "file", "direction": "download", "source": "/home/packer/payload", "destination": "{{user ` + "`imgflow_downloads_dir`" + `}}/out.log"},
    {"type": "file", "direction": "download", "source": "/home/packer/payload", "destination": "{{user ` + "`imgflow_downloads_dir`" + `}}/out.json"}
  ]
}
`

func TestPackerBuildKeepsTheEndOfALargeLogAndRefusesOtherLargeFiles(t *testing.T) {
	s := newSnippetSandbox(t)
	s.write("t.json", bigDownloadTemplate)
	s.write("big.log", strings.Repeat("x", 3<<19)+"the error at the end\n") // 1.5 MiB
	s.write("small.log", "fine\n")
	const src = `resource_group("rg", location = "westeurope")
b = packer_build("t.json", vars = {"name": name}, files = [name + ":/home/packer/payload"])
output("log", b.downloads["out.log"])
`
	res := s.mustRun("name = param(\"name\")\n"+src, map[string]string{"name": "small.log"})
	assert.Equal(t, "fine\n", outputsOf(res)["log"])

	msg := s.mustFail("name = param(\"name\")\n"+src, map[string]string{"name": "big.log"})
	assert.Contains(t, msg, "download out.json of /home/packer/payload is 1536 KiB: packer_build returns downloads of up to 1024 KiB")
}

func TestPackerBuildKeepsTheEndOfALargeLog(t *testing.T) {
	s := newSnippetSandbox(t)
	tpl := strings.Replace(bigDownloadTemplate, `,
    {"type": "file", "direction": "download", "source": "/home/packer/payload", "destination": "{{user `+"`imgflow_downloads_dir`"+`}}/out.json"}`, "", 1)
	require.NotEqual(t, bigDownloadTemplate, tpl)
	s.write("t.json", tpl)
	s.write("big.log", strings.Repeat("x", 3<<19)+"the error at the end\n")
	res := s.mustRun(`resource_group("rg", location = "westeurope")
b = packer_build("t.json", vars = {"name": "big.log"}, files = ["big.log:/home/packer/payload"])
output("log", b.downloads["out.log"])
`, nil)
	log := outputsOf(res)["log"].(string)
	assert.True(t, strings.HasPrefix(log, "[imgflow: the first 524309 bytes of /home/packer/payload are cut; its last 1048576 follow]\nxxx"), log[:120])
	assert.True(t, strings.HasSuffix(log, "the error at the end\n"))
	assert.Less(t, len(log), (1<<20)+200)
}
