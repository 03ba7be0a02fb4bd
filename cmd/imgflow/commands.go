package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/imgflow/imgflow/internal/suggest"
)

// A command is one imgflow subcommand. The table of commands feeds the
// usage text, dispatch, shell completion and each command's -h, so a
// command is described in one place.
type command struct {
	name string
	// usage is the command line after "imgflow NAME", e.g. "FILE… [flags]".
	usage string
	// summary is one line for the command list.
	summary string
	// description is what -h says the command does.
	description string
	// example is a command line that works in the repository.
	example string
	// args says what the positional arguments are, for completion:
	// "workflow" (.star files), "paths" (.star files and directories),
	// "shells", "engine-release" (a CI engine, then .star files), or ""
	// (none).
	args string
	// hidden commands are dispatched but neither listed nor completed
	// as commands.
	hidden bool
	// movesData marks a command that moves image data (VHD uploads and
	// copies): it keeps Go's default garbage collection, whose heap stays
	// near what the transfer buffers hold. The others evaluate workflows
	// and exit (see lightGC).
	movesData bool
	// secrets marks a command that evaluates workflows, whose outputs hide
	// every secret() value: it refuses a value too short to hide before
	// doing anything (redact.CheckSecretEnv).
	secrets bool
	// run runs the command. Its flags are those it declares on the
	// FlagSet of newFlagSet; completion and -h read them from there.
	run func(ctx context.Context, e *env, args []string) error
}

// commands returns the command table, in the order the usage lists them.
func commands() []*command {
	return []*command{
		{name: "run", usage: "FILE… [flags] | --resume RUN_ID [FILE] [flags]", args: "workflow",
			summary:     "run a workflow",
			description: "Runs a workflow: a validation pass on a dry-run view of the target first (a failure there changes nothing), then the pass that changes the target. Each step is journaled, so a failed or interrupted run can continue with --resume; several files run side by side (-j). The files the workflow publishes with artifact() (vhd-publishing-info.json, release notes, build logs) go to --artifacts DIR, by default .imgflow/artifacts/RUN_ID, and are listed after the outputs.",
			example:     "imgflow run workflows/linux.star --var os_version=24.04 --artifacts out/2404gen2",
			movesData:   true,
			secrets:     true,
			run:         cmdRun},
		{name: "plan", usage: "FILE [flags]", args: "workflow",
			summary:     "what run would do; nothing changes",
			description: "Shows what `imgflow run` would change, step by step, reading the target without changing it. When packer is on PATH, every packer_build reached goes through `packer validate`.",
			example:     "imgflow plan workflows/flatcar.star --var version=4152.2.3 --output json",
			secrets:     true,
			run:         cmdPlan},
		{name: "runs", usage: "[flags]",
			summary:     "list runs and whether they can be resumed",
			description: "Lists the journaled runs, newest first, with their status and whether `imgflow run --resume RUN_ID` can continue them.",
			example:     "imgflow runs --output json",
			run:         cmdRuns},
		{name: "ci", usage: "github|azure-pipelines RELEASE [flags]", args: "engine-release",
			summary:     "write a release's CI definition (GitHub Actions, Azure Pipelines)",
			description: "Writes the CI definition of a release file: a plan job, one matrix job per release job running `imgflow run … --journal URL/RELEASE/JOB_ID --continue` (a retried or re-queued job continues on any agent), and a summary job running `imgflow runs --release` with JUnit output. Credentials come through the engine: OIDC with azure/login on GitHub, a service connection on Azure Pipelines; the journal URL from a CI variable. No secret is written in the file.",
			example:     "imgflow ci github releases/aks.star -o .github/workflows/release-aks.yml",
			run:         cmdCI},
		{name: "gc", usage: "[flags]",
			summary:     "finish the cleanups of dead and abandoned runs",
			description: "Finishes the cleanups (temporary disks, export access, temporary images) of runs that will not finish them themselves: succeeded or cancelled runs whose cleanups failed, and failed or interrupted runs older than --older-than. What is cleaned comes from the run journals, never from guesses.",
			example:     "imgflow gc --older-than 24h --dry-run",
			run:         cmdGC},
		{name: "test", usage: "[PATH…] [flags]", args: "paths",
			summary:     "run *_test.star files (default: workflows/)",
			description: "Runs the test_* functions of *_test.star files on an in-memory target; a PATH ending in /... includes its subdirectories.",
			example:     "imgflow test workflows/... --junit test-results.xml",
			secrets:     true,
			run:         cmdTest},
		{name: "check", usage: "FILE… [flags]", args: "workflow",
			summary:     "parse, resolve, lint, plan every known cell, packer validate; nothing runs",
			description: "Parses and resolves workflows and every module they load, and lints them, without running anything. A lint-clean workflow is then planned on an empty in-memory target with its params' defaults, with the vars of each release job (releases/*.star) that runs it and with each named var set its test file passes to run(); each packer_build template reached goes once through `packer validate` when packer is on PATH. It says which validations ran and which were skipped, and why; any lint finding or failed plan exits 1.",
			example:     "imgflow check workflows/flatcar.star",
			secrets:     true,
			run:         cmdCheck},
		{name: "fmt", usage: "[PATH…] [flags]", args: "paths",
			summary:     "format .star files like buildifier (default: workflows lib)",
			description: "Formats .star files exactly as `buildifier --type=default` does, in place; with -check it only lists the files that are not formatted.",
			example:     "imgflow fmt -check workflows lib",
			run:         withoutContext(cmdFmt)},
		{name: "lint", usage: "[PATH…] [flags]", args: "paths",
			summary:     "buildifier warnings and imgflow's checks (default: workflows lib)",
			description: "Reports buildifier's warnings and imgflow's own checks, one file:line:col: category: message per finding; exits 1 when there is any.",
			example:     "imgflow lint --warnings=-print workflows",
			run:         withoutContext(cmdLint)},
		{name: "doc", usage: "[flags]",
			summary:     "builtin reference (Markdown) or editor stubs (imgflow.pyi)",
			description: "Prints the reference of every builtin as Markdown, rewrites the reference section of a Markdown file, or writes Python-style stubs for editors.",
			example:     "imgflow doc --update WORKFLOWS.md",
			run:         withoutContext(cmdDoc)},
		{name: "state", usage: "[flags]",
			summary:     "show what exists on a target",
			description: "Shows the local (simulated) target's resources as a tree: resource groups, galleries with their definitions and versions, images, disks, storage accounts and blobs. With --target azure, the subscription's galleries with their definitions and versions (as listed: a version's target regions, not its replication status).",
			example:     "imgflow state --output json",
			run:         cmdState},
		{name: "completion", usage: "bash|zsh", args: "shells",
			summary:     "shell completion script",
			description: "Prints the completion script of a shell: commands, each command's flags, workflow files, and after --var the params the workflow declares and their choices.",
			example:     "source <(imgflow completion bash)",
			run:         cmdCompletion},
		{name: "version",
			summary:     "print the version",
			description: "Prints imgflow's version (also imgflow --version): the release it was installed at, or the Go pseudo-version of the commit it was built from (+dirty when the tree had changes).",
			example:     "imgflow version",
			run:         withoutContext(cmdVersion)},
		{name: "help", usage: "[COMMAND]",
			summary:     "print the usage, or a command's help",
			description: "Prints the list of commands, or with a command its description, an example and its flags (the same as imgflow COMMAND -h).",
			example:     "imgflow help run",
			run:         cmdHelp},
		{name: "__complete-params", usage: "FILE [PARAM]", hidden: true,
			summary:     "the params of a workflow, for completion",
			description: "Prints name= for each param a workflow declares or, with PARAM, that param's choices; the completion scripts call it after --var.",
			example:     "imgflow __complete-params workflows/flatcar.star channel",
			run:         cmdCompleteParams},
	}
}

// withoutContext adapts a command that never waits on the cloud.
func withoutContext(f func(*env, []string) error) func(context.Context, *env, []string) error {
	return func(_ context.Context, e *env, args []string) error { return f(e, args) }
}

// lookupCommand finds a command by name.
func lookupCommand(name string) *command {
	for _, c := range commands() {
		if c.name == name {
			return c
		}
	}
	return nil
}

// unknownCommand says a command does not exist, with the closest one.
func unknownCommand(name string) error {
	var names []string
	for _, c := range commands() {
		if !c.hidden {
			names = append(names, c.name)
		}
	}
	if c, ok := suggest.Closest(name, names); ok {
		return fmt.Errorf("unknown command %q: did you mean %q? Run 'imgflow help' for the list of commands", name, c)
	}
	return fmt.Errorf("unknown command %q: run 'imgflow help' for the list of commands", name)
}

// writeUsage prints the list of commands.
func writeUsage(w io.Writer) {
	var b strings.Builder
	b.WriteString("imgflow builds and publishes Azure VM images from Starlark workflows.\n\nUsage:\n  imgflow COMMAND [ARGS] [flags]\n\nCommands:\n")
	for _, c := range commands() {
		if !c.hidden {
			fmt.Fprintf(&b, "  %-11s %s\n", c.name, c.summary)
		}
	}
	b.WriteString(`
run, plan, test, state and runs take --output json (docs/output-schemas.md).
In Azure Pipelines (TF_BUILD) and GitHub Actions (GITHUB_ACTIONS) the logs of
run and plan are grouped and errors become annotations.

Run 'imgflow COMMAND -h' for a command's description, an example and its flags.
`)
	fmt.Fprint(w, b.String())
}

func cmdVersion(e *env, args []string) error {
	fs := newFlagSet("version", e)
	if _, err := parseFlags(fs, args); err != nil {
		return flagError(err)
	}
	fmt.Fprintln(e.stdout, "imgflow", imgflowVersion())
	return nil
}

func cmdHelp(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet("help", e)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return flagError(err)
	}
	if len(pos) == 0 {
		writeUsage(e.stdout)
		return nil
	}
	c := lookupCommand(pos[0])
	if c == nil {
		e.errorf("%v", unknownCommand(pos[0]))
		return exitCode(2) // a usage error, as `imgflow nosuch` is
	}
	return c.run(ctx, e, []string{"-h"})
}
