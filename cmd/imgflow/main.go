// Command imgflow runs Starlark workflows that build and publish Azure VM
// images.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx, stop := notifyContext(context.Background())
	code := runMain(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// runMain dispatches a command; it returns the process exit code.
func runMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		writeUsage(stderr)
		return 2
	}
	env := newEnv(stdout, stderr)
	name, rest := args[0], args[1:]
	if name == "-h" || name == "--help" {
		name = "help"
	}
	cmd := lookupCommand(name)
	if cmd == nil {
		fmt.Fprintf(stderr, "imgflow: unknown command %q\n\n", name)
		writeUsage(stderr)
		return 2
	}
	if !cmd.movesData {
		lightGC()
	}
	err := cmd.run(ctx, env, rest)
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

// lightGC lets the heap grow to five times what is live before a
// collection (GOGC=400) unless GOGC is set: commands that evaluate
// workflows and exit keep a small heap of short-lived values, and the
// default spends about a tenth of `imgflow test`'s CPU collecting them
// (BENCHMARKS.md).
func lightGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
}
