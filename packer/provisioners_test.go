package packer

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// imageBuilderProvisioners is image-builder's provisioner list in short:
// its two ansible playbooks, goss, and a shell step.
const imageBuilderProvisioners = `{
  "builders": [{"type": "null", "communicator": "none"}],
  "provisioners": [
    {"type": "ansible", "playbook_file": "./ansible/node.yml"},
    {"type": "goss", "tests": ["packer/goss"]},
    {"type": "shell", "inline": ["true"]}
  ]
}`

func writeExecutable(t *testing.T, path string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755))
}

func TestMissingProvisionerTools(t *testing.T) {
	tpl, err := ParseTemplate([]byte(imageBuilderProvisioners))
	require.NoError(t, err)
	home, bin, work := t.TempDir(), t.TempDir(), t.TempDir()
	packerBin := filepath.Join(bin, "packer")
	env := map[string]string{"HOME": home, "PATH": bin}

	reason := missingProvisionerTools(tpl, env, packerBin, work)
	assert.Contains(t, reason, "ansible-playbook on PATH for the ansible provisioner")
	assert.Contains(t, reason, "packer plugins install github.com/YaleUniversity/goss")

	// ansible-playbook on PATH, and goss where `packer plugins install` puts it.
	writeExecutable(t, filepath.Join(bin, "ansible-playbook"))
	writeExecutable(t, filepath.Join(home, ".config", "packer", "plugins", "github.com", "YaleUniversity", "goss", "packer-plugin-goss_v3.2.13_x5.0_linux_amd64"))
	assert.Empty(t, missingProvisionerTools(tpl, env, packerBin, work))
}

func TestPluginInstalledWherePackerLooks(t *testing.T) {
	for name, place := range map[string]func(home, bin, work, pluginPath string) string{
		"PACKER_PLUGIN_PATH": func(_, _, _, p string) string { return filepath.Join(p, "packer-plugin-goss") },
		"beside packer":      func(_, bin, _, _ string) string { return filepath.Join(bin, "packer-provisioner-goss") },
		"working directory":  func(_, _, work, _ string) string { return filepath.Join(work, "packer-plugin-goss") },
		"legacy ~/.packer.d": func(home, _, _, _ string) string {
			return filepath.Join(home, ".packer.d", "plugins", "packer-provisioner-goss")
		},
		"a checkout's subdir": nil,
	} {
		t.Run(name, func(t *testing.T) {
			home, bin, work, pluginPath := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
			env := map[string]string{"HOME": home, "PACKER_PLUGIN_PATH": pluginPath}
			if place == nil {
				// Only the top of the working directory counts.
				writeExecutable(t, filepath.Join(work, "hack", "packer-plugin-goss"))
				assert.False(t, pluginInstalled("goss", env, filepath.Join(bin, "packer"), work))
				return
			}
			assert.False(t, pluginInstalled("goss", env, filepath.Join(bin, "packer"), work))
			writeExecutable(t, place(home, bin, work, pluginPath))
			assert.True(t, pluginInstalled("goss", env, filepath.Join(bin, "packer"), work))
		})
	}
}

func TestValidateLeavesProvisionersItCannotLoadToTheModel(t *testing.T) {
	dir := t.TempDir()
	tplPath := filepath.Join(dir, "packer.json")
	require.NoError(t, os.WriteFile(tplPath, []byte(imageBuilderProvisioners), 0o600))
	// A packer that would pass anything: it must not be run.
	bin := filepath.Join(dir, "bin", "packer")
	writeExecutable(t, bin)
	t.Setenv("HOME", t.TempDir())
	t.Setenv("PATH", filepath.Dir(bin))
	t.Setenv("PACKER_PLUGIN_PATH", "")

	err := (&Runner{Binary: bin}).Validate(context.Background(), BuildRequest{TemplatePath: "packer.json", WorkDir: dir})
	var nv *NotValidatedError
	require.ErrorAs(t, err, &nv)
	assert.Contains(t, err.Error(), "checked by imgflow's model only (needs ansible-playbook on PATH")
	assert.Contains(t, err.Error(), "the goss provisioner plugin, which packer 1.9.5 does not bundle")
}
