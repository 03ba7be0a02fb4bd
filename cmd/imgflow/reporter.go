package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/fatih/color"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/cloud"
)

// consoleReporter prints each step when it finishes, with its outcome,
// duration and the workflow line that asked for it.
type consoleReporter struct {
	e *env
	// planning words outcomes as intentions (create, not created).
	planning bool
	// prefix starts every line (the workflow's name when several run).
	prefix string
	mu     sync.Mutex
	n      int
	dim    func(string) string
	ok     func(string) string
	upd    func(string) string
	bad    func(string) string
}

func newConsoleReporter(e *env) *consoleReporter {
	return &consoleReporter{
		e:   e,
		dim: e.paint(color.Faint),
		ok:  e.paint(color.FgGreen),
		upd: e.paint(color.FgYellow),
		bad: e.paint(color.FgRed),
	}
}

func (r *consoleReporter) StepStarted(*builtins.Step) {}

func (r *consoleReporter) StepFinished(s *builtins.Step) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	var outcome string
	if r.planning {
		s = planned(s)
	}
	switch {
	case s.Err != nil:
		outcome = r.bad("failed")
	case s.Outcome == cloud.Created || s.Outcome == "create":
		outcome = r.ok(string(s.Outcome))
	case s.Outcome == cloud.Updated || s.Outcome == "update":
		outcome = r.upd(string(s.Outcome))
	default:
		outcome = r.dim(string(s.Outcome))
	}
	fmt.Fprintf(r.e.stdout, "%s%3d %-17s %s %s %s %s\n", r.prefix, r.n, s.Builtin, s.Summary, outcome,
		r.dim(formatDuration(s.Duration)), r.dim(stepPos(s)))
}

// stepPos is where the workflow asked for the step: its own line, followed
// by the library line that made the call when a library function did.
func stepPos(s *builtins.Step) string {
	if len(s.Stack) < 2 {
		return s.Pos
	}
	top := s.Stack[0].Pos.String()
	if top == s.Pos {
		return s.Pos
	}
	return top + " (" + s.Pos + ")"
}

// planned is the step with its outcome worded as an intention.
func planned(s *builtins.Step) *builtins.Step {
	c := *s
	c.Outcome = cloud.Outcome(planAction(string(s.Outcome)))
	return &c
}

func (r *consoleReporter) Print(pos, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(r.e.stdout, "%s%s %s\n", r.prefix, r.dim(pos+":"), msg)
}

// CommandOutput shows a command() step's output as the tool's own, like
// packer's ("[make] …"): no position, which would read as a diagnostic.
func (r *consoleReporter) CommandOutput(_, line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(r.e.stdout, "%s%s\n", r.prefix, line)
}

func (r *consoleReporter) printOutputs(outputs []builtins.Output) {
	if len(outputs) == 0 {
		return
	}
	fmt.Fprintln(r.e.stdout, "Outputs:")
	for _, o := range outputs {
		fmt.Fprintf(r.e.stdout, "  %s = %s\n", o.Name, jsonText(o.Value))
	}
}

// printArtifacts lists the files artifact() wrote, after the outputs.
func (r *consoleReporter) printArtifacts(artifacts []builtins.Artifact) {
	if len(artifacts) == 0 {
		return
	}
	fmt.Fprintln(r.e.stdout, "Artifacts:")
	for _, a := range artifacts {
		where := a.Path
		if where == "" {
			where = "(not written)"
		}
		fmt.Fprintf(r.e.stdout, "  %s  %s\n", a.Name, where)
	}
}

func formatDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	return d.Round(100 * time.Millisecond).String()
}

// jsonText is v as compact JSON, without HTML escaping ("<pending guid>"
// stays readable).
func jsonText(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
