package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/fatih/color"
	"github.com/mattn/go-isatty"

	"github.com/imgflow/imgflow/progress"
)

// env is the command's console: where output goes, whether it is
// coloured (never with NO_COLOR or when not a terminal) and whether
// stderr can redraw progress bars.
type env struct {
	stdout, stderr io.Writer
	color          bool
	stderrTTY      bool
	// declared, when set, is told of each FlagSet a command declares:
	// completion learns a command's flags by running it with -h.
	declared func(*flag.FlagSet)
}

func newEnv(stdout, stderr io.Writer) *env {
	e := &env{stdout: stdout, stderr: stderr}
	if f, ok := stdout.(*os.File); ok && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb" {
		e.color = isatty.IsTerminal(f.Fd())
	}
	if f, ok := stderr.(*os.File); ok && os.Getenv("TERM") != "dumb" {
		e.stderrTTY = isatty.IsTerminal(f.Fd())
	}
	return e
}

// progressPrinter reports blob transfers on stderr (bars on a terminal, a
// line every 10 s or 10 % otherwise, as in CI logs) and says every minute
// that a long ARM operation goes on.
func (e *env) progressPrinter() *progress.Printer {
	tty := e.stderrTTY
	return progress.New(e.stderr, progress.Options{Terminal: &tty})
}

// paint returns a colouring function that is a no-op without colour.
func (e *env) paint(attrs ...color.Attribute) func(string) string {
	c := color.New(attrs...)
	if e.color {
		c.EnableColor()
	} else {
		c.DisableColor()
	}
	return func(s string) string { return c.Sprint(s) }
}

func (e *env) errorf(format string, args ...any) {
	red := e.paint(color.FgRed, color.Bold)
	msg := fmt.Sprintf(format, args...)
	first, rest, _ := strings.Cut(msg, "\n")
	fmt.Fprintln(e.stderr, red("error: ")+first)
	if rest != "" {
		fmt.Fprintln(e.stderr, rest)
	}
}

// warnf prints a warning: something the user should know that does not
// fail the command.
func (e *env) warnf(format string, args ...any) {
	yellow := e.paint(color.FgYellow, color.Bold)
	fmt.Fprintln(e.stderr, yellow("warning: ")+fmt.Sprintf(format, args...))
}

// synchronized returns an env whose writers may be shared by goroutines:
// each write lands whole.
func (e *env) synchronized() *env {
	mu := &sync.Mutex{}
	c := *e
	c.stderrTTY = false // workflows side by side: plain progress lines
	c.stdout = &lockedWriter{mu: mu, w: e.stdout}
	c.stderr = &lockedWriter{mu: mu, w: e.stderr}
	return &c
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
