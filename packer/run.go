package packer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/imgflow/imgflow/internal/redact"
)

// DefaultKillGrace is how long a cancelled packer gets between SIGINT and
// SIGKILL when Runner.KillGrace is zero. It is long because packer's
// cancel is its cleanup: the azure-arm builder deletes the build VM, its
// disks and network and its temporary resource group, and waits for
// Azure to finish, which takes minutes; killed sooner, packer would leave
// them behind, running and billed. A second interrupt ends imgflow at
// once (cmd/imgflow's signals), and packer, in its own process group,
// still finishes its cleanup.
const DefaultKillGrace = 15 * time.Minute

// Runner runs the packer binary. The zero value runs "packer" from PATH and
// discards its ui output. A Runner holds no state between calls and may be
// used concurrently.
type Runner struct {
	// Binary is the packer executable: a path, or a name looked up in PATH.
	// Default "packer".
	Binary string
	// Stdout receives packer's ui lines (say, message, error) as they
	// stream, one display line per write, each starting with Prefix. Secrets
	// and SAS signatures are redacted. Nil discards them.
	Stdout io.Writer
	// Prefix starts every line written to Stdout, e.g. "[packer] ".
	Prefix string
	// Env is added to this process's environment for packer ("K=V"; later
	// entries win). CHECKPOINT_DISABLE=1 is set unless Env overrides it, so
	// packer does not phone home for version checks.
	Env []string
	// CloudEnvironment, when set, is the Azure cloud's packer name
	// (Public, USGovernment, China) given to templates that declare
	// cloud_environment_name and leave it unset (image-builder's).
	CloudEnvironment string
	// KillGrace is how long packer gets to stop after SIGINT before the
	// process group is killed. Default DefaultKillGrace.
	KillGrace time.Duration
}

// BuildRequest is one `packer build`.
type BuildRequest struct {
	// TemplatePath is the JSON or .pkr.hcl template; relative paths are
	// relative to WorkDir.
	TemplatePath string
	// Vars are user variables, passed to packer in a temporary 0600
	// var-file (never on the command line). They override VarFiles.
	Vars map[string]string
	// Sensitive names the Vars (or VarFiles keys) whose values are secrets;
	// the template's "sensitive-variables" are added. Their values are
	// redacted from everything printed or returned.
	Sensitive []string
	// VarFiles are extra JSON var-files, passed before the Vars file;
	// relative paths are relative to WorkDir.
	VarFiles []string
	// Only restricts the build to these build names (-only), as rendered:
	// "sig-flatcar-gen2" for a builder named "sig-{{user `build_name`}}".
	Only []string
	// WorkDir is packer's working directory (relative paths inside the
	// template resolve against it). Default: the current directory.
	WorkDir string
	// TempDir is where the var-file of Vars is served (a run's own
	// temporary directory, which resume and gc remove). Default:
	// os.TempDir().
	TempDir string
	// Mirrors, when WorkDir is a build's own directory made by
	// MirrorWorkDir, is the directory it mirrors (the checkout): what
	// WorkDir holds besides the build's own output. Informational, for
	// callers that compare requests.
	Mirrors string
	// Unmirrored says WorkDir was not made a mirror (CheckOwn instead of
	// MirrorWorkDir): it holds only Own, the paths the build writes, and
	// a builder that reads the checkout without running packer (the local
	// simulation, in a plan) reads every other path from Mirrors, through
	// ReadPath. Linking each of the checkout's entries was a tenth of a
	// plan's time; real packer always gets the mirror.
	Unmirrored bool
	Own        []string
	// MakeWorkDir, when set, makes WorkDir the mirror packer runs in:
	// made only when packer runs (PrepareWorkDir), so a validation whose
	// verdict is cached needs none.
	MakeWorkDir func() error
	// Env is added to packer's environment after Runner.Env: what the
	// template's {{env}} references read. The local simulation renders
	// {{env}} from Env alone.
	Env map[string]string
	// SensitiveEnv names the Env entries whose values are secrets; they are
	// redacted like Sensitive variables.
	SensitiveEnv []string
	// OnTemporaryResourceGroup, when set, is called as soon as an
	// azure-arm build says it created its temporary resource group, from
	// the goroutine reading packer's output, while the build goes on: the
	// caller can note the group for deletion should packer not get to
	// delete it (killed after KillGrace, or imgflow itself killed).
	OnTemporaryResourceGroup func(build, group string)
	// PluginConfigs are HCL files of a packer { required_plugins } block
	// that `packer init` installs from before the build, in order: what a
	// legacy JSON template, which cannot declare plugins, needs (image-
	// builder's config.pkr.hcl files). Relative paths are relative to WorkDir.
	PluginConfigs []string
}

// BuildError is a packer build that failed or was cancelled. Its message
// carries packer's own error lines, redacted.
type BuildError struct {
	Template string
	// ExitCode is packer's exit status, -1 when it was killed by a signal.
	ExitCode int
	// Errors are packer's ui error lines and per-build error lines.
	Errors []string
	// Output is the tail of output that was not machine-readable (stderr,
	// crashes), used when packer printed no error line.
	Output []string
	// Cancelled reports that the context ended the build.
	Cancelled bool
	cause     error
}

// Error says how the build ended, followed by packer's error lines.
func (e *BuildError) Error() string {
	var b strings.Builder
	if e.Cancelled {
		fmt.Fprintf(&b, "packer build %s cancelled (%v)", e.Template, e.cause)
	} else {
		fmt.Fprintf(&b, "packer build %s failed (exit status %d)", e.Template, e.ExitCode)
	}
	none := ""
	if !e.Cancelled {
		none = "packer printed no error"
	}
	writeErrorLines(&b, e.Errors, e.Output, none)
	return b.String()
}

// writeErrorLines appends ":" and packer's error lines to b, one per line
// and continuation lines indented; output stands in when there are no
// error lines, and ": "+none when there is neither.
func writeErrorLines(b *strings.Builder, errs, output []string, none string) {
	lines := errs
	if len(lines) == 0 {
		lines = output
	}
	if len(lines) == 0 {
		if none != "" {
			b.WriteString(": " + none)
		}
		return
	}
	b.WriteString(":")
	for _, l := range lines {
		first := true
		for _, part := range strings.Split(l, "\n") {
			if strings.TrimSpace(part) == "" {
				continue
			}
			if first {
				b.WriteString("\n  ")
				first = false
			} else {
				b.WriteString("\n    ")
			}
			b.WriteString(strings.TrimRight(part, " \t\r"))
		}
	}
}

// Unwrap returns the context's error for a cancelled build, or exec's.
func (e *BuildError) Unwrap() error { return e.cause }

// Build runs `packer build -machine-readable` for req.
//
// Before packer starts, Build loads the template, fails with a
// *MissingVariablesError naming every required variable that has no value
// (see Template.CheckVariables; VarFiles and Vars both count; for an HCL2
// template Vars must also be declared, see Template.CheckUndeclared), and
// rejects Only names that match no rendered build name. An HCL2 template's
// required_plugins are installed with `packer init` first.
//
// Cancelling ctx sends SIGINT to packer's process group and SIGKILL after
// KillGrace. On failure Build returns a *BuildError and, when packer ran,
// the partial Result (artifacts of the builds that succeeded).
func (r *Runner) Build(ctx context.Context, req BuildRequest) (*Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("packer build %s: %w", req.TemplatePath, err)
	}
	if err := req.PrepareWorkDir(); err != nil {
		return nil, fmt.Errorf("packer build %s: %w", req.TemplatePath, err)
	}
	req = r.withCloudEnvironment(req)
	env := r.environ(req)
	p, err := prepare(req, envMap(env), true)
	if err != nil {
		return nil, err
	}
	p.env = env
	return r.run(ctx, p)
}

// prepared is a validated BuildRequest with absolute paths.
type prepared struct {
	template string
	tpl      *Template
	vars     map[string]string
	varFiles []string
	only     []string
	workDir  string
	// mirrors is BuildRequest.Mirrors: the directory workDir mirrors.
	mirrors string
	tempDir string // BuildRequest.TempDir
	secrets []string
	env     []string // packer's whole environment
	// onTemporaryGroup is BuildRequest.OnTemporaryResourceGroup.
	onTemporaryGroup func(build, group string)
	// pluginConfigs are BuildRequest.PluginConfigs, resolved, with what
	// each requires.
	pluginConfigs []pluginConfig
}

type pluginConfig struct {
	file    string
	plugins map[string]Plugin
}

// prepare loads and checks req; env is the environment packer will see,
// for the build names that render from it.
func prepare(req BuildRequest, env map[string]string, check bool) (*prepared, error) {
	if req.TemplatePath == "" {
		return nil, errors.New("packer build: no template path")
	}
	p := &prepared{vars: req.Vars, only: req.Only, workDir: req.WorkDir, mirrors: req.Mirrors, tempDir: req.TempDir, onTemporaryGroup: req.OnTemporaryResourceGroup}
	p.template = ResolvePath(req.WorkDir, req.TemplatePath)
	for _, f := range req.PluginConfigs {
		file := ResolvePath(req.WorkDir, f)
		plugins, err := ReadPluginConfig(file)
		if err != nil {
			return nil, err
		}
		p.pluginConfigs = append(p.pluginConfigs, pluginConfig{file: file, plugins: plugins})
	}
	tpl, err := LoadTemplate(p.template)
	if err != nil {
		return nil, err
	}
	p.tpl = tpl

	// What packer will see: var-files in order, then our Vars file.
	values := map[string]string{}
	for _, f := range req.VarFiles {
		abs := ResolvePath(req.WorkDir, f)
		vf, err := tpl.ReadVarFile(abs)
		if err != nil {
			return nil, fmt.Errorf("packer build %s: %w", req.TemplatePath, err)
		}
		for k, v := range vf {
			values[k] = v
		}
		p.varFiles = append(p.varFiles, abs)
	}
	for k, v := range req.Vars {
		values[k] = v
	}

	if check {
		if err := tpl.CheckVariables(values); err != nil {
			return nil, err
		}
		if err := tpl.CheckUndeclared(req.Vars); err != nil {
			return nil, err
		}
		if len(req.Only) > 0 {
			names, err := tpl.BuildNames(values, env)
			if err != nil {
				return nil, err
			}
			if err := CheckOnly("-only", req.Only, names); err != nil {
				return nil, fmt.Errorf("packer build %s: %w", req.TemplatePath, err)
			}
		}
	}

	sensitive := slices.Concat(req.Sensitive, tpl.SensitiveVariables)
	for _, name := range sensitive {
		if v := values[name]; v != "" {
			p.secrets = append(p.secrets, v)
		}
	}
	for _, name := range req.SensitiveEnv {
		if v := req.Env[name]; v != "" {
			p.secrets = append(p.secrets, v)
		}
	}
	return p, nil
}

// CheckOnly fails when a name of only is not one of the rendered build
// names: packer 1.9.5 would stop with "No builds to run" (none matches) or
// quietly skip it (some match). Each error line starts with label, the
// option as the caller's user writes it ("-only", "only:").
func CheckOnly(label string, only, names []string) error {
	var errs []error
	for _, name := range only {
		if !slices.Contains(names, name) {
			errs = append(errs, fmt.Errorf("%s %q matches no builder (builders: %s)", label, name, strings.Join(names, ", ")))
		}
	}
	return errors.Join(errs...)
}

// environ is packer's environment for req: imgflow's (but its IMGFLOW_*
// variables), then
// CHECKPOINT_DISABLE=1 (no version check calls), Runner.Env and req.Env,
// later entries winning.
func (r *Runner) environ(req BuildRequest) []string {
	// imgflow's own variables (its secrets among them) reach packer only
	// when the workflow passes them (vars or env).
	env := append(append(redact.ChildEnv(os.Environ()), "CHECKPOINT_DISABLE=1"), r.Env...)
	keys := make([]string, 0, len(req.Env))
	for k := range req.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		env = append(env, k+"="+req.Env[k])
	}
	return env
}

// envMap turns a "K=V" list into a map, later entries winning.
func envMap(env []string) map[string]string {
	out := make(map[string]string, len(env))
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			out[k] = v
		}
	}
	return out
}

// ResolvePath makes p absolute, relative to dir when it is relative.
func ResolvePath(dir, p string) string {
	if !filepath.IsAbs(p) && dir != "" {
		p = filepath.Join(dir, p)
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// ReadVarFile reads a JSON var-file as packer 1.9.5 does: an object of
// strings, where null is "" (the key is set: it satisfies a required
// variable) and any other type is an error.
func ReadVarFile(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("var-file: %w", err)
	}
	var raw map[string]any
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("var-file %s: %w", path, err)
	}
	out := make(map[string]string, len(raw))
	var errs []error
	for _, k := range sortedKeys(boolSet(raw)) {
		switch v := raw[k].(type) {
		case string:
			out[k] = v
		case nil:
			out[k] = ""
		default:
			errs = append(errs, fmt.Errorf("%s is %s; packer accepts only strings (or null, read as \"\"): quote it", k, jsonKind(v)))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("var-file %s: %w", path, err)
	}
	return out, nil
}

// writeVarFile gives vars (a map of JSON values) to packer as a var-file
// in dir ("" = os.TempDir(), see serveVarFile) and returns its path and
// how to remove it.
func writeVarFile[V any](vars map[string]V, dir string) (string, func(), error) {
	data, err := json.MarshalIndent(vars, "", "  ")
	if err != nil {
		return "", nil, fmt.Errorf("encode var-file: %w", err)
	}
	return serveVarFile(append(data, '\n'), dir)
}

// run executes a prepared build.
func (r *Runner) run(ctx context.Context, p *prepared) (*Result, error) {
	for _, c := range p.pluginConfigs {
		if err := r.initPlugins(ctx, p, c.file, c.plugins); err != nil {
			return nil, err
		}
	}
	if len(p.tpl.RequiredPlugins) > 0 {
		if err := r.initPlugins(ctx, p, p.template, p.tpl.RequiredPlugins); err != nil {
			return nil, err
		}
	}
	red := newRedactor(p.secrets)
	args, cleanup, err := appendBuildArgs([]string{"build", "-machine-readable"}, p)
	if err != nil {
		return nil, fmt.Errorf("packer build %s: %w", p.template, err)
	}
	defer cleanup()

	out := r.printer()
	out(red.redact("packer " + strings.Join(args, " ")))
	col := newCollector(out, red)
	col.names = buildNames(p.tpl)
	col.onTemporaryGroup = p.onTemporaryGroup
	errs := &plainLines{print: out, redact: red}
	ran, err := r.exec(ctx, p.workDir, p.env, args, col.handle, errs.handle)
	if err != nil {
		return nil, fmt.Errorf("packer build %s: %w", p.template, err)
	}
	res := col.result()
	cancelled := ctx.Err() != nil
	// ErrWaitDelay with exit 0: packer finished, but a child kept its
	// stdout open past KillGrace; the output is complete.
	if !cancelled && ran.code == 0 && (ran.waitErr == nil || errors.Is(ran.waitErr, exec.ErrWaitDelay)) {
		return res, nil
	}
	be := &BuildError{Template: p.template, ExitCode: ran.code, Errors: col.errorLines(), Output: append(col.unparsed, errs.tail...)}
	switch {
	case cancelled:
		be.Cancelled, be.cause = true, ctx.Err()
	case ran.waitErr != nil:
		be.cause = ran.waitErr
	}
	return res, be
}

// Version returns packer's version, e.g. "1.9.5".
func (r *Runner) Version(ctx context.Context) (string, error) {
	col := newCollector(nil, nil)
	errs := &plainLines{redact: nil}
	ran, err := r.exec(ctx, "", r.environ(BuildRequest{}), []string{"version", "-machine-readable"}, col.handle, errs.handle)
	if err != nil {
		return "", fmt.Errorf("packer version: %w", err)
	}
	if ctx.Err() != nil {
		return "", fmt.Errorf("packer version: %w", ctx.Err())
	}
	if ran.code != 0 || ran.waitErr != nil {
		msg := strings.Join(slices.Concat(col.errorLines(), col.unparsed, errs.tail), "; ")
		return "", fmt.Errorf("packer version: exit status %d: %s", ran.code, msg)
	}
	if col.version == "" {
		return "", errors.New("packer version: no version line in its machine-readable output")
	}
	return col.version, nil
}

// plainLines handles packer's stderr: plain text (packer writes all
// machine-readable output to stdout), shown and kept for error messages.
// Only exec's stderr goroutine uses it until Wait returns.
type plainLines struct {
	print  func(string)
	redact *redactor
	tail   []string
}

func (p *plainLines) handle(line string) {
	if strings.TrimSpace(line) == "" {
		return
	}
	line = p.redact.redact(line)
	if p.print != nil {
		p.print(line)
	}
	p.tail = append(p.tail, line)
	if len(p.tail) > 20 {
		p.tail = p.tail[1:]
	}
}

// printer returns a function that writes one prefixed line to r.Stdout.
// stdout and stderr are copied by two goroutines, hence the lock.
func (r *Runner) printer() func(string) {
	if r.Stdout == nil {
		return func(string) {}
	}
	var mu sync.Mutex
	return func(line string) {
		mu.Lock()
		defer mu.Unlock()
		_, _ = io.WriteString(r.Stdout, r.Prefix+line+"\n")
	}
}

func (r *Runner) binary() (string, error) {
	bin := r.Binary
	if bin == "" {
		bin = "packer"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return "", fmt.Errorf("packer binary %q not found (imgflow is tested with packer 1.9.5: `make deps` builds it into .tools/bin; put that first on PATH): %w", bin, err)
	}
	return path, nil
}

// execResult is how a packer process ended.
type execResult struct {
	// code is the exit status, -1 when killed by a signal.
	code int
	// waitErr is an error from Wait other than a non-zero exit: the Cancel
	// function's, or exec.ErrWaitDelay.
	waitErr error
}

// exec runs packer with env and args, feeding each stdout and stderr line to the
// callbacks as it arrives (each from its own goroutine). On ctx
// cancellation packer's process group gets SIGINT, then SIGKILL after
// KillGrace. The error is only for a packer that could not start.
func (r *Runner) exec(ctx context.Context, dir string, env, args []string, onStdout, onStderr func(string)) (execResult, error) {
	bin, err := r.binary()
	if err != nil {
		return execResult{code: -1}, err
	}
	grace := r.KillGrace
	if grace <= 0 {
		grace = DefaultKillGrace
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = env
	ownProcessGroup(cmd)
	// SIGTERM would be ignored by packer while it retries, and exec's
	// default (SIGKILL) would leave its plugins and scripts running and its
	// resources uncleaned: SIGINT makes packer cancel and clean up.
	cmd.Cancel = func() error { return interruptGroup(cmd.Process) }
	// After the grace period exec kills packer and closes its pipes.
	cmd.WaitDelay = grace
	stdout := &lineWriter{fn: onStdout}
	stderr := &lineWriter{fn: onStderr}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		return execResult{code: -1}, fmt.Errorf("start %s: %w", bin, err)
	}
	pid := cmd.Process.Pid
	waitErr := cmd.Wait()
	// Wait has joined exec's copying goroutines: the writers are ours now.
	stdout.flush()
	stderr.flush()
	if ctx.Err() != nil {
		// exec's WaitDelay kill reaches only packer itself; plugins or
		// scripts that outlived it would keep running.
		killGroup(pid)
	}
	res := execResult{code: -1}
	if cmd.ProcessState != nil {
		res.code = cmd.ProcessState.ExitCode()
	}
	var exitErr *exec.ExitError
	if !errors.As(waitErr, &exitErr) {
		res.waitErr = waitErr // the exit code already says the rest
	}
	return res, nil
}

// lineWriter splits a byte stream into lines for fn.
type lineWriter struct {
	buf []byte
	fn  func(string)
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	start := 0
	for {
		i := bytes.IndexByte(w.buf[start:], '\n')
		if i < 0 {
			break
		}
		w.fn(string(w.buf[start : start+i]))
		start += i + 1
	}
	if start > 0 {
		w.buf = append(w.buf[:0], w.buf[start:]...)
	}
	return len(p), nil
}

func (w *lineWriter) flush() {
	if len(w.buf) > 0 {
		w.fn(string(w.buf))
		w.buf = nil
	}
}
