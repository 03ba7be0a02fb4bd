package interp

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/internal/redact"
)

// Error is a failed run as the user sees it: where (the workflow's
// file:line), what, the source line and the Starlark backtrace.
type Error struct {
	// Pos is file:line:col of the innermost workflow frame, if known.
	Pos string
	Msg string
	// Source is the offending line with a caret under the column.
	Source string
	// CalledFrom is the workflow's own line that led to Pos, when Pos is
	// in a library the workflow called.
	CalledFrom string
	// Backtrace is the Starlark call stack, outermost first.
	Backtrace string
	// Cause is the underlying error, for errors.Is/As.
	Cause error
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Pos != "" {
		b.WriteString(e.Pos + ": ")
	}
	b.WriteString(e.Msg)
	if e.Source != "" {
		b.WriteString("\n" + e.Source)
	}
	if e.CalledFrom != "" {
		b.WriteString("\ncalled from " + e.CalledFrom)
	}
	if e.Backtrace != "" {
		b.WriteString("\n" + e.Backtrace)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Cause }

// renderError turns an execution error into an *Error: the deepest
// EvalError (load() wraps the one of the loaded module) gives the stack.
//
// The result carries no secret: SAS signatures and secret() values quoted
// anywhere in the message (a --var echoed by a conversion error, a URL in
// an Azure error) are redacted here, the one place every run error passes
// on its way to the output, the journal and JUnit reports.
func renderError(err error, ws *builtins.Workspace) error {
	var already *Error
	if errors.As(err, &already) {
		return err
	}
	out := describeError(err, ws)
	out.redact(redact.SecretValues(os.Environ()))
	return out
}

// redact removes SAS signatures and the secret values from every text field.
func (e *Error) redact(secrets []string) {
	for _, f := range []*string{&e.Pos, &e.Msg, &e.Source, &e.CalledFrom, &e.Backtrace} {
		*f = redact.Text(*f, secrets)
	}
}

// describeError finds where err happened and what the user sees of it.
func describeError(err error, ws *builtins.Workspace) *Error {
	var se syntax.Error
	if errors.As(err, &se) {
		return &Error{Pos: se.Pos.String(), Msg: "syntax error: " + se.Msg, Source: sourceLine(ws, se.Pos), Cause: err}
	}
	var rl resolve.ErrorList
	if errors.As(err, &rl) && len(rl) > 0 {
		msgs := make([]string, len(rl))
		for i, e := range rl {
			msgs[i] = e.Pos.String() + ": " + e.Msg
		}
		return &Error{Pos: rl[0].Pos.String(), Msg: rl[0].Msg, Source: sourceLine(ws, rl[0].Pos),
			Backtrace: strings.Join(msgs[1:], "\n"), Cause: err}
	}
	ee := deepestEvalError(err)
	if ee == nil {
		return &Error{Msg: err.Error(), Cause: err}
	}
	out := &Error{Msg: innermostMessage(err, ee), Cause: err}
	if frame, ok := innermostStarlarkFrame(ee.CallStack); ok {
		out.Pos = frame.Pos.String()
		out.Source = sourceLine(ws, frame.Pos)
	}
	stack := fullStack(err)
	if len(stack) > 0 && stack[0].Pos.IsValid() {
		if top := stack[0].Pos.String(); !strings.HasPrefix(out.Pos, stack[0].Pos.Filename()+":") {
			out.CalledFrom = top
		}
	}
	out.Backtrace = backtrace(stack)
	return out
}

// fullStack joins the stacks of nested EvalErrors (a failed load() wraps
// the loaded module's error), outermost first, so the backtrace runs from
// the workflow's load statement down to the failing line of the library.
func fullStack(err error) starlark.CallStack {
	var stack starlark.CallStack
	for e := err; e != nil; e = errors.Unwrap(e) {
		ee, ok := e.(*starlark.EvalError)
		if !ok {
			continue
		}
		stack = append(stack, ee.CallStack...)
	}
	return stack
}

// deepestEvalError follows the wrap chain to the innermost EvalError.
func deepestEvalError(err error) *starlark.EvalError {
	var deepest *starlark.EvalError
	for e := err; e != nil; e = errors.Unwrap(e) {
		if ee, ok := e.(*starlark.EvalError); ok {
			deepest = ee
		}
	}
	return deepest
}

// innermostMessage is the error of the failing builtin or expression,
// without the "cannot load …:" prefixes of the enclosing loads (the
// backtrace shows those).
func innermostMessage(err error, ee *starlark.EvalError) string {
	if cause := ee.Unwrap(); cause != nil {
		var inner *starlark.EvalError
		if !errors.As(cause, &inner) {
			return cause.Error()
		}
	}
	return ee.Msg
}

func innermostStarlarkFrame(stack starlark.CallStack) (starlark.CallFrame, bool) {
	for i := len(stack) - 1; i >= 0; i-- {
		if stack[i].Pos.IsValid() && stack[i].Pos.Filename() != "<builtin>" {
			return stack[i], true
		}
	}
	return starlark.CallFrame{}, false
}

// backtrace prints the stack, outermost first, like Python.
func backtrace(stack starlark.CallStack) string {
	var b strings.Builder
	b.WriteString("Traceback (most recent call last):")
	for _, f := range stack {
		if !f.Pos.IsValid() || f.Pos.Filename() == "<builtin>" {
			fmt.Fprintf(&b, "\n  %s: in %s", "<builtin>", f.Name)
			continue
		}
		fmt.Fprintf(&b, "\n  %s: in %s", f.Pos, f.Name)
	}
	return b.String()
}

// sourceLine shows the line at pos with a caret under the column.
func sourceLine(ws *builtins.Workspace, pos syntax.Position) string {
	if ws == nil || !pos.IsValid() {
		return ""
	}
	_, abs, err := ws.Resolve("", "//"+pos.Filename())
	if err != nil {
		return ""
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return ""
	}
	lines := strings.Split(string(data), "\n")
	if int(pos.Line) < 1 || int(pos.Line) > len(lines) {
		return ""
	}
	line := strings.TrimRight(lines[pos.Line-1], "\r")
	num := fmt.Sprintf("%5d | ", pos.Line)
	caret := ""
	if pos.Col > 0 && int(pos.Col) <= len(line)+1 {
		// Tabs keep their width so the caret lines up.
		var pad strings.Builder
		for _, r := range line[:pos.Col-1] {
			if r == '\t' {
				pad.WriteRune('\t')
			} else {
				pad.WriteRune(' ')
			}
		}
		caret = "\n" + strings.Repeat(" ", 6) + "| " + pad.String() + "^"
	}
	return num + line + caret
}
