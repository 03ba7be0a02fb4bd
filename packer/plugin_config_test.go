package packer

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// image-builder's JSON templates cannot declare plugins: its Makefile runs
// packer init on config.pkr.hcl files first. Build does the same with
// PluginConfigs, in order, before packer build.
func TestBuildRunsPackerInitOnPluginConfigsBeforeAJSONTemplate(t *testing.T) {
	log := fakePackerOnPath(t)
	capi, err := filepath.Abs("../testdata/image-builder/images/capi")
	require.NoError(t, err)
	dir := t.TempDir()
	tpl := filepath.Join(dir, "null.json")
	require.NoError(t, os.WriteFile(tpl, []byte(`{"builders": [{"type": "null", "name": "n", "communicator": "none"}]}`), 0o644))

	_, err = (&Runner{}).Build(context.Background(), BuildRequest{
		TemplatePath: tpl, WorkDir: capi,
		PluginConfigs: []string{"packer/config.pkr.hcl", "packer/azure/config.pkr.hcl"},
	})
	require.NoError(t, err)
	lines := readLog(t, log)
	require.GreaterOrEqual(t, len(lines), 3)
	assert.Equal(t, "init "+filepath.Join(capi, "packer/config.pkr.hcl"), lines[0])
	assert.Equal(t, "init "+filepath.Join(capi, "packer/azure/config.pkr.hcl"), lines[1])
	assert.Equal(t, "build -machine-readable "+tpl, lines[2])
}

func TestBuildStopsWhenAPluginConfigsInitFails(t *testing.T) {
	log := fakePackerOnPath(t)
	t.Setenv("FAKE_PACKER_INIT_FAIL", "1")
	capi, err := filepath.Abs("../testdata/image-builder/images/capi")
	require.NoError(t, err)
	tpl := filepath.Join(t.TempDir(), "null.json")
	require.NoError(t, os.WriteFile(tpl, []byte(`{"builders": [{"type": "null", "name": "n", "communicator": "none"}]}`), 0o644))
	_, err = (&Runner{}).Build(context.Background(), BuildRequest{
		TemplatePath: tpl, WorkDir: capi, PluginConfigs: []string{"packer/azure/config.pkr.hcl"},
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "config.pkr.hcl failed (exit status 1) installing github.com/hashicorp/azure >= 2.1.8")
	assert.Len(t, readLog(t, log), 1, "no build after a failed init")
}

func TestReadPluginConfigRefusesAFileWithoutPlugins(t *testing.T) {
	f := filepath.Join(t.TempDir(), "empty.pkr.hcl")
	require.NoError(t, os.WriteFile(f, []byte("packer {\n  required_version = \">= 1.9.0\"\n}\n"), 0o644))
	_, err := ReadPluginConfig(f)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "packer init would install nothing")

	plugins, err := ReadPluginConfig("../testdata/image-builder/images/capi/packer/config.pkr.hcl")
	require.NoError(t, err)
	assert.Equal(t, "github.com/YaleUniversity/goss", plugins["goss"].Source)
	assert.Equal(t, ">= 1.1.0", plugins["ansible"].Version)
}
