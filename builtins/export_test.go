package builtins_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/faults"
)

// exportWorkflow makes a gallery version from an uploaded VHD and exports
// it back to a VHD blob.
const exportWorkflow = `
rg = resource_group("images", location = "westeurope")
sa = storage_account("imgflowstore", resource_group = rg)
src = vhd_upload("disk.vhd", dest = blob(sa, container = "uploads", name = "disk.vhd"))
g = gallery("images", resource_group = rg)
d = image_definition(g, name = "ubuntu", publisher = "me", offer = "ubuntu", sku = "2204")
v = image_version(d, version = "1.0.0", source = vhd(src, storage_account = sa))
out = sig_to_vhd(v, dest = blob(sa, container = "vhds", name = "ubuntu-1.0.0.vhd"))
output("url", out.url)
output("size", out.size)
`

func disksOf(t *testing.T, s *snippetSandbox) []*cloud.Disk {
	t.Helper()
	var out []*cloud.Disk
	for _, rg := range s.cloud.Snapshot().ResourceGroups {
		for _, d := range rg.Disks {
			out = append(out, d)
		}
	}
	return out
}

func TestSigToVHDExportsTheVersionAndRemovesTheDisk(t *testing.T) {
	s := newSnippetSandbox(t)
	s.fixedVHD("disk.vhd", 4, "exported content")
	res := s.mustRun(exportWorkflow, nil)
	assert.Equal(t, "https://imgflowstore.blob.core.windows.net/vhds/ubuntu-1.0.0.vhd", outputsOf(res)["url"])
	assert.Equal(t, int64(4<<20+512), outputsOf(res)["size"])
	assert.Equal(t, cloud.Created, lastOutcome(t, res, "sig_to_vhd"))
	assert.Empty(t, disksOf(t, s), "the temporary disk is deleted")

	// The export holds the uploaded VHD, byte for byte.
	want, err := os.ReadFile(filepath.Join(s.ws.Root, "disk.vhd"))
	require.NoError(t, err)
	got, err := os.ReadFile(s.cloud.BlobPath(cloud.BlobRef{Account: "imgflowstore", Container: "vhds", Name: "ubuntu-1.0.0.vhd"}))
	require.NoError(t, err)
	assert.True(t, bytes.Equal(want, got), "exported VHD differs from the source")

	// A rerun recognises its own export.
	res = s.mustRun(exportWorkflow, nil)
	assert.Equal(t, cloud.Exists, lastOutcome(t, res, "sig_to_vhd"))
}

func TestSigToVHDWhoseCopyFailsLeavesNoDiskAndNoAccess(t *testing.T) {
	s := newSnippetSandbox(t)
	s.fixedVHD("disk.vhd", 4, "x")
	set := faults.NewFaults(map[string]faults.Fault{"CopyBlob": {StatusCode: 500, Code: "InternalError", Message: "copy broke"}})
	s.apply = faults.WithFaults(s.cloud, set)
	msg := s.mustFail(exportWorkflow, nil)
	assert.Contains(t, msg, "copy broke")
	assert.Contains(t, msg, "main.star:8:")
	assert.Empty(t, disksOf(t, s), "the disk must be deleted after a failed copy")
	for _, rg := range s.cloud.Snapshot().ResourceGroups {
		assert.Empty(t, rg.DiskGrants, "no access may stay open")
	}
	// Nothing else was removed: the version is still there.
	_, err := s.cloud.GetImageVersion(context.Background(), "images", "images", "ubuntu", "1.0.0")
	assert.NoError(t, err)
}

func TestSigToVHDNeverOverwritesABlobItDidNotExport(t *testing.T) {
	s := newSnippetSandbox(t)
	s.fixedVHD("disk.vhd", 4, "x")
	s.fixedVHD("other.vhd", 4, "someone else's")
	s.mustRun(`
rg = resource_group("images", location = "westeurope")
sa = storage_account("imgflowstore", resource_group = rg)
vhd_upload("other.vhd", dest = blob(sa, container = "vhds", name = "ubuntu-1.0.0.vhd"))
`, nil)
	msg := s.mustFail(exportWorkflow, nil)
	assert.Contains(t, msg, "already exists and is not an export")
	assert.Contains(t, msg, "overwrite=True")
}
