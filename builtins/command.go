package builtins

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"strings"
	"time"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/internal/redact"
	"go.starlark.net/starlark"
)

// command(): tool steps that run before packer (building the binaries a
// template uploads), streamed, bounded and journaled like cloud steps.

func commandSpec() *Spec {
	return &Spec{
		Name: "command", Positional: 1, Effect: Changes,
		Params: []Param{
			{Name: "argv", Kind: KindStringList, Doc: "program and arguments, no shell; a program with a `/` is a workspace file (`//path` from the root, else relative to cwd), otherwise it is looked up on PATH"},
			{Name: "cwd", Kind: KindString, Default: `"."`, Doc: "working directory inside the workspace, relative to the calling file or `//path`"},
			{Name: "env", Kind: KindDict, Default: "{}", Doc: "extra environment variables: strings or secret() values (imgflow's own IMGFLOW_* variables are never inherited)"},
			{Name: "timeout", Kind: KindDuration, Default: `"30m"`, Doc: "how long the command may run"},
		},
		Returns: "struct(exit_code, output) — output is the last 64 KiB",
		Doc: "Runs a tool step before packer, such as building the binaries a template uploads. Output streams line by line with a `[program]` prefix; a non-zero exit is an error " +
			"showing the last lines. Recorded and journaled like every step; the validation pass and plans only check that the program and cwd exist.",
		Example: `command(["make", "build-tools"], cwd = "//artifacts/build-tools")`,
		Impl:    commandImpl,
	}
}

// commandOutputMax is how much of a command's output its result keeps.
const commandOutputMax = 64 << 10

// commandTailLines is how many output lines a failed command's error shows.
const commandTailLines = 20

func commandImpl(c *Call) (starlark.Value, error) {
	argv := c.Strings("argv")
	if len(argv) == 0 || argv[0] == "" {
		return nil, errors.New(`command: argv is empty: pass the program and its arguments, e.g. ["make", "build-tools"]`)
	}
	cwdRel, cwdAbs, err := c.resolve(c.String("cwd", "."))
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(cwdAbs); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("command: cwd %s is not a directory of the workspace", cwdRel)
	}
	env, secrets, err := commandEnv(c.Value("env"))
	if err != nil {
		return nil, err
	}
	bin, err := c.program(argv[0], cwdRel)
	if err != nil {
		return nil, err
	}
	display := strings.Join(argv, " ")
	if c.Run.dryRun() {
		// What a run would report: a plan words it "run" (planAction).
		c.Report(cloud.Outcome("ran"), display+" in "+cwdRel)
		return makeStruct("command", fields{"exit_code": 0, "output": ""}), nil
	}

	timeout := c.Duration("timeout", 30*time.Minute)
	ctx, cancel := context.WithTimeout(c.Ctx(), timeout)
	defer cancel()
	cmd := execCommand(ctx, bin, argv[1:])
	cmd.Dir = cwdAbs
	cmd.Env = append(redact.ChildEnv(os.Environ()), env...)
	out := &commandOutput{prefix: "[" + path.Base(argv[0]) + "] ", secrets: secrets, pos: c.Pos(), rep: c.Run.Reporter}
	cmd.Stdout, cmd.Stderr = out, out
	runErr := cmd.Run()
	out.flush()
	code := -1
	if cmd.ProcessState != nil {
		code = cmd.ProcessState.ExitCode()
	}
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		return nil, fmt.Errorf("command %s timed out after %s (in %s): raise timeout=… or make it faster%s", display, timeout, cwdRel, out.tailText())
	case c.Ctx().Err() != nil:
		return nil, fmt.Errorf("command %s interrupted: %w", display, c.Ctx().Err())
	case code != 0:
		return nil, fmt.Errorf("command %s exited with status %d (in %s)%s", display, code, cwdRel, out.tailText())
	case runErr != nil:
		return nil, fmt.Errorf("command %s: %w", display, runErr)
	}
	c.Report(cloud.Outcome("ran"), display+" in "+cwdRel)
	return makeStruct("command", fields{"exit_code": code, "output": string(out.kept)}), nil
}

// commandEnv converts the env dict to K=V pairs; secret values are
// revealed for the process and returned for redaction.
func commandEnv(v starlark.Value) ([]string, []string, error) {
	vars, err := envVars("command: env", v)
	env := make([]string, 0, len(vars))
	for _, e := range vars {
		env = append(env, e.name+"="+e.value)
	}
	return env, secretValues(v), err
}

// envVar is one variable of an env dict; secret marks a secret()'s value.
type envVar struct {
	name, value string
	secret      bool
}

// envVars reads a dict of environment variables, what naming it in
// errors: names are variable names, values strings or secret()s, which
// are revealed (in the dict's order). Anything but a dict is no variables.
func envVars(what string, v starlark.Value) ([]envVar, error) {
	d, _ := v.(*starlark.Dict)
	if d == nil {
		return nil, nil
	}
	var env []envVar
	var errs []error
	for _, kv := range d.Items() {
		k, ok := kv[0].(starlark.String)
		if !ok || !secretNameRE().MatchString(string(k)) {
			errs = append(errs, fmt.Errorf("%s key %s is not a variable name (letters, digits, _)", what, kv[0]))
			continue
		}
		switch val := kv[1].(type) {
		case starlark.String:
			env = append(env, envVar{name: string(k), value: string(val)})
		case *Secret:
			env = append(env, envVar{name: string(k), value: val.reveal(), secret: true})
		default:
			errs = append(errs, fmt.Errorf("%s[%q] is a %s: want a string or secret()", what, string(k), describe(val)))
		}
	}
	return env, errors.Join(errs...)
}

// program finds argv[0]: a workspace file when it has a slash, else on PATH.
func (c *Call) program(name, cwdRel string) (string, error) {
	if !strings.Contains(name, "/") {
		bin, err := exec.LookPath(name)
		if err != nil {
			return "", fmt.Errorf("command: %s is not on PATH: install it, or give a workspace path such as //tools/%s", name, name)
		}
		return bin, nil
	}
	rel, abs, err := c.Run.Workspace.Resolve(path.Join(cwdRel, "_"), name)
	if err != nil {
		return "", fmt.Errorf("command: %w", err)
	}
	st, err := os.Stat(abs)
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("command: %s is not an executable file of the workspace (chmod +x it, or fix the path)", rel)
	}
	return abs, nil
}

// commandOutput streams a command's output line by line to the reporter,
// redacted, and keeps its tail.
type commandOutput struct {
	prefix  string
	secrets []string
	pos     string
	rep     Reporter
	partial []byte
	kept    []byte   // last commandOutputMax bytes, redacted
	tail    []string // last commandTailLines lines
}

func (o *commandOutput) Write(p []byte) (int, error) {
	o.partial = append(o.partial, p...)
	for {
		i := bytes.IndexByte(o.partial, '\n')
		if i < 0 {
			break
		}
		o.line(string(o.partial[:i]))
		o.partial = o.partial[i+1:]
	}
	return len(p), nil
}

func (o *commandOutput) flush() {
	if len(o.partial) > 0 {
		o.line(string(o.partial))
		o.partial = nil
	}
}

func (o *commandOutput) line(l string) {
	l = redactValues(strings.TrimRight(l, "\r"), o.secrets)
	if out, ok := o.rep.(OutputReporter); ok {
		out.CommandOutput(o.pos, o.prefix+l)
	} else if o.rep != nil {
		o.rep.Print(o.pos, o.prefix+l)
	}
	o.kept = append(o.kept, l+"\n"...)
	if over := len(o.kept) - commandOutputMax; over > 0 {
		o.kept = o.kept[over:]
	}
	o.tail = append(o.tail, l)
	if len(o.tail) > commandTailLines {
		o.tail = o.tail[1:]
	}
}

func (o *commandOutput) tailText() string {
	if len(o.tail) == 0 {
		return ": it printed nothing"
	}
	return "; last output:\n  " + strings.Join(o.tail, "\n  ")
}

// execCommand makes the process of a command step. Cancellation sends
// SIGINT (make and most tools stop cleanly on it), then kills after a
// grace period.
func execCommand(ctx context.Context, bin string, args []string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// builtVersion finds the gallery version a template's
// shared_image_gallery_destination names, when it exists already.
