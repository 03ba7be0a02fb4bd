// Command imgflow runs Starlark workflows that build and publish Azure VM
// images.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

const usage = `imgflow builds and publishes Azure VM images from Starlark workflows.

Usage:
  imgflow run FILE [--var k=v]… [--vars-file F] [--state DIR] [--outputs FILE] [--target local|azure]
  imgflow run --resume RUN_ID [FILE] [--var k=v]…   resume a failed or interrupted run
  imgflow gc [--older-than 4h] [--dry-run]   finish the cleanups of dead and abandoned runs
  imgflow runs [--output json] list runs and whether they can be resumed
  imgflow plan FILE [--var k=v]… [--output json] [--no-packer-validate]   what run would do; nothing changes
  imgflow test [PATH…] [--junit FILE] [--output json]   run *_test.star files (default: workflows/)
  imgflow check FILE… [--no-packer-validate]   parse, resolve, follow loads, lint, packer validate; nothing runs
  imgflow fmt [-check] [PATH…] format .star files like buildifier (default: workflows lib)
  imgflow lint [PATH…]         buildifier warnings and imgflow's checks (default: workflows lib)
  imgflow doc [--markdown | --stubs DIR]   builtin reference (Markdown) or editor stubs (imgflow.pyi)
  imgflow state [--state DIR] [--output json]   show what exists on the local target
  imgflow completion bash|zsh  shell completion script
  imgflow version

plan and check run packer validate on packer_build calls when packer is on PATH.
run and plan also take --output json; in Azure Pipelines (TF_BUILD) and GitHub
Actions (GITHUB_ACTIONS) their logs are grouped and errors become annotations.

Run 'imgflow COMMAND -h' for a command's flags.
`

func main() {
	ctx, stop := notifyContext(context.Background())
	code := runMain(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// runMain dispatches a command; it returns the process exit code.
func runMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	env := newEnv(stdout, stderr)
	cmd, rest := args[0], args[1:]
	var err error
	switch cmd {
	case "run":
		err = cmdRun(ctx, env, rest)
	case "test":
		err = cmdTest(ctx, env, rest)
	case "doc":
		err = cmdDoc(env, rest)
	case "state":
		err = cmdState(env, rest)
	case "plan":
		err = cmdPlan(ctx, env, rest)
	case "gc":
		err = cmdGC(ctx, env, rest)
	case "runs":
		err = cmdRuns(env, rest)
	case "fmt":
		err = cmdFmt(env, rest)
	case "lint":
		err = cmdLint(env, rest)
	case "check":
		err = cmdCheck(ctx, env, rest)
	case "completion":
		err = cmdCompletion(env, rest)
	case "__complete-params":
		err = cmdCompleteParams(env, rest)
	case "version":
		fmt.Fprintln(stdout, "imgflow", version)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "imgflow: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
	if err == nil {
		return 0
	}
	if code, ok := err.(exitCode); ok {
		return int(code)
	}
	env.errorf("%v", err)
	return 1
}

// exitCode ends a command with a status whose message was already printed.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }
