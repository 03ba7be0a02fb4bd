package localsim

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/packer"
)

// Files a template uploads from the checkout are part of the simulated
// VM: an edited script is another build, and a download of it returns it.
func TestCheckoutUploadsEnterTheBuildIdentity(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	write("t.json", `{"builders": [{"type": "azure-arm", "location": "eastus", "os_type": "Linux",
	  "image_publisher": "Canonical", "image_offer": "o", "image_sku": "s", "managed_image_name": "img", "managed_image_resource_group_name": "rg"}],
	  "provisioners": [
	    {"type": "file", "source": "parts/provision.sh", "destination": "/home/packer/provision.sh"},
	    {"type": "file", "source": "parts/conf", "destination": "/etc/"}
	  ]}`)
	write("parts/provision.sh", "v1")
	write("parts/conf/a.conf", "a")
	req := packer.BuildRequest{TemplatePath: "t.json", WorkDir: dir}
	p, err := prepare(req, nil)
	require.NoError(t, err)
	require.NotNil(t, p.staged)
	assert.Contains(t, p.staged.files, "/home/packer/provision.sh")
	assert.Contains(t, p.staged.files, "/etc/conf/a.conf", "a directory without a trailing slash lands whole")
	first := p.identity("azure-arm")

	write("parts/provision.sh", "v2")
	p, err = prepare(req, nil)
	require.NoError(t, err)
	assert.NotEqual(t, first, p.identity("azure-arm"), "an edited script is another build")
}

// A build reads the checkout in place (an unmirrored plan) as through its
// mirror: the same files are uploaded, so it is the same build, a
// directory at the top of the working directory included (a link in the
// mirror, whose files the simulation does not list).
func TestCheckoutReadInPlaceMakesTheMirrorsBuild(t *testing.T) {
	for _, source := range []string{"parts", "parts/conf", "parts/conf/", "parts/a.sh"} {
		checkout := t.TempDir()
		write := func(rel, content string) {
			p := filepath.Join(checkout, filepath.FromSlash(rel))
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		}
		write("t.json", `{"builders": [{"type": "azure-arm", "location": "eastus", "os_type": "Linux",
		  "image_publisher": "Canonical", "image_offer": "o", "image_sku": "s", "managed_image_name": "img", "managed_image_resource_group_name": "rg"}],
		  "provisioners": [{"type": "file", "source": "`+source+`", "destination": "/opt/"}]}`)
		write("parts/a.sh", "a")
		write("parts/conf/b.conf", "b")
		mirror := t.TempDir()
		require.NoError(t, packer.MirrorWorkDir(checkout, mirror, nil))

		through, err := prepare(packer.BuildRequest{TemplatePath: "t.json", WorkDir: mirror, Mirrors: checkout}, nil)
		require.NoError(t, err)
		inPlace, err := prepare(packer.BuildRequest{TemplatePath: "t.json", WorkDir: t.TempDir(), Mirrors: checkout, Unmirrored: true}, nil)
		require.NoError(t, err)
		assert.Equal(t, through.identity("azure-arm"), inPlace.identity("azure-arm"), source)
		if through.staged != nil && inPlace.staged != nil {
			assert.Equal(t, through.staged.digest, inPlace.staged.digest, source)
		} else {
			assert.Equal(t, through.staged == nil, inPlace.staged == nil, source)
		}
	}
}
