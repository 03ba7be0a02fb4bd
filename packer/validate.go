package packer

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// ValidateError is a `packer validate` that found the build invalid. Its
// message carries packer's own error lines, redacted.
type ValidateError struct {
	Template string
	// ExitCode is packer's exit status, -1 when it was killed by a signal.
	ExitCode int
	// Errors are packer's ui error lines, without its "Bundled plugins
	// used" warning.
	Errors []string
	// Output is the tail of output that was not machine-readable, used when
	// packer printed no error line.
	Output []string
	cause  error
}

// Error says that packer rejected the template, followed by its lines.
func (e *ValidateError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "packer validate %s failed (exit status %d)", e.Template, e.ExitCode)
	writeErrorLines(&b, e.Errors, e.Output, "packer printed no error")
	return b.String()
}

// Unwrap returns exec's error when packer did not end on its own.
func (e *ValidateError) Unwrap() error { return e.cause }

// NotValidatedError is returned by Validate for a template that packer
// cannot validate on this machine: it needs plugins that only `packer
// init` installs (it downloads them), or a provisioner's tool. Such a template is checked by
// imgflow's own model only.
type NotValidatedError struct {
	Template string
	// Reason says what is missing and how to get it.
	Reason string
	// ranPacker: packer ran and refused only what its bundled plugin
	// lacks, a verdict worth caching (the others cost no packer run).
	ranPacker bool
}

func (e *NotValidatedError) Error() string {
	return fmt.Sprintf("packer validate %s: not run: checked by imgflow's model only (%s)", e.Template, e.Reason)
}

// Validate runs `packer validate -machine-readable` for req with what a
// Build of req would pass: the same var-files, the Vars in a 0600
// temporary var-file (never argv), -only, working directory and Env.
//
// Like Build it first fails with a *MissingVariablesError for variables
// without a value and rejects unknown Only names. It returns a
// *ValidateError when packer finds the template invalid, and a
// *NotValidatedError, without running packer, for a template that needs
// azure plugin 2.x (see NeedsAzurePlugin2), or provisioners this machine
// lacks (goss, ansible-playbook: see missingProvisionerTools). packer validate does not
// authenticate: azure-arm templates validate offline.
func (r *Runner) Validate(ctx context.Context, req BuildRequest) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("packer validate %s: %w", req.TemplatePath, err)
	}
	if err := req.PrepareWorkDir(); err != nil {
		return fmt.Errorf("packer validate %s: %w", req.TemplatePath, err)
	}
	req = r.withCloudEnvironment(req)
	env := r.environ(req)
	p, err := prepare(req, envMap(env), true)
	if err != nil {
		return err
	}
	if p.tpl.NeedsAzurePlugin2() {
		// imgflow's model of such a template is checked by the caller
		// (packer_build); packer without the plugin could only fail.
		return &NotValidatedError{Template: p.template, Reason: "needs azure plugin 2.x: packer init"}
	}
	p.env = env
	plugin2 := p.azurePlugin2Config()
	if bin, err := r.binary(); err == nil {
		if reason := missingProvisionerTools(p.tpl, envMap(env), bin, p.workDir); reason != "" {
			return &NotValidatedError{Template: p.template, Reason: "needs " + reason}
		}
	}

	args := []string{"validate", "-machine-readable"}
	args, cleanup, err := appendBuildArgs(args, p)
	if err != nil {
		return fmt.Errorf("packer validate %s: %w", p.template, err)
	}
	defer cleanup()

	red := newRedactor(p.secrets)
	out := r.printer()
	out(red.redact("packer " + strings.Join(args, " ")))
	col := newCollector(out, red)
	col.names = buildNames(p.tpl)
	errs := &plainLines{print: out, redact: red}
	ran, err := r.exec(ctx, p.workDir, p.env, args, col.handle, errs.handle)
	if err != nil {
		return fmt.Errorf("packer validate %s: %w", p.template, err)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("packer validate %s: %w", p.template, ctx.Err())
	}
	if ran.code == 0 && (ran.waitErr == nil || errors.Is(ran.waitErr, exec.ErrWaitDelay)) {
		return nil
	}
	ve := &ValidateError{Template: p.template, ExitCode: ran.code, Errors: col.errorLines(),
		Output: append(col.unparsed, errs.tail...), cause: ran.waitErr}
	if keys := unknownKeysOnly(ve.Errors); plugin2 != "" && len(keys) > 0 {
		// The bundled azure plugin 1.x validated what it knows; the keys
		// it refused are 2.x's, which only `packer init` of the config
		// brings: those are checked by imgflow's model only.
		return &NotValidatedError{Template: p.template, ranPacker: true, Reason: fmt.Sprintf(
			"needs azure plugin 2.x (%s): the azure plugin 1.x bundled with packer knows every key but %s; packer init %s installs 2.x",
			plugin2, strings.Join(keys, ", "), plugin2)}
	}
	return ve
}

// azurePlugin2Config names the plugin config (BuildRequest.PluginConfigs)
// that requires azure plugin 2.x, "" when none does: the plugin such a
// build gets from `packer init`, which validation cannot download.
func (p *prepared) azurePlugin2Config() string {
	for _, c := range p.pluginConfigs {
		if needsAzurePlugin2(c.plugins) {
			for _, dir := range []string{p.workDir, p.mirrors} {
				if rel, err := filepath.Rel(ResolvePath(dir, "."), c.file); dir != "" && err == nil && !strings.HasPrefix(rel, "..") {
					return rel // as packer.mk names it, from the working directory
				}
			}
			return c.file
		}
	}
	return ""
}

// unknownKeyRE matches packer's error for a configuration key the plugin
// does not know, `unknown configuration key: '"security_type"'`, which
// packer may wrap after the colon; prepareHeaderRE the lines around a
// list of such errors.
var (
	unknownKeyRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`unknown configuration key:\s*'"([^"]+)"'`) })
	prepareHeaderRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`Error: Failed to prepare build: "[^"]*"|\d+ error(s|\(s\))? occurred:`)
	})
	errorListNoiseRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[\s*]*$`) })
)

// unknownKeysOnly returns the keys packer's error lines refuse as unknown
// when that is all they refuse, else nil.
func unknownKeysOnly(lines []string) []string {
	text := strings.Join(lines, "\n")
	var keys []string
	for _, m := range unknownKeyRE().FindAllStringSubmatch(text, -1) {
		if !slices.Contains(keys, m[1]) {
			keys = append(keys, m[1])
		}
	}
	rest := prepareHeaderRE().ReplaceAllString(unknownKeyRE().ReplaceAllString(text, ""), "")
	if !errorListNoiseRE().MatchString(rest) {
		return nil
	}
	return keys
}

// appendBuildArgs appends the arguments build and validate share: -only,
// the var-files, a temporary var-file with p.vars (removed by cleanup),
// and the template.
func appendBuildArgs(args []string, p *prepared) ([]string, func(), error) {
	cleanup := func() {}
	if len(p.only) > 0 {
		args = append(args, "-only="+strings.Join(p.only, ","))
	}
	for _, f := range p.varFiles {
		args = append(args, "-var-file="+f)
	}
	if len(p.vars) > 0 {
		values, err := p.tpl.VarFileValues(p.vars)
		if err != nil {
			return nil, cleanup, err
		}
		vf, stop, err := writeVarFile(values, p.tempDir)
		if err != nil {
			return nil, cleanup, err
		}
		cleanup = stop
		args = append(args, "-var-file="+vf)
	}
	return append(args, p.template), cleanup, nil
}
