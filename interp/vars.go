package interp

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/internal/suggest"
)

// CheckVars refuses a --var that no param() of the workflow file or of
// the modules it loads declares, reading their source without running
// anything, so a typo stops the command before it prints or validates
// anything. When a param's name is computed, or a module does not
// resolve, read or parse, it says nothing: the run reports those, and
// checks the vars once it ran (checkVars).
func CheckVars(cfg Config, file string) error {
	if len(cfg.Vars) == 0 {
		return nil
	}
	var names []string
	var described strings.Builder
	described.WriteString("declared params:")
	seen := map[string]bool{}
	queue := []struct{ from, name string }{{"", file}}
	for len(queue) > 0 {
		next := queue[0]
		queue = queue[1:]
		rel, abs, err := cfg.Workspace.Resolve(next.from, next.name)
		if err != nil {
			return nil
		}
		if seen[rel] {
			continue
		}
		seen[rel] = true
		src, err := os.ReadFile(abs)
		if err != nil {
			return nil
		}
		f, err := FileOptions().Parse(rel, src, 0)
		if err != nil {
			return nil
		}
		sp := paramNames(f)
		if !sp.complete {
			return nil
		}
		names = append(names, sp.names...)
		described.WriteString(sp.described)
		for _, stmt := range f.Stmts {
			if load, ok := stmt.(*syntax.LoadStmt); ok {
				queue = append(queue, struct{ from, name string }{rel, load.ModuleName()})
			}
		}
	}
	return unknownVars(cfg.Vars, names, described.String())
}

// checkVars refuses --vars that no param() declared, once the workflow ran.
func checkVars(run *builtins.Run, vars map[string]starlark.Value) error {
	var declared []string
	for _, p := range run.Params() {
		declared = append(declared, p.Name)
	}
	return unknownVars(vars, declared, builtins.DescribeParams(run.Params()))
}

// unknownVars is the error for the vars not in declared, naming the
// closest declared param of each, followed by described.
func unknownVars(vars map[string]starlark.Value, declared []string, described string) error {
	known := map[string]bool{}
	for _, name := range declared {
		known[name] = true
	}
	var unknown []string
	for name := range vars {
		if !known[name] {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	var hints []string
	for _, name := range unknown {
		if c, ok := suggest.Closest(name, declared); ok {
			hints = append(hints, fmt.Sprintf("--var %s: did you mean %s?", name, c))
		}
	}
	msg := fmt.Sprintf("unknown --var %s: the workflow declares no such param", strings.Join(unknown, ", "))
	if len(hints) > 0 {
		msg += " (" + strings.Join(hints, "; ") + ")"
	}
	return fmt.Errorf("%s\n%s", msg, described)
}

// staticParams are a workflow's param() calls as written.
type staticParams struct {
	// names are the literal names, in order: an error about a missing
	// param lists every param, even those declared after the failing line.
	names []string
	// described lists them as builtins.DescribeParams does (a line
	// each), with the defaults written as literals (others are said to
	// exist).
	described string
	// complete: every param() call names its param with a literal, so
	// names is every param the workflow can declare.
	complete bool
}

// paramNames finds the param("name", …) calls of a parsed workflow.
func paramNames(f *syntax.File) staticParams {
	sp := staticParams{complete: true}
	var b strings.Builder
	syntax.Walk(f, func(n syntax.Node) bool {
		call, ok := n.(*syntax.CallExpr)
		if !ok {
			return true
		}
		if id, ok := call.Fn.(*syntax.Ident); !ok || id.Name != "param" {
			return true
		}
		var name string
		if len(call.Args) > 0 {
			if lit, ok := call.Args[0].(*syntax.Literal); ok && lit.Token == syntax.STRING {
				name = lit.Value.(string)
			}
		}
		if name == "" {
			sp.complete = false // a name computed at run time
			return true
		}
		sp.names = append(sp.names, name)
		fmt.Fprintf(&b, "\n  %s", name)
		def, hasDef := keywordArg(call, "default")
		switch {
		case !hasDef:
			b.WriteString(" (required)")
		case literalText(def) != "":
			fmt.Fprintf(&b, " (default %s)", literalText(def))
		default:
			b.WriteString(" (has a default)")
		}
		if doc, ok := keywordArg(call, "doc"); ok {
			if lit, ok := doc.(*syntax.Literal); ok && lit.Token == syntax.STRING {
				b.WriteString(": " + lit.Value.(string))
			}
		}
		return true
	})
	sp.described = b.String()
	return sp
}

// keywordArg is the value of call's keyword argument name.
func keywordArg(call *syntax.CallExpr, name string) (syntax.Expr, bool) {
	for _, a := range call.Args {
		if bin, ok := a.(*syntax.BinaryExpr); ok && bin.Op == syntax.EQ {
			if id, ok := bin.X.(*syntax.Ident); ok && id.Name == name {
				return bin.Y, true
			}
		}
	}
	return nil, false
}

// literalText is a literal value as Starlark prints it, "" for any other
// expression.
func literalText(e syntax.Expr) string {
	switch e := e.(type) {
	case *syntax.Literal:
		if e.Token == syntax.STRING {
			return strconv.Quote(e.Value.(string))
		}
		return e.Raw
	case *syntax.Ident:
		if e.Name == "True" || e.Name == "False" || e.Name == "None" {
			return e.Name
		}
	case *syntax.ListExpr:
		items := make([]string, len(e.List))
		for i, x := range e.List {
			if items[i] = literalText(x); items[i] == "" {
				return ""
			}
		}
		return "[" + strings.Join(items, ", ") + "]"
	}
	return ""
}
