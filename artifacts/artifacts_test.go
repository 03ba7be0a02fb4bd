package artifacts

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.starlark.net/starlark"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/internal/localpacker"
	"github.com/imgflow/imgflow/internal/testtool"
	"github.com/imgflow/imgflow/interp"
	"github.com/imgflow/imgflow/packer"
)

// templates lists artifacts/packer/*.json.
func templates(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("packer/*.json")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	return files
}

func loadTemplate(t *testing.T, file string) *packer.Template {
	t.Helper()
	tpl, err := packer.LoadTemplate(file)
	require.NoError(t, err, file)
	return tpl
}

// manifest is artifacts/cse/manifest.json, as far as these tests need it.
type manifest struct {
	Files []struct {
		Source      string `json:"source"`
		RuntimeName string `json:"runtime_name"`
	} `json:"files"`
}

func readManifest(t *testing.T) manifest {
	t.Helper()
	data, err := os.ReadFile("cse/manifest.json")
	require.NoError(t, err)
	var m manifest
	require.NoError(t, json.Unmarshal(data, &m))
	return m
}

func run(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %s:\n%s", name, strings.Join(args, " "), out)
	return string(out)
}

func TestCSESourcingRuleBothWays(t *testing.T) {
	testtool.Require(t, "bash", "install bash")
	out := run(t, nil, "bash", "cse/test_sourcing.sh")
	t.Log(out)
	assert.Contains(t, out, "ok: node, every variable set → the explicit paths")
	assert.Contains(t, out, "ok: tree, variables unset → cse_config_<module>.sh siblings")
	assert.Contains(t, out, "PASS: 6 modules")
}

// The JSON templates pass packer 1.9.5's own checks: -syntax-only, and the
// full validation with placeholder values (offline: it never reaches Azure,
// and it rejects keys the bundled azure-arm builder does not know). The
// HCL2 confidential VM templates need the azure plugin 2.x, which only
// `packer init` installs: TestHCL2TemplatesDeclareThePluginTheyNeed.
func TestTemplatesPassPackerValidate(t *testing.T) {
	testtool.Require(t, "packer", "`make deps` installs packer 1.9.5")
	staged := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(staged, "home", "packer"), 0o755))
	placeholders := map[string]string{
		"imgflow_files_dir": staged, "sig_image_version": "1.2.3", "source_sig_image_version": "1.0.0",
		"source_vhd_url": "https://example.blob.core.windows.net/imports/base.vhd",
	}
	for _, file := range templates(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			// Two validations of a second or so each per template: in
			// parallel, the test lasts half as long on two cores.
			t.Parallel()
			run(t, []string{"CHECKPOINT_DISABLE=1"}, "packer", "validate", "-syntax-only", file)
			vars := map[string]string{}
			for _, v := range loadTemplate(t, file).Declared() {
				if !v.Required {
					continue
				}
				switch {
				case placeholders[v.Name] != "":
					vars[v.Name] = placeholders[v.Name]
				case strings.HasSuffix(v.Name, "subscription_id"):
					vars[v.Name] = "00000000-0000-0000-0000-000000000000"
				default:
					vars[v.Name] = "placeholder1"
				}
			}
			data, err := json.Marshal(vars)
			require.NoError(t, err)
			varFile := filepath.Join(t.TempDir(), "vars.json")
			require.NoError(t, os.WriteFile(varFile, data, 0o600))
			run(t, []string{"CHECKPOINT_DISABLE=1"}, "packer", "validate", "-var-file="+varFile, file)
		})
	}
}

// uploadedFiles lists the base names a template's file provisioners upload
// by name ("source" and "sources").
func uploadedFiles(tpl *packer.Template) []string {
	var out []string
	for _, p := range tpl.Provisioners {
		if p["type"] != "file" || p["direction"] == "download" {
			continue
		}
		var sources []any
		if s, ok := p["source"]; ok {
			sources = append(sources, s)
		}
		if ss, ok := p["sources"].([]any); ok {
			sources = append(sources, ss...)
		}
		for _, s := range sources {
			if str, ok := s.(string); ok {
				out = append(out, path.Base(strings.TrimRight(str, "/")))
			}
		}
	}
	return out
}

// cseUploadProblems names the modules a template fails to upload when it
// uploads the CSE parent by name. Templates that upload
// {{user `imgflow_files_dir`}} get every module from stage_cse_modules().
func cseUploadProblems(tpl *packer.Template, m manifest) []string {
	uploaded := map[string]bool{}
	for _, f := range uploadedFiles(tpl) {
		uploaded[f] = true
	}
	parent := m.Files[0]
	if !uploaded[parent.Source] && !uploaded[parent.RuntimeName] {
		return nil
	}
	var missing []string
	for _, f := range m.Files[1:] {
		if !uploaded[f.Source] && !uploaded[f.RuntimeName] {
			missing = append(missing, f.Source)
		}
	}
	return missing
}

func TestTemplatesUploadEveryCSEModuleWithTheParent(t *testing.T) {
	m := readManifest(t)
	require.Equal(t, "cse_config.sh", m.Files[0].Source, "the parent comes first in the manifest")
	for _, file := range templates(t) {
		assert.Empty(t, cseUploadProblems(loadTemplate(t, file), m), "%s uploads the CSE parent without these modules", file)
	}

	// The check catches a template that uploads the parent alone.
	bad, err := packer.ParseTemplate([]byte(`{
		"builders": [{"type": "null"}],
		"provisioners": [
			{"type": "file", "source": "artifacts/cse/cse_config.sh", "destination": "/home/packer/provision_configs.sh"},
			{"type": "file", "sources": ["artifacts/cse/cse_config_gpu.sh"], "destination": "/home/packer/"}
		]}`))
	require.NoError(t, err)
	missing := cseUploadProblems(bad, m)
	sort.Strings(missing)
	assert.Equal(t, []string{"cse_config_addons.sh", "cse_config_chrony.sh", "cse_config_kubelet.sh", "cse_config_localdns.sh", "cse_config_network.sh"}, missing)
}

// The AKS templates upload what packer_build stages and install it with
// install-files.sh from the install list (installs_var, lib/aks/packer.star).
func TestAKSTemplatesInstallTheStagedFiles(t *testing.T) {
	for _, file := range templates(t) {
		tpl := loadTemplate(t, file)
		if _, ok := tpl.Variables["imgflow_files_dir"]; !ok {
			continue
		}
		t.Run(filepath.Base(file), func(t *testing.T) {
			assert.True(t, tpl.Variables["imgflow_files_dir"].Required)
			assert.True(t, tpl.Variables["imgflow_installs"].Required)
			var uploads, installs bool
			for _, p := range tpl.Provisioners {
				uploads = uploads || (p["type"] == "file" && p["source"] == "{{user `imgflow_files_dir`}}/home/packer/" && p["destination"] == "/home/packer/")
				if p["script"] == "{{template_dir}}/../scripts/install-files.sh" {
					installs = assert.Contains(t, p["environment_vars"], "IMGFLOW_INSTALLS={{user `imgflow_installs`}}")
				}
			}
			assert.True(t, uploads, "uploads {{user `imgflow_files_dir`}}/home/packer/ to /home/packer/")
			assert.True(t, installs, "runs scripts/install-files.sh")
		})
	}
}

// isUbuntu reports an Ubuntu marketplace template.
func isUbuntu(tpl *packer.Template) bool {
	return tpl.Variables["img_publisher"].Default == "Canonical"
}

func TestUbuntuTemplatesBuildThePinnedBCC(t *testing.T) {
	ubuntu := 0
	hcl, err := filepath.Glob("packer/*.pkr.hcl")
	require.NoError(t, err)
	for _, file := range append(templates(t), hcl...) {
		tpl := loadTemplate(t, file)
		found := false
		for _, p := range tpl.Provisioners {
			switch p["script"] {
			case "{{template_dir}}/../scripts/install-bcc.sh":
				found = true
				assert.Equal(t, []any{"BCC_VERSION={{user `bcc_version`}}"}, p["environment_vars"], file)
			case `"${path.root}/../scripts/install-bcc.sh"`: // HCL2 keeps an expression's source
				found = true
				assert.Equal(t, `["BCC_VERSION=${var.bcc_version}"]`, p["environment_vars"], file)
			}
		}
		assert.Equal(t, isUbuntu(tpl), found, "%s: install-bcc.sh is uploaded by the Ubuntu templates only", file)
		if found {
			ubuntu++
			assert.True(t, tpl.Variables["bcc_version"].Required, "%s: the version comes from lib/aks/packer.star, not a default", file)
		}
	}
	// Each template is judged above on its own; a count here would fail
	// whoever adds an Ubuntu variant, for no fault of theirs.
	assert.NotZero(t, ubuntu, "no Ubuntu template found: the check above judged nothing")

	// The pin lives in lib/aks/packer.star.
	ws, err := localpacker.NewWorkspace("..")
	require.NoError(t, err)
	globals, err := interp.ExecModule(context.Background(), interp.Config{Workspace: ws, Registry: builtins.NewRegistry()}, "//lib/aks/packer.star", nil, nil)
	require.NoError(t, err)
	assert.Equal(t, starlark.String("v0.29.0"), globals["BCC_VERSION"])
}

func TestInstallBCCScript(t *testing.T) {
	testtool.Require(t, "bash", "install bash")
	script, err := os.ReadFile("scripts/install-bcc.sh")
	require.NoError(t, err)
	assert.Contains(t, string(script), `git clone --depth 1 --branch "$BCC_VERSION"`, "a shallow clone of the pinned tag")
	assert.NotContains(t, string(script), "v0.29.0", "the pin comes from BCC_VERSION")
	assert.Contains(t, string(script), `make -j"$(bcc_make_jobs)"`)
	for cores, want := range map[string]string{"64": "8", "8": "8", "3": "3", "1": "1", "0": "1", "x": "1"} {
		out := run(t, nil, "bash", "-c", `source scripts/install-bcc.sh && bcc_make_jobs "$1"`, "jobs", cores)
		assert.Equal(t, want, strings.TrimSpace(out), "make -j for %s cores", cores)
	}
	cmd := exec.Command("bash", "scripts/install-bcc.sh")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), "BCC_VERSION is not set")
}

func TestInstallFilesScriptInstallsWithModes(t *testing.T) {
	testtool.Require(t, "bash", "install bash")
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.sh"), []byte("#!/bin/bash\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "r.conf"), []byte("w! x - - - - 0\n"), 0o600))
	installs := dir + "/a.sh:" + dir + "/out/opt/a.sh:0744 " + dir + "/r.conf:" + dir + "/out/etc/r.conf:0644"
	run(t, []string{"IMGFLOW_INSTALLS=" + installs}, "bash", "scripts/install-files.sh")
	for file, mode := range map[string]os.FileMode{"out/opt/a.sh": 0o744, "out/etc/r.conf": 0o644} {
		st, err := os.Stat(filepath.Join(dir, file))
		require.NoError(t, err)
		assert.Equal(t, mode, st.Mode().Perm(), file)
	}
	cmd := exec.Command("bash", "scripts/install-files.sh")
	cmd.Env = append(os.Environ(), "IMGFLOW_INSTALLS="+dir+"/missing:"+dir+"/x:0744")
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), "was not uploaded")
}

func TestMGLRURuleIsBootOnlyAndConditional(t *testing.T) {
	data, err := os.ReadFile("tmpfiles/aks-mglru.conf")
	require.NoError(t, err)
	var rules []string
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			rules = append(rules, strings.Join(strings.Fields(line), " "))
		}
	}
	assert.Equal(t, []string{"w! /sys/kernel/mm/lru_gen/enabled - - - - 0"}, rules)
}

// Every script a template runs exists and is executable.
func TestTemplateScriptsExist(t *testing.T) {
	for _, file := range templates(t) {
		for _, p := range loadTemplate(t, file).Provisioners {
			script, ok := p["script"].(string)
			if !ok {
				continue
			}
			rel := strings.Replace(script, "{{template_dir}}", "packer", 1)
			st, err := os.Stat(rel)
			if assert.NoError(t, err, "%s runs %s", file, script) {
				assert.NotZero(t, st.Mode().Perm()&0o100, "%s is executable", rel)
			}
		}
	}
}

// The HCL2 templates (the confidential VM builds) pass packer's syntax
// check and declare the azure plugin 2.x whose keys they use, so a real
// build installs it with packer init first.
func TestHCL2TemplatesDeclareThePluginTheyNeed(t *testing.T) {
	files, err := filepath.Glob("packer/*.pkr.hcl")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			tpl := loadTemplate(t, file)
			azure, ok := tpl.RequiredPlugins["azure"]
			require.True(t, ok, "required_plugins declares azure")
			assert.Equal(t, "github.com/hashicorp/azure", azure.Source)
			assert.Contains(t, azure.Version, ">= 2.")
			testtool.Require(t, "packer", "`make deps` installs packer 1.9.5")
			run(t, []string{"CHECKPOINT_DISABLE=1"}, "packer", "validate", "-syntax-only", file)
		})
	}
}

func TestReleaseNotesScriptWritesWhatTheImageHolds(t *testing.T) {
	testtool.Require(t, "bash", "install bash")
	notes := filepath.Join(t.TempDir(), "azure", "vhd-install.complete")
	out := run(t, []string{"NOTES=" + notes, "IMG_PUBLISHER=Canonical", "IMG_OFFER=ubuntu-24_04-lts", "IMG_SKU=server", "IMG_VERSION=latest", "BUILD_ID=42"},
		"bash", "scripts/release-notes.sh")
	assert.Contains(t, out, "release-notes: wrote "+notes)
	data, err := os.ReadFile(notes)
	require.NoError(t, err)
	for _, want := range []string{"build 42\n", "Source image: Canonical/ubuntu-24_04-lts/server/latest\n", "Kernel: ", "Installed files (path, mode):\n", "Packages:\n"} {
		assert.Contains(t, string(data), want)
	}
}

// Every AKS template downloads the release notes and the image BOM (and,
// where it builds BCC, its log) after writing them, before deprovisioning.
func TestAKSTemplatesDownloadTheReleaseArtifacts(t *testing.T) {
	for _, file := range []string{"aks-ubuntu.json", "aks-ubuntu-arm64.json", "aks-ubuntu-cvm.pkr.hcl", "aks-azurelinux.json", "aks-azurelinux-arm64.json", "aks-azurelinux-cvm.pkr.hcl"} {
		tpl, err := packer.LoadTemplate(filepath.Join("packer", file))
		require.NoError(t, err)
		order := map[string]int{}
		for i, p := range tpl.Provisioners {
			src := strings.Trim(fmt.Sprint(p["source"]), `"`)
			script := strings.Trim(fmt.Sprint(p["script"]), `"`)
			inline := fmt.Sprint(p["inline"])
			switch {
			case p["direction"] == "download":
				order[src] = i
			case strings.HasSuffix(script, "/release-notes.sh"):
				order["notes written"] = i
			case strings.HasSuffix(script, "/install-bcc.sh"):
				order["bcc built"] = i
			case strings.Contains(inline, "image-bom.json"):
				order["bom written"] = i
			case strings.Contains(inline, "deprovision"):
				order["deprovisioned"] = i
			}
		}
		require.Contains(t, order, "/opt/azure/vhd-install.complete", file)
		require.Contains(t, order, "/opt/azure/image-bom.json", file)
		assert.Less(t, order["notes written"], order["/opt/azure/vhd-install.complete"], file)
		assert.Less(t, order["bom written"], order["/opt/azure/image-bom.json"], file)
		assert.Less(t, order["/opt/azure/image-bom.json"], order["deprovisioned"], file)
		_, bcc := order["bcc built"]
		_, log := order["/var/log/bcc_installation.log"]
		assert.Equal(t, bcc, log, "%s: the BCC log is downloaded where BCC is built", file)
		if bcc {
			assert.Less(t, order["bcc built"], order["/var/log/bcc_installation.log"], file)
		}
	}
}
