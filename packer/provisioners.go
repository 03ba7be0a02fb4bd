package packer

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// missingProvisionerTools says why packer cannot validate tpl's
// provisioners on this machine, or "" when it can. packer 1.9.5 bundles
// the ansible provisioner, but validating it runs `ansible-playbook
// --version`; it does not bundle goss, which image-builder installs with
// `packer init` / `packer plugins install` (make deps-azure). Without
// them packer validate fails on the machine, not on the template.
func missingProvisionerTools(tpl *Template, env map[string]string, packerBin, workDir string) string {
	var missing []string
	seen := map[string]bool{}
	for _, p := range tpl.Provisioners {
		typ, _ := p["type"].(string)
		if seen[typ] {
			continue
		}
		seen[typ] = true
		switch typ {
		case "ansible", "ansible-local":
			if !onPath("ansible-playbook", env["PATH"]) {
				missing = append(missing, "ansible-playbook on PATH for the "+typ+" provisioner (image-builder installs ansible-core: make deps-azure)")
			}
		case "goss":
			if !pluginInstalled("goss", env, packerBin, workDir) {
				missing = append(missing, "the goss provisioner plugin, which packer 1.9.5 does not bundle: packer plugins install github.com/YaleUniversity/goss (image-builder's make deps-azure does)")
			}
		}
	}
	return strings.Join(missing, "; ")
}

// onPath reports whether program is an executable in one of path's
// directories.
func onPath(program, path string) bool {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		info, err := os.Stat(filepath.Join(dir, program))
		if err == nil && !info.IsDir() && info.Mode().Perm()&0o111 != 0 {
			return true
		}
	}
	return false
}

// pluginInstalled reports whether packer would find the plugin name where
// packer 1.9.5 looks for plugins: the PACKER_PLUGIN_PATH directories, the
// directory of its executable and its working directory (top level only),
// and, searched through, ~/.packer.d/plugins and ~/.config/packer/plugins
// (where `packer plugins install` puts them, under
// github.com/<owner>/<name>/).
func pluginInstalled(name string, env map[string]string, packerBin, workDir string) bool {
	isPlugin := func(file string) bool {
		return strings.HasPrefix(file, "packer-plugin-"+name) || strings.HasPrefix(file, "packer-provisioner-"+name)
	}
	flat := append(filepath.SplitList(env["PACKER_PLUGIN_PATH"]), filepath.Dir(packerBin), workDir)
	for _, dir := range flat {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if !e.IsDir() && isPlugin(e.Name()) {
				return true
			}
		}
	}
	home := env["HOME"]
	if home == "" {
		return false
	}
	for _, dir := range []string{filepath.Join(home, ".packer.d", "plugins"), filepath.Join(home, ".config", "packer", "plugins")} {
		found := false
		_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && isPlugin(d.Name()) {
				found = true
				return filepath.SkipAll
			}
			return nil
		})
		if found {
			return true
		}
	}
	return false
}
