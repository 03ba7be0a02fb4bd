package builtins

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/ensure"
	"github.com/imgflow/imgflow/packer"
)

// PackerBuilder runs packer builds: packer.Runner runs the real binary,
// packer/localsim's Builder simulates the azure-arm builder on a
// cloud.Provider.
type PackerBuilder interface {
	Build(ctx context.Context, req packer.BuildRequest) (*packer.Result, error)
}

// PackerSimulator makes a builder that simulates packer builds, making
// their products in p, with temporary files under tempDir ("": the
// system's); subscriptions, when not nil, reaches the tenant's other
// subscriptions (a SIG destination there). Whoever builds the workspace plugs it in
// (Workspace.SimulatePacker; internal/localpacker for packer/localsim).
type PackerSimulator func(p cloud.Provider, tempDir string, subscriptions func(ctx context.Context, sub string) (cloud.Provider, error)) PackerBuilder

// outcomeBuilder is a PackerBuilder that knows whether it created
// anything (the simulation reuses what an earlier run made).
type outcomeBuilder interface {
	BuildOutcome(ctx context.Context, req packer.BuildRequest) (*packer.Result, cloud.Outcome, error)
}

// packerBuilder is what runs a packer_build. It is the one place that
// decides whether packer runs for real: Run.Packer (the real binary on the
// Azure target) in the apply pass only; the validation pass and a plan
// (dry-run views of the target), and a run without a packer (the local
// target, the emulator's IMGFLOW_PACKER=simulate), simulate the build with
// packer/localsim against the run's provider.
//
// simulated says the builder is the simulation (its staged uploads may
// be links: it reads them, no packer process uploads them).
func (r *Run) packerBuilder() (b PackerBuilder, simulated bool, err error) {
	if r.Packer != nil && !r.dryRun() {
		return r.Packer, false, nil
	}
	if r.Workspace == nil || r.Workspace.SimulatePacker == nil {
		return nil, true, errors.New("this run has no packer and no packer simulator: the program that starts the run plugs one in (builtins.Workspace.SimulatePacker)")
	}
	tempDir := ""
	if s, ok := r.Provider.(scratchDirer); ok {
		tempDir = s.ScratchDir() // emptied when the state is next opened: a kill leaves no VHD behind
	} else if r.TempDir != "" && os.MkdirAll(r.TempDir, 0o700) == nil {
		// A dry-run view (the validation pass) has no scratch dir:
		// the run's own place, which gc and resume remove.
		tempDir = r.TempDir
	}
	var subs func(ctx context.Context, sub string) (cloud.Provider, error)
	if r.Subscriptions != nil {
		subs = r.ProviderFor
	}
	return r.Workspace.SimulatePacker(r.Provider, tempDir, subs), true, nil
}

// scratchDirer is a provider with a directory for temporary files that it
// empties itself (the local target's, see local.Provider.ScratchDir).
type scratchDirer interface{ ScratchDir() string }

// dryRun reports whether nothing real may happen: the validation pass, or
// a plan (both run against a dry-run view of the target).
func (r *Run) dryRun() bool { return r.Validating }

// RunTempDir is the run's place for temporary directories (Run.TempDir)
// on this machine: imgflow run removes it when the run ends, imgflow gc
// when the run was killed.
func RunTempDir(runID string) string {
	return filepath.Join(os.TempDir(), "imgflow-run-"+runID)
}

// tempDir makes a new directory in the run's TempDir (created when
// missing), named prefix and a random suffix.
func (r *Run) tempDir(prefix string) (string, error) {
	if r.TempDir != "" {
		if err := os.MkdirAll(r.TempDir, 0o700); err != nil {
			return "", err
		}
	}
	return os.MkdirTemp(r.TempDir, prefix)
}

var kindUploads Kind = &simpleKind{`list of struct(src, dest) or "src:dest" strings`, func(v starlark.Value) bool {
	seq, ok := v.(starlark.Indexable)
	if _, isStr := v.(starlark.String); !ok || isStr {
		return false
	}
	for i := 0; i < seq.Len(); i++ {
		switch seq.Index(i).(type) {
		case starlark.String, *starlarkstruct.Struct:
		default:
			return false
		}
	}
	return true
}}

func registerBuild(r *Registry) {
	r.add("Builds",
		&Spec{
			Name: "packer_build", Positional: 1, Effect: Changes,
			Params: []Param{
				{Name: "template", Kind: KindString, Doc: "packer template in the workspace, relative to the calling file or `//path`: legacy JSON, or HCL2 when it ends in `.pkr.hcl` (its `required_plugins` are installed with `packer init` before the build)"},
				{Name: "vars", Kind: KindDict, Default: "{}", Doc: "template variables: strings, or secret() values (sent in a 0600 var-file, never argv); quote numbers and booleans"},
				{Name: "env", Kind: KindDict, Default: "{}", Doc: "environment variables for the template's ``{{env `NAME`}}`` references, e.g. `{\"PACKER_BUILD_LOCATION\": location, \"UA_TOKEN\": secret(\"ua_token\")}`: strings, or secret() values (shown as `<secret>`). The local target and plans render `{{env}}` from this dict only, never from imgflow's environment; on the Azure target it is added to packer's environment"},
				{Name: "files", Kind: kindUploads, Default: "[]", Doc: "uploads for the template's file provisioner: `struct(src, dest)` (stage_cse_modules().uploads) or `\"src:dest\"` strings, src a workspace file, dest absolute; staged in a directory that mirrors dest, passed as the variable `imgflow_files_dir`. An entry with `generated = True` (made by an earlier command()) need not exist in the validation pass"},
				{Name: "plugins", Kind: KindStringList, Default: "[]", Doc: "HCL files in the workspace holding a `packer { required_plugins { … } }` block: `packer init` installs from each before the build (a JSON template cannot declare its plugins; image-builder's `make deps-azure` inits its config.pkr.hcl files). An HCL2 template's own required_plugins are always installed"},
				{Name: "var_files", Kind: KindStringList, Default: "[]", Doc: "var-files in the workspace, in order, before `vars`: JSON objects of strings (null is \"\", as in packer); for an HCL2 template any JSON values, or `.pkrvars.hcl` files"},
				{Name: "only", Kind: KindStringList, Default: "[]", Doc: "build names to run (packer -only), as rendered: `sig-flatcar-gen2` for a builder named ``sig-{{user `build_name`}}``; unknown names are an error"},
				{Name: "cwd", Kind: KindString, Default: `"//"`, Doc: "packer's working directory inside the workspace, relative to the calling file or `//path`: the template's relative paths (ansible `playbook_file`, `custom_data_file`, goss tests) are relative to it, e.g. image-builder's `images/capi`, where its Makefile runs packer"},
				{Name: "generated", Kind: KindDict, Default: "{}", Doc: "upload sources of the template that an earlier step makes (paths relative to `cwd`, as the template writes them), each mapped to that step, e.g. `{\"vhdbuilder/lister/bin/lister\": \"make -f packer.mk build-lister-binary\"}`: a plan, where command() does not run, accepts them missing (packer validate sees an empty stand-in) and names the step; a run where one is still missing fails naming it. Any other upload source missing from `cwd` is refused before anything runs, as packer refuses it (`Bad source '…': stat …: no such file or directory`). Keys the template does not upload are ignored, so one dict serves every template of a checkout"},
				{Name: "inputs", Kind: KindDict, Default: "{}", Doc: "files the template reads from `cwd` that come from elsewhere, e.g. an artifact a pipeline downloads into its working directory: `{\"kata-containers.img\": \"//downloads/kata-containers.img\"}` (path relative to `cwd` → workspace file); each appears at its path in the build's own directory, `cwd` itself unchanged"},
				{Name: "timeout", Kind: KindDuration, Default: `"3h"`, Doc: "how long the build may take"},
			},
			Returns: "struct(artifacts, managed_image, sig_version, vhd_url, resource_group, downloads)",
			Doc: "Runs a packer build. Variables follow packer 1.9.5: before anything runs, every required (`null`) variable must have a value (one error names all that are missing); " +
				"a `{{user}}` reference to a variable nobody sets renders as \"\" (a warning names those the template's builders and provisioners make), as does an `{{env}}` name `env` lacks — " +
				"when such a value is one the build needs (e.g. `location`), the error names the environment variable to pass in `env`. " +
				"For an HCL2 template every variable without a default must have a value, `vars` may only set declared variables, and values convert to the declared type (lists and maps as JSON). " +
				"On the local target no VM boots: the azure-arm builder's products are created from the rendered template — the captured VHD (a sparse fixed VHD of `os_disk_size_gb`), " +
				"the managed image, the gallery image version of `shared_image_gallery_destination`. On the Azure target the real `packer build -machine-readable` runs, " +
				"its output streamed with a `[packer]` prefix. On both, a build whose `shared_image_gallery_destination` version exists is not run again: the version is reused (`exists`), " +
				"or, when it did not replicate to every target region, the step fails saying how to delete it. Results come from packer's artifact lines: `managed_image` is a managed_image() struct, `sig_version` an image_version() struct, " +
				"`vhd_url` the OS disk VHD without SAS; each is None when the build made none. " +
				"Every build runs in a directory of its own that mirrors `cwd` (each entry a link), so the template's relative paths resolve as from `cwd` while what packer writes there stays the build's: two builds, parallel ones too, never write the same file and `cwd` is never written; the directory is removed after the build. " +
				"`downloads` maps each file the template's file provisioners fetch from the VM (`\"direction\": \"download\"`) to its content, keyed by its destination relative to packer's working directory as packer 1.9.5 takes it (`\"image-bom.json\"`, `\"logs/\"` for `logs/<file name>`; ``{{user `imgflow_downloads_dir`}}/NAME`` still works as `NAME`; an absolute destination is refused), secrets redacted, up to 1 MiB each: " +
				"release notes, the image BOM, build logs (a larger `.log` or `.txt` keeps its last MiB, marked as cut; other files fail the step), 2 MiB in all; the local target writes what it knows of the build instead (an uploaded file as uploaded, otherwise a description of the build); a build reused from an earlier run has none. " +
				"Journaled: a resumed run never rebuilds.",
			Example: `build = packer_build("//artifacts/packer/sig-marketplace.json", vars = {"location": "westeurope"}, files = cse.uploads)`,
			Impl:    packerBuildImpl,
		},
		commandSpec(),
		stageCSEModulesSpec(),
	)
	registerSecret(r)
}

// upload is one file for the template's file provisioner.
type upload struct {
	src, abs, dest string
}

func packerBuildImpl(c *Call) (starlark.Value, error) {
	tplRel, tplAbs, err := c.resolve(c.String("template", ""))
	if err != nil {
		return nil, err
	}
	cwdRel, cwdAbs, err := c.resolve(c.String("cwd", "//"))
	if err != nil {
		return nil, err
	}
	if info, err := os.Stat(cwdAbs); err != nil || !info.IsDir() {
		return nil, fmt.Errorf("packer_build: cwd %s is not a directory of the workspace", cwdRel)
	}
	// packer sees the template relative to its working directory, as
	// `packer build packer/azure/packer.json` from images/capi.
	tplArg, err := filepath.Rel(cwdAbs, tplAbs)
	if err != nil {
		return nil, fmt.Errorf("packer_build: %w", err)
	}
	tpl, err := packer.LoadTemplate(tplAbs)
	if err != nil {
		return nil, fmt.Errorf("packer_build: %w", err)
	}
	secrets := secretValues(c.Value("vars"), c.Value("env"))
	fail := func(err error) error {
		return errors.New(redactValues(fmt.Sprintf("packer_build %s: %v", tplRel, err), secrets))
	}
	vars, sensitive, err := packerVars(c.Value("vars"))
	if err != nil {
		return nil, fail(err)
	}
	env, sensitiveEnv, err := packerEnv(c.Value("env"))
	if err != nil {
		return nil, fail(err)
	}
	var plugins []string
	for _, f := range c.Strings("plugins") {
		rel, abs, err := c.resolve(f)
		if err != nil {
			return nil, err
		}
		if _, err := packer.ReadPluginConfig(abs); err != nil {
			return nil, fail(errors.New(strings.ReplaceAll(err.Error(), abs, rel)))
		}
		plugins = append(plugins, abs)
	}
	values := map[string]string{}
	var varFiles []string
	for _, f := range c.Strings("var_files") {
		rel, abs, err := c.resolve(f)
		if err != nil {
			return nil, err
		}
		vf, err := readVarFile(tpl, abs, rel)
		if err != nil {
			return nil, fail(err)
		}
		for k, v := range vf {
			values[k] = v
		}
		varFiles = append(varFiles, abs)
	}
	for k, v := range vars {
		values[k] = v
	}
	uploads, err := c.uploads()
	if err != nil {
		return nil, fail(err)
	}
	if err := checkPackerInputs(tpl, values, sensitive, uploads); err != nil {
		return nil, fail(err)
	}
	downloads, err := packer.Downloads(tpl)
	if err != nil {
		return nil, fail(err)
	}
	checked := copyMap(values)
	if len(uploads) > 0 {
		checked[packer.FilesDirVar] = "(staged files)"
	}
	wantsDownloads := usesVar(tpl, packer.DownloadsDirVar)
	if wantsDownloads {
		checked[packer.DownloadsDirVar] = "(downloads)"
	}
	if err := tpl.CheckVariables(checked); err != nil {
		var mv *packer.MissingVariablesError
		if errors.As(err, &mv) {
			mv.Template = tplRel
		}
		msg := err.Error()
		if usesVar(tpl, packer.FilesDirVar) && len(uploads) == 0 {
			msg += fmt.Sprintf("\n(%s is set by packer_build from files=[…]: pass the uploads, e.g. files = cse.uploads)", packer.FilesDirVar)
		}
		return nil, errors.New(redactValues(msg, secrets))
	}
	if err := tpl.CheckUndeclared(vars); err != nil {
		var mv *packer.MissingVariablesError
		if errors.As(err, &mv) {
			mv.Template = tplRel
		}
		return nil, errors.New(redactValues(err.Error(), secrets))
	}
	if only := c.Strings("only"); len(only) > 0 {
		names, err := tpl.BuildNames(checked, env)
		if err != nil {
			return nil, fail(err)
		}
		if err := packer.CheckOnly("only:", only, names); err != nil {
			return nil, fail(err)
		}
	}
	c.warnUnset(tpl, tplRel, checked, secrets)
	c.warnAzureAuth(tpl, tplRel, checked, env, c.Strings("only"), secrets)
	if err := checkNoSecretInNames(tpl, checked, env, c.Value("vars"), c.Value("env")); err != nil {
		return nil, fail(err)
	}
	generated, err := generatedSources(c.Value("generated"))
	if err != nil {
		return nil, fail(err)
	}
	builds := c.Strings("only")
	if len(builds) == 0 {
		builds, _ = tpl.BuildNames(checked, env) // unrenderable: every provisioner counts
	}
	inputs, err := c.inputs()
	if err != nil {
		return nil, fail(err)
	}
	pending, err := checkUploadSources(tpl, cwdAbs, cwdRel, builds, generated, inputPaths(inputs), c.Run.dryRun())
	if err != nil {
		return nil, fail(err)
	}
	invocation := invocationSummary(cwdRel, filepath.ToSlash(tplArg), cwdAbs, varFiles, c.Strings("only")) + inputsSummary(inputs)

	// A build whose gallery version exists was made by an earlier run,
	// whose temporary managed image may be gone: it is reused, on every
	// target, so a plan says what a run does. Real packer would build a
	// VM for an hour and then fail on the existing destination.
	earlier, built, err := c.builtVersion(tpl, checked, env)
	if err != nil {
		return nil, fail(err)
	}
	if built {
		v, summary, err := c.buildResult(earlier)
		if err != nil {
			return nil, fail(err)
		}
		c.Report(cloud.Exists, summary+" (built earlier)"+envSummary(env, sensitiveEnv)+invocation)
		return v, nil
	}

	ctx, cancel := context.WithTimeout(c.Ctx(), c.Duration("timeout", 3*time.Hour))
	defer cancel()
	builder, simulated, err := c.Run.packerBuilder()
	if err != nil {
		return nil, fail(err)
	}
	// The build's own directory: packer's working directory (cwd
	// mirrored, where its relative downloads land) and the staged uploads.
	buildDir, err := c.Run.tempDir("imgflow-build-")
	if err != nil {
		return nil, fail(err)
	}
	defer os.RemoveAll(buildDir)
	workDir := filepath.Join(buildDir, "cwd")
	own := make([]string, 0, len(downloads)+len(pending))
	for _, d := range downloads {
		own = append(own, d.Name)
	}
	for _, p := range pending {
		own = append(own, p.source)
	}
	for _, in := range inputs {
		own = append(own, in.dest)
	}
	// A plan's simulated build only reads the checkout: it reads it in
	// place (packer.BuildRequest.ReadPath) instead of through a mirror,
	// unless it reads a directory the build also writes into. packer
	// validate runs in the mirror, made when packer runs (a cached
	// verdict needs none).
	unmirrored := simulated && c.Run.dryRun()
	makeWorkDir := func(mirrored bool) error {
		if err := os.RemoveAll(workDir); err != nil {
			return err
		}
		if err := os.Mkdir(workDir, 0o755); err != nil {
			return err
		}
		if mirrored {
			if err := packer.MirrorWorkDir(cwdAbs, workDir, own); err != nil {
				return err
			}
		} else if err := packer.CheckOwn(cwdAbs, own); err != nil {
			return err
		}
		if err := placeInputs(workDir, inputs); err != nil {
			return err
		}
		return standIn(workDir, pending)
	}
	if err := makeWorkDir(!unmirrored); err != nil {
		return nil, fail(err)
	}
	// Packer's messages name paths in the build's directory: they are
	// shown as the workspace's.
	scrub := func(err error) error {
		msg := strings.ReplaceAll(err.Error(), tplAbs, tplRel)
		msg = strings.ReplaceAll(msg, packer.ResolvePath(workDir, filepath.ToSlash(tplArg)), tplRel)
		msg = strings.ReplaceAll(msg, workDir+string(filepath.Separator), "")
		return errors.New(redactValues(msg, secrets))
	}
	if len(uploads) > 0 {
		dir := filepath.Join(buildDir, "files")
		if err := stageUploads(dir, uploads, simulated); err != nil {
			return nil, fail(err)
		}
		vars[packer.FilesDirVar] = dir
	}
	if wantsDownloads {
		vars[packer.DownloadsDirVar] = workDir
	}
	// A template outside cwd is given by its path: the mirror has only
	// cwd's entries.
	tplPath := filepath.ToSlash(tplArg)
	if tplArg == ".." || strings.HasPrefix(tplArg, ".."+string(filepath.Separator)) {
		tplPath = tplAbs
	}
	req := packer.BuildRequest{
		TemplatePath: tplPath, Vars: vars, Sensitive: sensitive, VarFiles: varFiles,
		Only: c.Strings("only"), WorkDir: workDir, Mirrors: cwdAbs, Env: env, SensitiveEnv: sensitiveEnv,
		PluginConfigs: plugins, TempDir: buildDir, // the var-file too: a killed run's goes with the run's dir
		Unmirrored: unmirrored, Own: own,
	}
	if unmirrored {
		req.MakeWorkDir = func() error { return makeWorkDir(true) }
	}
	if err := c.validatePacker(ctx, req); err != nil {
		return nil, scrub(err)
	}
	groups := &packerTemporaryGroups{c: c}
	req.OnTemporaryResourceGroup = groups.note
	outcome := cloud.Created
	var res *packer.Result
	build := func() {
		if ob, ok := builder.(outcomeBuilder); ok {
			res, outcome, err = ob.BuildOutcome(ctx, req)
		} else {
			res, err = builder.Build(ctx, req)
		}
	}
	build()
	if errors.Is(err, packer.ErrNeedsMirror) {
		// Refused before the simulation changed anything.
		if err := makeWorkDir(true); err != nil {
			return nil, fail(err)
		}
		req.Unmirrored = false
		build()
	}
	if serr := groups.settle(res); serr != nil {
		err = errors.Join(err, serr)
	}
	if err != nil {
		// The builders' errors name the template ("packer build <path> …").
		return nil, scrub(err)
	}
	got, err := readDownloads(workDir, downloads, secrets)
	if err != nil {
		return nil, fail(err)
	}
	res.Downloads = got
	v, summary, err := c.buildResult(res)
	if err != nil {
		return nil, fail(err)
	}
	c.Report(outcome, summary+envSummary(env, sensitiveEnv)+invocation+pendingSummary(pending))
	return v, nil
}

// invocationSummary shows, for a build with var-files or its own working
// directory, the packer command line as a Makefile would run it (the
// layering of var-files is the build's recipe), e.g.
// "; packer build -only=sig-flatcar-gen2 -var-file=packer/config/kubernetes.json … packer/azure/packer.json in images/capi".
// Other builds show nothing more: their template is the step's.
func invocationSummary(cwdRel, tpl, cwdAbs string, varFiles, only []string) string {
	if len(varFiles) == 0 && cwdRel == "." {
		return ""
	}
	parts := []string{"; packer build"}
	if len(only) > 0 {
		parts = append(parts, "-only="+strings.Join(only, ","))
	}
	for _, f := range varFiles {
		if rel, err := filepath.Rel(cwdAbs, f); err == nil {
			f = rel
		}
		parts = append(parts, "-var-file="+filepath.ToSlash(f))
	}
	parts = append(parts, tpl)
	if cwdRel != "." {
		parts = append(parts, "in", cwdRel)
	}
	return strings.Join(parts, " ")
}

// packerVars converts the vars dict: strings stay, secrets are revealed
// and named sensitive; anything else is an error saying what to write.
func packerVars(v starlark.Value) (map[string]string, []string, error) {
	return stringOrSecretDict(v, "vars", func(string) error { return nil }, "packer takes only strings", "packer variables are strings (or secret() values)")
}

// stringOrSecretDict converts a dict of strings and secret() values (the
// secrets revealed, their keys returned as the second result so they are
// redacted). checkKey vets each key; the two texts say what a number or
// bool and any other value should have been.
func stringOrSecretDict(v starlark.Value, param string, checkKey func(string) error, scalarWhy, otherWhy string) (map[string]string, []string, error) {
	out := map[string]string{}
	var sensitive []string
	d, _ := v.(*starlark.Dict)
	if d == nil {
		return out, nil, nil
	}
	var errs []error
	for _, kv := range d.Items() {
		k, ok := kv[0].(starlark.String)
		if !ok {
			errs = append(errs, fmt.Errorf("%s: key %s is not a string", param, kv[0]))
			continue
		}
		name := string(k)
		if err := checkKey(name); err != nil {
			errs = append(errs, fmt.Errorf("%s: key %s %w", param, kv[0], err))
			continue
		}
		switch val := kv[1].(type) {
		case starlark.String:
			out[name] = string(val)
		case *Secret:
			out[name] = val.reveal()
			sensitive = append(sensitive, name)
		case starlark.Int, starlark.Float, starlark.Bool:
			errs = append(errs, fmt.Errorf("%s[%q] is the %s %s: %s; quote it: %q", param, name, val.Type(), val, scalarWhy, quoteForPacker(val)))
		default:
			errs = append(errs, fmt.Errorf("%s[%q] is a %s: %s", param, name, describe(val), otherWhy))
		}
	}
	sort.Strings(sensitive)
	return out, sensitive, errors.Join(errs...)
}

func quoteForPacker(v starlark.Value) string {
	if b, ok := v.(starlark.Bool); ok {
		return strings.ToLower(b.String())
	}
	return v.String()
}

// checkPackerInputs applies imgflow's rules before packer's: secrets come
// from secret(), the staged-files variable is packer_build's, uploads need
// a template that uploads them.
func checkPackerInputs(tpl *packer.Template, values map[string]string, secretVars []string, uploads []upload) error {
	var errs []error
	isSecret := map[string]bool{}
	for _, n := range secretVars {
		isSecret[n] = true
	}
	if _, ok := values[packer.FilesDirVar]; ok {
		errs = append(errs, fmt.Errorf("%s is set by packer_build from files=[…]; do not pass it in vars or var_files", packer.FilesDirVar))
	}
	if _, ok := values[packer.DownloadsDirVar]; ok {
		errs = append(errs, fmt.Errorf("%s is set by packer_build (a directory it reads the downloads from); do not pass it in vars or var_files", packer.DownloadsDirVar))
	}
	for _, name := range tpl.SensitiveVariables {
		if values[name] != "" && !isSecret[name] {
			errs = append(errs, fmt.Errorf("%s is a sensitive variable of the template: pass it as vars={%q: secret(%q)}, not as a plain string (which would reach the journal and plans)", name, name, name))
		}
	}
	if len(uploads) > 0 && !usesVar(tpl, packer.FilesDirVar) && tpl.IsHCL2() {
		errs = append(errs, fmt.Errorf("files were given but the template never uses var.%s: declare variable %q { type = string } and add to its build block:\n    provisioner \"file\" {\n      source      = \"${var.%s}/home/packer/\"\n      destination = \"/home/packer/\"\n    }",
			packer.FilesDirVar, packer.FilesDirVar, packer.FilesDirVar))
	} else if len(uploads) > 0 && !usesVar(tpl, packer.FilesDirVar) {
		errs = append(errs, fmt.Errorf("files were given but the template never uses {{user `%s`}}: add a file provisioner {\"type\": \"file\", \"source\": \"{{user `%s`}}/home/packer/\", \"destination\": \"/home/packer/\"}",
			packer.FilesDirVar, packer.FilesDirVar))
	}
	return errors.Join(errs...)
}

// usesVar reports whether the template uses {{user `name`}} (var.name in
// HCL2).
func usesVar(tpl *packer.Template, name string) bool {
	return tpl.Uses(packer.KindUser, name)
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// readVarFile reads a workspace var-file as packer does, naming it by its
// workspace path: for a JSON template an object of strings (null read as
// "", packer.ReadVarFile); for an HCL2 template typed JSON or .pkrvars.hcl.
func readVarFile(tpl *packer.Template, abs, rel string) (map[string]string, error) {
	read := packer.ReadVarFile
	if tpl.IsHCL2() {
		read = tpl.ReadVarFile
	}
	vf, err := read(abs)
	if err != nil {
		return nil, fmt.Errorf("var_files: %s", strings.ReplaceAll(err.Error(), abs, rel))
	}
	return vf, nil
}

// resolve resolves a workspace path as the calling file wrote it.
func (c *Call) resolve(p string) (rel, abs string, err error) {
	from := ""
	if len(c.step.Stack) >= 2 {
		from = c.step.Stack[len(c.step.Stack)-2].Pos.Filename()
	}
	rel, abs, err = c.Run.Workspace.Resolve(from, p)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", c.Spec.Name, err)
	}
	return rel, abs, nil
}

// uploads reads the files argument and checks every source exists.
func (c *Call) uploads() ([]upload, error) {
	seq, _ := c.Value("files").(starlark.Indexable)
	if seq == nil {
		return nil, nil
	}
	var out []upload
	var errs []error
	seen := map[string]string{}
	for i := 0; i < seq.Len(); i++ {
		var src, dest string
		generated := false
		switch e := seq.Index(i).(type) {
		case starlark.String:
			var ok bool
			src, dest, ok = strings.Cut(string(e), ":")
			if !ok {
				errs = append(errs, fmt.Errorf("files[%d] %q: want \"src:dest\"", i, string(e)))
				continue
			}
		case *starlarkstruct.Struct:
			src, dest = attrString(e, "src"), attrString(e, "dest")
			if g, err := e.Attr("generated"); err == nil {
				generated = bool(g.Truth())
			}
		}
		if src == "" || dest == "" {
			errs = append(errs, fmt.Errorf("files[%d]: want a struct with src and dest, or \"src:dest\"", i))
			continue
		}
		if !path.IsAbs(dest) || path.Clean(dest) != dest || dest == "/" {
			errs = append(errs, fmt.Errorf("files[%d]: dest %q must be a clean absolute path on the VM, e.g. /home/packer/%s", i, dest, path.Base(src)))
			continue
		}
		if prev, dup := seen[dest]; dup {
			errs = append(errs, fmt.Errorf("files[%d]: %s and %s both go to %s", i, prev, src, dest))
			continue
		}
		seen[dest] = src
		rel, abs, err := c.resolve(src)
		if err != nil {
			errs = append(errs, fmt.Errorf("files[%d]: %w", i, err))
			continue
		}
		st, err := os.Stat(abs)
		switch {
		case err != nil && generated && c.Run.dryRun():
			continue // made by an earlier command() step, which runs in the apply pass only
		case err != nil && generated:
			errs = append(errs, fmt.Errorf("files[%d]: %s does not exist: the step that generates it (command()) must run before packer_build", i, rel))
			continue
		case err != nil:
			errs = append(errs, fmt.Errorf("files[%d]: %s does not exist in the workspace", i, rel))
			continue
		case !st.Mode().IsRegular():
			errs = append(errs, fmt.Errorf("files[%d]: %s is not a regular file: list the files to upload one by one", i, rel))
			continue
		}
		out = append(out, upload{src: rel, abs: abs, dest: dest})
	}
	return out, errors.Join(errs...)
}

// stageUploads copies the uploads into dir, a new directory that mirrors their
// destinations (dir/home/packer/x for /home/packer/x), keeping modes. For
// a simulated build (link) they are hard links where the file system
// allows: the simulation reads the staged files once, as it starts, so a
// link serves it as a copy would, without copying megabytes of build
// tools per build. packer itself gets copies: it uploads them minutes
// later, and an edit in the workspace meanwhile must not change them.
func stageUploads(dir string, uploads []upload, link bool) error {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return err
	}
	for _, u := range uploads {
		dst := filepath.Join(dir, filepath.FromSlash(u.dest))
		if err := stageFile(u.abs, dst, link); err != nil {
			return fmt.Errorf("stage %s: %w", u.src, err)
		}
	}
	return nil
}

// stageFile links (when link is set and the file system allows) or copies
// src to dst.
func stageFile(src, dst string, link bool) error {
	if link {
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if os.Link(src, dst) == nil {
			return nil
		}
	}
	return copyFile(src, dst)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, st.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// buildResult turns packer's result into packer_build's struct and a
// summary line.
func (c *Call) buildResult(res *packer.Result) (starlark.Value, string, error) {
	var arts []any
	var image *packer.AzureARMArtifact
	for _, b := range res.Builds {
		for _, a := range b.Artifacts {
			files := a.Files
			if files == nil {
				files = []string{}
			}
			arts = append(arts, makeStruct("artifact", fields{"build": b.Name, "builder_id": a.BuilderID, "id": a.ID, "files": files, "string": a.String}))
			if a.Azure != nil && a.Azure.ManagedImageID != "" && image == nil {
				image = a.Azure
			}
		}
	}
	if arts == nil {
		arts = []any{}
	}
	downloads := map[string]any{}
	for name, content := range res.Downloads {
		downloads[name] = content
	}
	f := fields{"artifacts": arts, "managed_image": nil, "sig_version": nil, "vhd_url": nil, "resource_group": nil, "downloads": downloads}
	var summary []string
	if image != nil {
		f["managed_image"] = makeStruct("managed_image", fields{"id": image.ManagedImageID, "name": image.ManagedImageName,
			"resource_group": image.ManagedImageResourceGroupName, "location": image.ManagedImageLocation})
		summary = append(summary, "managed image "+image.ManagedImageName)
	}
	if res.ResourceGroup != "" {
		f["resource_group"] = res.ResourceGroup
	}
	if res.OSDiskVHDURL != "" {
		f["vhd_url"] = res.OSDiskVHDURL
		summary = append(summary, "VHD "+res.OSDiskVHDURL)
	}
	if res.GalleryImageVersionID != "" {
		v, err := c.galleryVersion(res.GalleryImageVersionID)
		if err != nil {
			return nil, "", err
		}
		f["sig_version"] = v
		if rid, err := cloud.ParseResourceID(res.GalleryImageVersionID); err == nil && len(rid.Names) == 3 {
			version := "version " + strings.Join(rid.Names, "/")
			if !cloud.SameSubscription(rid.Subscription, c.Run.Provider.SubscriptionID()) {
				version += " (subscription " + rid.Subscription + ")"
			}
			summary = append(summary, version)
		}
	}
	if len(summary) == 0 {
		summary = append(summary, fmt.Sprintf("%d artifact(s)", len(arts)))
	}
	return makeStruct("packer_build", f), strings.Join(summary, ", "), nil
}

// galleryVersion reads back the version packer published, as the
// image_version() struct later steps (replicate, sig_to_vhd) take.
func (c *Call) galleryVersion(id string) (starlark.Value, error) {
	rid, err := cloud.ParseResourceID(id)
	if err != nil || !rid.Is("Microsoft.Compute", "galleries", "images", "versions") {
		return nil, fmt.Errorf("packer reported %q, which is not a gallery image version id", id)
	}
	ctx := c.Ctx()
	p, err := c.Run.ProviderFor(ctx, rid.Subscription) // the gallery may be in another subscription
	if err != nil {
		return nil, fmt.Errorf("read back %s: %w", id, err)
	}
	g, err := p.GetGallery(ctx, rid.ResourceGroup, rid.Names[0])
	if err != nil {
		return nil, fmt.Errorf("read back the gallery of %s: %w", id, err)
	}
	d, err := p.GetImageDefinition(ctx, rid.ResourceGroup, rid.Names[0], rid.Names[1])
	if err != nil {
		return nil, fmt.Errorf("read back the definition of %s: %w", id, err)
	}
	v, err := p.GetImageVersion(ctx, rid.ResourceGroup, rid.Names[0], rid.Names[1], rid.Names[2])
	if err != nil {
		return nil, fmt.Errorf("read back %s: %w", id, err)
	}
	ds := makeStruct("image_definition", fields{
		"id": d.ID, "name": d.Name, "gallery": galleryValue(g), "resource_group": d.ResourceGroup, "location": d.Location,
		"publisher": d.Publisher, "offer": d.Offer, "sku": d.SKU, "os_type": d.OSType, "os_state": d.OSState,
		"hyper_v_generation": d.HyperVGeneration, "architecture": d.Architecture, "features": mapOrEmpty(d.Features),
	})
	return versionValue(v, ds), nil
}

// builtVersion finds the build's destination gallery version when it
// exists. A version that did not replicate to every target region is an
// error: reusing it would publish a broken image, and packer cannot
// overwrite it.
func (c *Call) builtVersion(tpl *packer.Template, values, env map[string]string) (*packer.Result, bool, error) {
	builds, err := tpl.Render(values, env)
	if err != nil {
		return nil, false, nil
	}
	for _, cfg := range builds {
		b, _ := cfg.(map[string]any)
		dest, _ := b["shared_image_gallery_destination"].(map[string]any)
		if dest == nil {
			continue
		}
		str := func(k string) string { s, _ := dest[k].(string); return s }
		rg, gallery, def, version := str("resource_group"), str("gallery_name"), str("image_name"), str("image_version")
		if rg == "" || gallery == "" || def == "" || version == "" {
			continue // packer's own validation names what is missing
		}
		gp, err := c.Run.ProviderFor(c.Ctx(), str("subscription"))
		if err != nil {
			continue // a subscription the run cannot read: packer's build finds out
		}
		v, err := gp.GetImageVersion(c.Ctx(), rg, gallery, def, version)
		if cloud.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, false, fmt.Errorf("look for the build's destination version %s/%s/%s: %w", gallery, def, version, err)
		}
		if pending, failed := ensure.ReplicationLaggards(v); len(pending)+len(failed) > 0 {
			return nil, false, fmt.Errorf("the build's destination, gallery image version %s of %s/%s, exists from an earlier build but is not usable (failed in: %s; not complete in: %s): "+
				"delete it (az sig image-version delete -g %s -r %s -i %s -e %s) or build another version",
				version, gallery, def, listOrNone(failed), listOrNone(pending), rg, gallery, def, version)
		}
		res := &packer.Result{GalleryImageVersionID: v.ID}
		// The build's managed image, when still there (a run that died
		// before deleting it), comes back so the workflow can delete it.
		imgRG, _ := b["managed_image_resource_group_name"].(string)
		imgName, _ := b["managed_image_name"].(string)
		if img, err := c.Run.Provider.GetManagedImage(c.Ctx(), imgRG, imgName); err == nil {
			res.ManagedImageID, res.ResourceGroup = img.ID, img.ResourceGroup
			res.Builds = []packer.BuildArtifacts{{Artifacts: []packer.Artifact{{Azure: &packer.AzureARMArtifact{
				ManagedImageResourceGroupName: img.ResourceGroup, ManagedImageName: img.Name, ManagedImageID: img.ID,
				ManagedImageLocation: img.Location, ManagedImageSharedImageGalleryID: v.ID,
			}}}}}
		}
		return res, true, nil
	}
	return nil, false, nil
}

func listOrNone(items []string) string {
	if len(items) == 0 {
		return "none"
	}
	return strings.Join(items, ", ")
}
