package packer

import (
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// validateInputsVersion changes whenever what writeValidateInputs writes
// changes, so that no entry of an older imgflow is read as a newer one's.
const validateInputsVersion = "imgflow packer validate inputs v2"

// sessionEnv are environment variables a shell or make sets per session
// that packer validate does not read: left out of the inputs so that a
// plan in another terminal still finds the result.
var sessionEnv = []string{"_", "OLDPWD", "SHLVL", "PS1", "PS2", "PROMPT_COMMAND", "TERM", "TERM_PROGRAM",
	"TERM_PROGRAM_VERSION", "COLORTERM", "COLUMNS", "LINES", "LS_COLORS", "WINDOWID", "DISPLAY",
	"SSH_CLIENT", "SSH_CONNECTION", "SSH_TTY", "SSH_AUTH_SOCK", "XDG_SESSION_ID", "MAKEFLAGS", "MAKELEVEL", "MFLAGS"}

// writeValidateInputs writes to w everything that decides `packer
// validate` of req, as Runner.Validate would run it: packer's executable
// and the plugins and config it would find, its whole environment (but
// sessionEnv), the template's files, the var-files' contents, the vars,
// -only, the working directory, and every file or directory a string of
// the rendered template names (scripts, sources, custom_data_file…),
// present or absent.
//
// stable maps directories whose names change at every build (imgflow's
// staged files) to what identifies their content: a var naming one and a
// path under one are written with that identity instead.
//
// volatile are strings that name the run (its ID, its time as a
// timestamp): a value that contains one (a captured version
// 1.<timestamp>.<n>) is new at every plan but validates as the same
// shape, so each is written as a placeholder, in vars, env values and
// the paths the template names.
//
// Values, secrets included, are written as they are: w must be a keyed
// hash, never stored.
func (r *Runner) writeValidateInputs(w io.Writer, req BuildRequest, stable map[string]string, volatile []string, sums *SumCache) error {
	if req.Mirrors != "" {
		// A build's own directory is new at every build and mirrors
		// req.Mirrors: the build validates as it would there.
		tpl := ResolvePath(req.WorkDir, req.TemplatePath)
		if rel, err := filepath.Rel(req.WorkDir, tpl); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			req.TemplatePath = filepath.Join(req.Mirrors, rel)
		}
		req.WorkDir = req.Mirrors
	}
	var pairs []string
	for i, v := range volatile {
		// A short one ("0", "plan") would stand for parts of other values.
		if len(v) >= 6 {
			pairs = append(pairs, v, fmt.Sprintf("(run %d)", i))
		}
	}
	rep := strings.NewReplacer(pairs...)
	line := func(parts ...string) {
		for i, p := range parts {
			if i > 0 && (parts[0] == "var" || parts[0] == "env" || parts[0] == "ref") {
				p = rep.Replace(p)
			}
			if i > 0 {
				_, _ = io.WriteString(w, "\x00")
			}
			_, _ = io.WriteString(w, p)
		}
		_, _ = io.WriteString(w, "\n")
	}
	line(validateInputsVersion)
	env := r.environ(req)
	envs := envMap(env)
	bin, err := r.binary()
	if err != nil {
		return err
	}
	// packer's executable by name, size and time, not content: hashing
	// its 120 MB would cost a warm plan more than everything else; an
	// install or rebuild writes a new file.
	info, err := os.Stat(bin)
	if err != nil {
		return err
	}
	line("packer", bin, info.Mode().String(), fmt.Sprint(info.Size()), fmt.Sprint(info.ModTime().UnixNano()))
	for _, dir := range pluginDirs(envs, bin, req.WorkDir) {
		writeDirListing(line, "plugins", dir)
	}
	for _, cfg := range packerConfigFiles(envs) {
		if err := writeFileState(line, "config", cfg, sums); err != nil {
			return err
		}
	}
	keys := make([]string, 0, len(envs))
	for k := range envs {
		if !slices.Contains(sessionEnv, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		line("env", k, envs[k])
	}

	// A plugin config decides which plugin packer init would bring, so
	// which keys validation leaves to imgflow's model.
	for _, f := range req.PluginConfigs {
		if err := writeFileState(line, "plugin-config", ResolvePath(req.WorkDir, f), sums); err != nil {
			return err
		}
	}
	tplPath := ResolvePath(req.WorkDir, req.TemplatePath)
	line("workdir", ResolvePath(req.WorkDir, "."))
	tpl, err := LoadTemplate(tplPath)
	if err != nil {
		return err
	}
	if err := writeTemplateFiles(line, tplPath, tpl, sums); err != nil {
		return err
	}
	values := map[string]string{}
	for _, f := range req.VarFiles {
		abs := ResolvePath(req.WorkDir, f)
		if err := writeFileState(line, "var-file", abs, sums); err != nil {
			return err
		}
		vf, err := tpl.ReadVarFile(abs)
		if err != nil {
			return err
		}
		for k, v := range vf {
			values[k] = v
		}
	}
	names := make([]string, 0, len(req.Vars))
	for k, v := range req.Vars {
		names = append(names, k)
		values[k] = v
	}
	slices.Sort(names)
	for _, k := range names {
		v := req.Vars[k]
		if id, ok := stable[v]; ok {
			v = id
		}
		line("var", k, v)
	}
	line("only", strings.Join(req.Only, ","))
	line("sensitive", strings.Join(req.Sensitive, ","), strings.Join(req.SensitiveEnv, ","))

	refs, err := tpl.referencedStrings(values, envs)
	if err != nil {
		return err
	}
	// In the order of what the key records: a volatile value's place in
	// the raw order is new at every plan too.
	slices.SortStableFunc(refs, func(a, b string) int { return strings.Compare(rep.Replace(a), rep.Replace(b)) })
	roots := []string{ResolvePath(req.WorkDir, "."), filepath.Dir(tplPath)}
	for _, s := range refs {
		writeReference(line, ResolvePath(req.WorkDir, s), roots, stable, sums)
	}
	return nil
}

// writeTemplateFiles writes the content of the files packer reads as the
// template: the file, or an HCL2 directory's files. An HCL2 template's
// references (${path.root}/…) are not rendered here, so the whole tree of
// its directory counts.
func writeTemplateFiles(line func(...string), tplPath string, tpl *Template, sums *SumCache) error {
	if !tpl.IsHCL2() {
		return writeFileState(line, "template", tplPath, sums)
	}
	root := tplPath
	if st, err := os.Stat(tplPath); err == nil && !st.IsDir() {
		root = filepath.Dir(tplPath)
		if err := writeFileState(line, "template", tplPath, sums); err != nil {
			return err
		}
	}
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		return writeFileState(line, "template-dir", path, sums)
	})
}

// writeFileState writes a file's path and content digest, or that it is
// missing.
func writeFileState(line func(...string), kind, path string, sums *SumCache) error {
	info, err := os.Stat(path)
	if err != nil {
		if os.IsNotExist(err) {
			line(kind, path, "absent")
			return nil
		}
		return err
	}
	if info.IsDir() {
		line(kind, path, "dir")
		return nil
	}
	sum, _, err := sums.File(path, info)
	if err != nil {
		return err
	}
	line(kind, path, info.Mode().String(), hex.EncodeToString(sum[:]))
	return nil
}

// writeReference writes what a path the template names holds: a file's
// digest, a directory's listing (names, modes, sizes and times of its
// tree: packer's file provisioner checks its source exists), or its
// absence. Only directories under roots (the working directory, the
// template's) are listed: a remote destination such as /tmp/ exists here
// too, and its content is none of packer validate's business.
func writeReference(line func(...string), path string, roots []string, stable map[string]string, sums *SumCache) {
	for dir, id := range stable {
		if within(dir, path) {
			rel, _ := filepath.Rel(dir, path)
			line("ref", id, filepath.ToSlash(rel))
			return
		}
	}
	info, err := os.Stat(path)
	switch {
	case err != nil:
		line("ref", path, "absent")
	case info.Mode().IsRegular():
		sum, _, err := sums.File(path, info)
		if err != nil {
			line("ref", path, "unreadable", err.Error())
			return
		}
		line("ref", path, info.Mode().String(), hex.EncodeToString(sum[:]))
	case info.IsDir() && slices.ContainsFunc(roots, func(root string) bool { return within(root, path) }):
		writeDirListing(line, "ref", path)
	default:
		line("ref", path, info.Mode().String())
	}
}

// within reports whether path is dir or under it.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// writeDirListing writes the names, modes, sizes and modification times
// of the tree under dir (not following links, without .git).
func writeDirListing(line func(...string), kind, dir string) {
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			line(kind, path, "error")
			return nil
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		line(kind, path, info.Mode().String(), fmt.Sprint(info.Size()), fmt.Sprint(info.ModTime().UnixNano()))
		return nil
	})
}

// pluginDirs are where packer 1.9.5 looks for plugins (see
// pluginInstalled).
func pluginDirs(env map[string]string, packerBin, workDir string) []string {
	dirs := slices.Clone(filepath.SplitList(env["PACKER_PLUGIN_PATH"]))
	if home := env["HOME"]; home != "" {
		dirs = append(dirs, filepath.Join(home, ".packer.d", "plugins"), filepath.Join(home, ".config", "packer", "plugins"))
	}
	// The executable's and the working directory's own entries count only
	// for packer-plugin-* files, which the listing of the whole directory
	// would drown in unrelated changes.
	for _, dir := range []string{filepath.Dir(packerBin), workDir} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "packer-plugin-") || strings.HasPrefix(e.Name(), "packer-provisioner-") {
				dirs = append(dirs, filepath.Join(dir, e.Name()))
			}
		}
	}
	return dirs
}

// packerConfigFiles are packer's own configuration files.
func packerConfigFiles(env map[string]string) []string {
	var files []string
	if c := env["PACKER_CONFIG"]; c != "" {
		files = append(files, c)
	}
	if home := env["HOME"]; home != "" {
		files = append(files, filepath.Join(home, ".packerconfig"))
	}
	return files
}

// referencedStrings returns every string of the template rendered with
// values and env, besides the variables' own values: the candidates for
// the files packer reads (a script, a file provisioner's source, …).
// Strings that cannot name a file (several lines, unrendered actions) are
// left out.
func (t *Template) referencedStrings(values, env map[string]string) ([]string, error) {
	var doc any
	if t.hcl != nil {
		configs, err := t.renderHCL2(values, env)
		if err != nil {
			return nil, err
		}
		doc = []any{configs, t.raw}
	} else {
		r, err := t.newRenderer(values, env)
		if err != nil {
			return nil, err
		}
		doc, err = r.renderValue(map[string]any{"b": t.raw["builders"], "p": t.raw["provisioners"], "pp": t.raw["post-processors"]}, "", false)
		if err != nil {
			return nil, err
		}
	}
	vals := make([]any, 0, len(values))
	for _, v := range values {
		vals = append(vals, v)
	}
	doc = []any{doc, vals}
	seen := map[string]bool{}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			s := strings.TrimSpace(x)
			if s == "" || len(s) > 4096 || strings.ContainsAny(s, "\n\x00") || strings.Contains(s, "{{") || seen[s] {
				return
			}
			seen[s] = true
			out = append(out, s)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(doc)
	slices.Sort(out)
	return out, nil
}
