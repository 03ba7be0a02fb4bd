// Command imgflow runs Starlark workflows that build and publish Azure VM
// images.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"github.com/imgflow/imgflow/internal/redact"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	stopProfile := startProfile()
	ctx, stop := notifyContext(context.Background())
	code := runMain(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	trimCaches(time.Now())
	stopProfile()
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
	switch name {
	case "-h", "--help":
		name = "help"
	case "-version", "--version":
		name = "version"
	}
	cmd := lookupCommand(name)
	if cmd == nil {
		fmt.Fprintf(stderr, "imgflow: %v\n", unknownCommand(name))
		return 2
	}
	if !cmd.movesData {
		defer lessGC()()
	}
	var err error
	if cmd.secrets {
		err = redact.CheckSecretEnv(os.Environ())
	}
	if err == nil {
		err = cmd.run(ctx, env, rest)
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

// lessGC lets the heap grow to five times what is live before collecting
// (GOGC=400) unless GOGC is set, until the returned restore is called.
// Commands that evaluate workflows and exit make short-lived values by the
// megabyte (a fresh cloud per test, state copies) in a heap of tens of
// MiB; with Go's default the collector took about a third of `imgflow
// test`'s CPU time and a tenth of a plan's.
func lessGC() (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	previous := debug.SetGCPercent(400)
	return func() { debug.SetGCPercent(previous) }
}
