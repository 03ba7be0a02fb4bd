package builtins

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"go.starlark.net/starlark"
)

// The CSE configuration modules: a parent script cse_config.sh and its
// modules cse_config_<name>.sh, described by a manifest. See
// artifacts/cse/README.md and ../shared/reference/agentbaker-pipeline.md §3.
const (
	cseParent       = "cse_config.sh"
	cseModulePrefix = "cse_config_"
	cseMode         = "0744"
	cseInstallDir   = "/opt/azure/containers"
)

// cseManifest is artifacts/cse/manifest.json.
type cseManifest struct {
	Description string `json:"description"`
	// InstallDir is where the scripts live on the node (default
	// /opt/azure/containers).
	InstallDir string     `json:"install_dir"`
	Files      []cseEntry `json:"files"`
}

// cseEntry is one script of the manifest.
type cseEntry struct {
	// Source is the file name beside the manifest, e.g. cse_config_gpu.sh.
	Source string `json:"source"`
	// RuntimeName is its name on the node, e.g. provision_configs_gpu.sh.
	RuntimeName string `json:"runtime_name"`
	// PathVariable overrides where the parent sources it from, e.g.
	// CSE_CONFIG_GPU_FILEPATH.
	PathVariable string `json:"path_variable"`
	// HotfixKey is its cloud-init variable key, e.g. provisionConfigsGPU.
	HotfixKey string `json:"hotfix_key"`
	// Mode is the install mode; always 0744.
	Mode string `json:"mode"`
}

var (
	pathVariableRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`) })
	hotfixKeyRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][A-Za-z0-9]*$`) })
)

func stageCSEModulesSpec() *Spec {
	return &Spec{
		Name: "stage_cse_modules", Effect: Reads,
		Params: []Param{
			{Name: "manifest", Kind: KindString, Default: `"//artifacts/cse/manifest.json"`, Doc: "the CSE manifest in the workspace; the scripts are beside it"},
			{Name: "dest", Kind: KindString, Default: `"/home/packer/"`, Doc: "upload directory on the build VM"},
		},
		Returns: "struct(uploads = [struct(src, dest)], installs = [struct(src, dest, mode)], hotfix_keys = {runtime name: key}, env_vars = {variable: install path})",
		Doc: "Stages the CSE configuration scripts: the parent `cse_config.sh` and every module `cse_config_*.sh` beside it, always all of them, whatever the image's features. " +
			"`uploads` go to packer_build(files=…) under their runtime names (`cse_config_gpu.sh` → `/home/packer/provision_configs_gpu.sh`); `installs` copy them to " +
			"`/opt/azure/containers/` with mode 0744; `hotfix_keys` and `env_vars` are the cloud-init keys and path variables (`CSE_CONFIG_GPU_FILEPATH`). " +
			"Fails, naming the file, when a `cse_config_*.sh` has no manifest entry, an entry lacks its path variable or hotfix key, a listed file is missing or not executable, " +
			"a mode is not 0744, a runtime name breaks the parent's sibling rule, or the parent does not source a module's variable.",
		Example: `cse = stage_cse_modules()`,
		Impl:    stageCSEModulesImpl,
	}
}

func stageCSEModulesImpl(c *Call) (starlark.Value, error) {
	rel, abs, err := c.resolve(c.String("manifest", "//artifacts/cse/manifest.json"))
	if err != nil {
		return nil, err
	}
	dest := c.String("dest", "/home/packer/")
	if !path.IsAbs(dest) {
		return nil, fmt.Errorf("stage_cse_modules: dest %q must be an absolute directory on the build VM, e.g. /home/packer/", dest)
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return nil, fmt.Errorf("stage_cse_modules: %w", err)
	}
	var m cseManifest
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("stage_cse_modules: %s: %w", rel, err)
	}
	dir := filepath.Dir(abs)
	if err := checkCSEManifest(&m, dir); err != nil {
		return nil, fmt.Errorf("stage_cse_modules: %s: %w", rel, err)
	}
	install := m.InstallDir
	if install == "" {
		install = cseInstallDir
	}
	relDir := path.Dir(rel)
	var uploads, installs []any
	hotfix, env := map[string]string{}, map[string]string{}
	for _, e := range m.Files {
		staged := path.Join(dest, e.RuntimeName)
		installed := path.Join(install, e.RuntimeName)
		uploads = append(uploads, makeStruct("upload", fields{"src": "//" + path.Join(relDir, e.Source), "dest": staged}))
		installs = append(installs, makeStruct("install", fields{"src": staged, "dest": installed, "mode": e.Mode}))
		hotfix[e.RuntimeName] = e.HotfixKey
		env[e.PathVariable] = installed
	}
	c.Report("", fmt.Sprintf("%d scripts from %s", len(m.Files), rel))
	return makeStruct("cse_modules", fields{"uploads": uploads, "installs": installs, "hotfix_keys": hotfix, "env_vars": env}), nil
}

// cseProblems collects the manifest's problems, each naming its file.
type cseProblems []string

func (p *cseProblems) add(file, format string, args ...any) {
	*p = append(*p, file+": "+fmt.Sprintf(format, args...))
}

// checkCSEManifest applies every packaging rule; the error lists all
// problems, one per line, each starting with the file it concerns.
func checkCSEManifest(m *cseManifest, dir string) error {
	var p cseProblems
	listed := map[string]*cseEntry{}
	seenRuntime, seenVar, seenKey := map[string]string{}, map[string]string{}, map[string]string{}
	for i := range m.Files {
		e := &m.Files[i]
		name := e.Source
		if name == "" {
			p.add(fmt.Sprintf("files[%d]", i), "the entry has no source")
			continue
		}
		if listed[name] != nil {
			p.add(name, "listed twice in the manifest")
			continue
		}
		listed[name] = e
		if strings.Contains(name, "/") {
			p.add(name, "source must be a file name beside the manifest")
			continue
		}
		switch {
		case e.PathVariable == "":
			p.add(name, "the entry lacks its path_variable (e.g. CSE_CONFIG_GPU_FILEPATH): the parent cannot be pointed at it")
		case !pathVariableRE().MatchString(e.PathVariable):
			p.add(name, "path_variable %q is not an upper-case shell variable name", e.PathVariable)
		}
		switch {
		case e.HotfixKey == "":
			p.add(name, "the entry lacks its hotfix_key (e.g. provisionConfigsGPU): it could not be hotfixed")
		case !hotfixKeyRE().MatchString(e.HotfixKey):
			p.add(name, "hotfix_key %q is not a lowerCamelCase key", e.HotfixKey)
		}
		if e.RuntimeName == "" {
			p.add(name, "the entry lacks its runtime_name (e.g. provision_configs_gpu.sh)")
		}
		if e.Mode != cseMode {
			p.add(name, "mode is %q; every CSE script is installed with mode %s", e.Mode, cseMode)
		}
		for _, u := range []struct {
			seen  map[string]string
			value string
			what  string
		}{{seenRuntime, e.RuntimeName, "runtime_name"}, {seenVar, e.PathVariable, "path_variable"}, {seenKey, e.HotfixKey, "hotfix_key"}} {
			if u.value == "" {
				continue
			}
			if other, dup := u.seen[u.value]; dup {
				p.add(name, "%s %s is also %s's", u.what, u.value, other)
			}
			u.seen[u.value] = name
		}
		st, err := os.Stat(filepath.Join(dir, name))
		switch {
		case err != nil:
			p.add(name, "listed in the manifest but missing beside it")
		case !st.Mode().IsRegular():
			p.add(name, "is not a regular file")
		case st.Mode().Perm()&0o100 == 0:
			p.add(name, "is not executable by its owner (mode %04o): chmod 0744 it (git keeps it as 0755)", st.Mode().Perm())
		}
	}

	parent := listed[cseParent]
	if parent == nil {
		p.add(cseParent, "the parent script has no manifest entry")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, d := range entries {
		n := d.Name()
		if strings.HasPrefix(n, cseModulePrefix) && strings.HasSuffix(n, ".sh") && listed[n] == nil {
			p.add(n, "has no manifest entry: add {\"source\": %q, \"runtime_name\": …, \"path_variable\": …, \"hotfix_key\": …, \"mode\": %q}", n, cseMode)
		}
	}
	if parent != nil {
		checkSiblingRule(&p, m, parent, dir)
	}
	if len(p) == 0 {
		return nil
	}
	sort.Strings(p)
	return fmt.Errorf("%d CSE packaging problem(s):\n  - %s", len(p), strings.Join(p, "\n  - "))
}

// checkSiblingRule checks what the parent's sourcing relies on: each
// module's runtime name is the parent's plus its suffix (provision_configs.sh
// → provision_configs_gpu.sh, as cse_config.sh → cse_config_gpu.sh), and the
// parent refers to each module's path variable.
func checkSiblingRule(p *cseProblems, m *cseManifest, parent *cseEntry, dir string) {
	stem, ok := strings.CutSuffix(parent.RuntimeName, ".sh")
	if !ok && parent.RuntimeName != "" {
		p.add(cseParent, "runtime_name %q must end in .sh", parent.RuntimeName)
	}
	data, err := os.ReadFile(filepath.Join(dir, cseParent))
	if err != nil {
		return // reported as missing
	}
	text := string(data) // once, not per module
	for _, e := range m.Files {
		suffix, isModule := strings.CutPrefix(e.Source, strings.TrimSuffix(cseParent, ".sh"))
		if !isModule || e.Source == cseParent || !strings.HasPrefix(suffix, "_") {
			continue
		}
		if want := stem + suffix; ok && e.RuntimeName != "" && e.RuntimeName != want {
			p.add(e.Source, "runtime_name is %q, but the parent %s sources its sibling %q when %s is unset", e.RuntimeName, parent.RuntimeName, want, e.PathVariable)
		}
		if e.PathVariable != "" && !strings.Contains(text, "${"+e.PathVariable+":-") {
			p.add(e.Source, "the parent %s never sources it through ${%s:-…}", cseParent, e.PathVariable)
		}
	}
}
