package builtins_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// copyCSE copies artifacts/cse into a sandbox's workspace, modes kept.
func copyCSE(t *testing.T, s *snippetSandbox) string {
	t.Helper()
	dir := filepath.Join(s.ws.Root, "artifacts", "cse")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	entries, err := os.ReadDir("../artifacts/cse")
	require.NoError(t, err)
	for _, e := range entries {
		src := filepath.Join("../artifacts/cse", e.Name())
		data, err := os.ReadFile(src)
		require.NoError(t, err)
		st, err := os.Stat(src)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, e.Name()), data, st.Mode().Perm()))
	}
	return dir
}

// editManifest rewrites the sandbox's manifest through fn.
func editManifest(t *testing.T, dir string, fn func(files []map[string]any) []map[string]any) {
	t.Helper()
	path := filepath.Join(dir, "manifest.json")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	var files []map[string]any
	for _, f := range m["files"].([]any) {
		files = append(files, f.(map[string]any))
	}
	m["files"] = fn(files)
	data, err = json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

func entry(files []map[string]any, source string) map[string]any {
	for _, f := range files {
		if f["source"] == source {
			return f
		}
	}
	panic("no entry " + source)
}

func without(files []map[string]any, source string) []map[string]any {
	var out []map[string]any
	for _, f := range files {
		if f["source"] != source {
			out = append(out, f)
		}
	}
	return out
}

var modules = []string{"gpu", "localdns", "kubelet", "network", "addons", "chrony"}

func TestStageCSEModulesStagesTheParentAndEveryModule(t *testing.T) {
	s := newSnippetSandbox(t)
	copyCSE(t, s)
	res := s.mustRun(`
cse = stage_cse_modules()
output("uploads", cse.uploads)
output("installs", cse.installs)
output("hotfix_keys", cse.hotfix_keys)
output("env_vars", cse.env_vars)
output("other_dest", [u.dest for u in stage_cse_modules(manifest = "//artifacts/cse/manifest.json", dest = "/tmp/upload").uploads])
`, nil)
	out := outputsOf(res)
	uploads := out["uploads"].([]any)
	installs := out["installs"].([]any)
	require.Len(t, uploads, 1+len(modules))
	require.Len(t, installs, 1+len(modules))
	assert.Equal(t, map[string]any{"src": "//artifacts/cse/cse_config.sh", "dest": "/home/packer/provision_configs.sh"}, uploads[0])
	assert.Equal(t, map[string]any{"src": "/home/packer/provision_configs.sh", "dest": "/opt/azure/containers/provision_configs.sh", "mode": "0744"}, installs[0])
	hotfix := out["hotfix_keys"].(map[string]any)
	env := out["env_vars"].(map[string]any)
	assert.Equal(t, "provisionConfigs", hotfix["provision_configs.sh"])
	assert.Equal(t, "/opt/azure/containers/provision_configs.sh", env["CSE_CONFIG_FILEPATH"])
	keys := map[string]string{"gpu": "GPU", "localdns": "LocalDNS", "kubelet": "Kubelet", "network": "Network", "addons": "Addons", "chrony": "Chrony"}
	for _, m := range modules {
		runtime := "provision_configs_" + m + ".sh"
		assert.Contains(t, uploads, map[string]any{"src": "//artifacts/cse/cse_config_" + m + ".sh", "dest": "/home/packer/" + runtime})
		assert.Contains(t, installs, map[string]any{"src": "/home/packer/" + runtime, "dest": "/opt/azure/containers/" + runtime, "mode": "0744"})
		assert.Equal(t, "provisionConfigs"+keys[m], hotfix[runtime])
		assert.Equal(t, "/opt/azure/containers/"+runtime, env["CSE_CONFIG_"+map[string]string{"gpu": "GPU", "localdns": "LOCALDNS", "kubelet": "KUBELET", "network": "NETWORK", "addons": "ADDONS", "chrony": "CHRONY"}[m]+"_FILEPATH"])
	}
	assert.Contains(t, out["other_dest"], "/tmp/upload/provision_configs_gpu.sh")
	assert.Empty(t, stepsOf(res, "stage_cse_modules")[0].Outcome, "a read, not a change")
}

// Every packaging rule of issue 3 item 5, each failing with the file's name.
func TestStageCSEModulesRefusesBrokenPackaging(t *testing.T) {
	cases := map[string]struct {
		edit  func(t *testing.T, dir string)
		wants []string
	}{
		"module entry deleted": {func(t *testing.T, dir string) {
			editManifest(t, dir, func(f []map[string]any) []map[string]any { return without(f, "cse_config_gpu.sh") })
		}, []string{"cse_config_gpu.sh: has no manifest entry"}},
		"hotfix key deleted": {func(t *testing.T, dir string) {
			editManifest(t, dir, func(f []map[string]any) []map[string]any {
				delete(entry(f, "cse_config_kubelet.sh"), "hotfix_key")
				return f
			})
		}, []string{"cse_config_kubelet.sh: the entry lacks its hotfix_key"}},
		"path variable deleted": {func(t *testing.T, dir string) {
			editManifest(t, dir, func(f []map[string]any) []map[string]any {
				entry(f, "cse_config_network.sh")["path_variable"] = ""
				return f
			})
		}, []string{"cse_config_network.sh: the entry lacks its path_variable"}},
		"mode not 0744": {func(t *testing.T, dir string) {
			editManifest(t, dir, func(f []map[string]any) []map[string]any { entry(f, "cse_config_addons.sh")["mode"] = "0755"; return f })
		}, []string{`cse_config_addons.sh: mode is "0755"; every CSE script is installed with mode 0744`}},
		"listed file missing": {func(t *testing.T, dir string) {
			require.NoError(t, os.Remove(filepath.Join(dir, "cse_config_chrony.sh")))
		}, []string{"cse_config_chrony.sh: listed in the manifest but missing beside it"}},
		"file not executable": {func(t *testing.T, dir string) {
			require.NoError(t, os.Chmod(filepath.Join(dir, "cse_config_localdns.sh"), 0o644))
		}, []string{"cse_config_localdns.sh: is not executable by its owner (mode 0644)"}},
		"runtime name breaks the sibling rule": {func(t *testing.T, dir string) {
			editManifest(t, dir, func(f []map[string]any) []map[string]any {
				entry(f, "cse_config_gpu.sh")["runtime_name"] = "provision_gpu.sh"
				return f
			})
		}, []string{`cse_config_gpu.sh: runtime_name is "provision_gpu.sh", but the parent provision_configs.sh sources its sibling "provision_configs_gpu.sh"`}},
		"parent does not source the module": {func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "cse_config_extra.sh"), []byte("#!/bin/bash\n"), 0o755))
			editManifest(t, dir, func(f []map[string]any) []map[string]any {
				return append(f, map[string]any{"source": "cse_config_extra.sh", "runtime_name": "provision_configs_extra.sh",
					"path_variable": "CSE_CONFIG_EXTRA_FILEPATH", "hotfix_key": "provisionConfigsExtra", "mode": "0744"})
			})
		}, []string{"cse_config_extra.sh: the parent cse_config.sh never sources it through ${CSE_CONFIG_EXTRA_FILEPATH:-…}"}},
		"duplicate hotfix key": {func(t *testing.T, dir string) {
			editManifest(t, dir, func(f []map[string]any) []map[string]any {
				entry(f, "cse_config_chrony.sh")["hotfix_key"] = "provisionConfigsGPU"
				return f
			})
		}, []string{"hotfix_key provisionConfigsGPU is also cse_config_"}},
		"two problems at once": {func(t *testing.T, dir string) {
			editManifest(t, dir, func(f []map[string]any) []map[string]any {
				delete(entry(f, "cse_config_addons.sh"), "hotfix_key")
				return without(f, "cse_config_localdns.sh")
			})
		}, []string{"2 CSE packaging problem(s)", "cse_config_addons.sh: the entry lacks its hotfix_key", "cse_config_localdns.sh: has no manifest entry"}},
		"unknown manifest field": {func(t *testing.T, dir string) {
			editManifest(t, dir, func(f []map[string]any) []map[string]any { entry(f, "cse_config_gpu.sh")["hotfix"] = "x"; return f })
		}, []string{`unknown field "hotfix"`}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := newSnippetSandbox(t)
			tc.edit(t, copyCSE(t, s))
			msg := s.mustFail("cse = stage_cse_modules()", nil)
			assert.Contains(t, msg, "main.star:1:24: stage_cse_modules: artifacts/cse/manifest.json")
			for _, w := range tc.wants {
				assert.Contains(t, msg, w)
			}
		})
	}
}
