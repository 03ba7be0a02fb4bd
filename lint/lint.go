// Package lint checks imgflow's Starlark files without running them:
// buildifier's warnings (github.com/bazelbuild/buildtools/warn, on the
// default file type) plus imgflow's own checks against the builtin
// registry — unknown builtins and keyword arguments, missing required
// arguments, loads of symbols a module does not define, workflows without
// outputs — and the interpreter's own name resolution.
//
// A finding of any category can be silenced on its line with buildifier's
// comment: `# buildifier: disable=unknown-keyword`.
package lint

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/bazelbuild/buildtools/build"
	"github.com/bazelbuild/buildtools/warn"
	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/internal/suggest"
	"github.com/imgflow/imgflow/interp"
	"github.com/imgflow/imgflow/release"
)

// Finding is one problem in a file.
type Finding struct {
	// File is workspace-relative, with slashes.
	File     string
	Line     int
	Col      int
	Category string
	Message  string
}

// String is the finding as imgflow lint prints it:
// file:line:col: category: message.
func (f Finding) String() string {
	return fmt.Sprintf("%s:%d:%d: %s: %s", f.File, f.Line, f.Col, f.Category, f.Message)
}

// imgflow's own categories.
const (
	// Syntax and Resolve are errors the interpreter would refuse the file
	// with; they cannot be disabled.
	Syntax  = "syntax"
	Resolve = "resolve"

	UnknownBuiltin  = "unknown-builtin"
	UndefinedName   = "undefined-name"
	UnknownKeyword  = "unknown-keyword"
	MissingArgument = "missing-argument"
	Positional      = "positional-argument"
	LoadMissing     = "load-missing"
	NoOutputs       = "no-outputs"
)

// ImgflowWarnings are imgflow's own checks, all on by default.
var ImgflowWarnings = []string{UnknownBuiltin, UndefinedName, UnknownKeyword, MissingArgument, Positional, LoadMissing, NoOutputs, KeywordOnly}

// BuildifierWarnings are the buildifier warnings on by default: those that
// apply to plain Starlark (not Bazel's rules, attributes and labels) and
// point at bugs rather than taste. Others can be enabled with
// --warnings=+name (any of warn.AllWarnings).
var BuildifierWarnings = []string{
	"confusing-name",
	"dict-concatenation",
	"dict-method-named-arg",
	"list-append",
	"load",
	"name-conventions",
	"no-effect",
	"redefined-variable",
	"return-value",
	"skylark-comment",
	"skylark-docstring",
	"string-iteration",
	"uninitialized",
	"unreachable",
	"unused-variable",
}

// DefaultWarnings are the categories imgflow lint reports without
// --warnings.
func DefaultWarnings() []string {
	return append(append([]string(nil), ImgflowWarnings...), BuildifierWarnings...)
}

func isImgflowWarning(name string) bool {
	return slices.Contains(ImgflowWarnings, name) || slices.Contains(OptionalWarnings, name)
}

func isBuildifierWarning(name string) bool {
	for _, w := range warn.AllWarnings {
		if w == name {
			return true
		}
	}
	return false
}

// ParseWarnings reads a --warnings value the way buildifier does:
// "+a,-b" adds to and removes from the defaults, "a,b" replaces them,
// "default" is the defaults.
func ParseWarnings(spec string) ([]string, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" || spec == "default" {
		return DefaultWarnings(), nil
	}
	parts := strings.Split(spec, ",")
	relative := strings.HasPrefix(parts[0], "+") || strings.HasPrefix(parts[0], "-")
	set := map[string]bool{}
	if relative {
		for _, w := range DefaultWarnings() {
			set[w] = true
		}
	}
	for _, p := range parts {
		p = strings.TrimSpace(p)
		name := strings.TrimLeft(p, "+-")
		if !isImgflowWarning(name) && !isBuildifierWarning(name) {
			return nil, fmt.Errorf("unknown warning %q: use one of imgflow's (%s) or buildifier's", name, strings.Join(ImgflowWarnings, ", "))
		}
		switch {
		case strings.HasPrefix(p, "-"):
			if !relative {
				return nil, fmt.Errorf("warnings %q: mix of a list and -name; use either a,b or +a,-b", spec)
			}
			delete(set, name)
		case strings.HasPrefix(p, "+") || !relative:
			if !relative && strings.HasPrefix(p, "+") {
				return nil, fmt.Errorf("warnings %q: mix of a list and +name; use either a,b or +a,-b", spec)
			}
			set[name] = true
		}
	}
	out := make([]string, 0, len(set))
	for w := range set {
		out = append(out, w)
	}
	sort.Strings(out)
	return out, nil
}

// TestGlobals are the names the test runner (imgflow test) adds to
// *_test.star files besides the workflow environment.
var TestGlobals = []string{"assert", "run"}

// Linter lints the Starlark files of one workspace.
type Linter struct {
	Workspace *builtins.Workspace
	Registry  *builtins.Registry
	// Warnings are the enabled categories (DefaultWarnings when nil).
	Warnings []string

	predeclared starlark.StringDict
	modules     map[string]*module
}

// module is what a load() needs to know of a loaded file.
type module struct {
	globals map[string]bool
	err     error
}

// New makes a linter with the default warnings.
func New(ws *builtins.Workspace, reg *builtins.Registry) *Linter {
	return &Linter{Workspace: ws, Registry: reg, predeclared: interp.Predeclared(reg), modules: map[string]*module{}}
}

func (l *Linter) enabled(category string) bool {
	if category == Syntax || category == Resolve {
		return true
	}
	ws := l.Warnings
	if ws == nil {
		ws = DefaultWarnings()
	}
	for _, w := range ws {
		if w == category {
			return true
		}
	}
	return false
}

// ReleaseGlobals are the names a release file (release.Load) has besides
// Starlark's own: job() and nothing of the workflow environment.
var ReleaseGlobals = []string{"job", "var", "read_text", "approval", "checkout"}

func (l *Linter) isPredeclared(rel string, isRelease bool) func(string) bool {
	test := strings.HasSuffix(rel, "_test.star")
	return func(name string) bool {
		if isRelease {
			return slices.Contains(ReleaseGlobals, name)
		}
		if _, ok := l.predeclared[name]; ok {
			return true
		}
		if test {
			for _, t := range TestGlobals {
				if t == name {
					return true
				}
			}
		}
		return false
	}
}

// File lints one workspace-relative file.
func (l *Linter) File(rel string) []Finding {
	findings, _ := l.file(rel)
	return findings
}

func (l *Linter) file(rel string) ([]Finding, []loadRef) {
	_, abs, err := l.Workspace.Resolve("", "//"+rel)
	if err != nil {
		return []Finding{{File: rel, Line: 1, Col: 1, Category: Syntax, Message: err.Error()}}, nil
	}
	src, err := os.ReadFile(abs)
	if err != nil {
		return []Finding{{File: rel, Line: 1, Col: 1, Category: Syntax, Message: err.Error()}}, nil
	}
	return l.source(rel, src)
}

// Source lints the content of a file named rel (workspace-relative).
func (l *Linter) Source(rel string, src []byte) []Finding {
	findings, _ := l.source(rel, src)
	return findings
}

// loadRef is one load() of a file, for Check.
type loadRef struct {
	module string // as written
	rel    string // resolved, "" when it does not resolve
	pos    syntax.Position
}

func (l *Linter) source(rel string, src []byte) ([]Finding, []loadRef) {
	c := &checker{l: l, rel: rel, release: release.IsRelease(rel, src)}
	f, err := interp.FileOptions().Parse(rel, src, syntax.RetainComments)
	if err != nil {
		if se, ok := err.(syntax.Error); ok {
			c.add(se.Pos, Syntax, "%s", se.Msg)
		} else {
			c.findings = append(c.findings, Finding{File: rel, Line: 1, Col: 1, Category: Syntax, Message: err.Error()})
		}
		return c.result(), nil
	}
	bf, err := build.ParseDefault(rel, src)
	if err != nil {
		pos := syntax.MakePosition(&rel, 1, 1)
		msg := err.Error()
		if pe, ok := err.(build.ParseError); ok {
			pos = syntax.MakePosition(&rel, int32(pe.Pos.Line), int32(pe.Pos.LineRune))
			msg = pe.Message
		}
		c.add(pos, Syntax, "buildifier cannot parse the file: %s", msg)
	}
	c.bf = bf

	calls := map[syntax.Position]bool{} // positions of called identifiers
	syntax.Walk(f, func(n syntax.Node) bool {
		if call, ok := n.(*syntax.CallExpr); ok {
			if id, ok := call.Fn.(*syntax.Ident); ok {
				calls[id.NamePos] = true
			}
		}
		return true
	})
	if err := resolve.File(f, l.isPredeclared(rel, c.release), starlark.Universe.Has); err != nil {
		if list, ok := err.(resolve.ErrorList); ok {
			for _, e := range list {
				c.resolveError(e, calls)
			}
		} else {
			c.findings = append(c.findings, Finding{File: rel, Line: 1, Col: 1, Category: Resolve, Message: err.Error()})
		}
	} else {
		// What run refuses the file for (interp.ShadowedBuiltins).
		for _, e := range interp.ShadowedBuiltins(f, l.isPredeclared(rel, c.release)) {
			c.add(e.Pos, Resolve, "%s", e.Msg)
		}
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		if call, ok := n.(*syntax.CallExpr); ok {
			c.builtinCall(call)
		}
		return true
	})
	var loads []loadRef
	for _, stmt := range f.Stmts {
		if ld, ok := stmt.(*syntax.LoadStmt); ok {
			loads = append(loads, c.load(ld))
		}
	}
	c.outputs(f)
	c.defs(f)
	if bf != nil {
		var enabled []string
		for _, w := range l.Warnings {
			if isBuildifierWarning(w) {
				enabled = append(enabled, w)
			}
		}
		if l.Warnings == nil {
			enabled = BuildifierWarnings
		}
		for _, w := range warn.FileWarnings(bf, enabled, nil, warn.ModeWarn, nil) {
			c.findings = append(c.findings, Finding{File: rel, Line: w.Start.Line, Col: w.Start.LineRune, Category: w.Category, Message: firstLine(w.Message)})
		}
	}
	return c.result(), loads
}

// checker holds the findings of one file.
type checker struct {
	l        *Linter
	rel      string
	bf       *build.File
	findings []Finding
	// release: the file is a release file (release.IsRelease), which
	// calls job() and no builtin.
	release bool
}

func (c *checker) add(pos syntax.Position, category, format string, args ...any) {
	if !c.l.enabled(category) {
		return
	}
	line, col := int(pos.Line), int(pos.Col)
	if line < 1 {
		line, col = 1, 1
	}
	if category != Syntax && category != Resolve && c.bf != nil && warn.DisabledWarning(c.bf, line, category) {
		return
	}
	c.findings = append(c.findings, Finding{File: c.rel, Line: line, Col: col, Category: category, Message: fmt.Sprintf(format, args...)})
}

func (c *checker) result() []Finding {
	sort.SliceStable(c.findings, func(i, j int) bool {
		a, b := c.findings[i], c.findings[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Col != b.Col {
			return a.Col < b.Col
		}
		return a.Category < b.Category
	})
	return c.findings
}

// resolveError words an error of the interpreter's resolver: an undefined
// name that is called is an unknown builtin.
func (c *checker) resolveError(e resolve.Error, calls map[syntax.Position]bool) {
	name, ok := strings.CutPrefix(e.Msg, "undefined: ")
	if !ok {
		c.add(e.Pos, Resolve, "%s", e.Msg)
		return
	}
	hint := ""
	if i := strings.Index(name, " ("); i >= 0 {
		name, hint = name[:i], name[i:]
	}
	if calls[e.Pos] && c.release {
		c.add(e.Pos, UnknownBuiltin, "%s() cannot be called in a release file: a release lists workflows with job(\"workflows/NAME.star\", var = value, …); put builds in a workflow", name)
		return
	}
	if calls[e.Pos] {
		if hint == "" {
			var names []string
			for _, s := range c.l.Registry.Specs("") {
				names = append(names, s.Name)
			}
			hint = didYouMean(name, names)
		}
		c.add(e.Pos, UnknownBuiltin, "%s() is not an imgflow builtin, a Starlark builtin, a load()ed symbol or defined in this file%s", name, hint)
		return
	}
	c.add(e.Pos, UndefinedName, "%s is not defined%s", name, hint)
}

// builtinCall checks a call of an imgflow builtin against its spec.
func (c *checker) builtinCall(call *syntax.CallExpr) {
	id, ok := call.Fn.(*syntax.Ident)
	if !ok {
		return
	}
	if b, ok := id.Binding.(*resolve.Binding); !ok || b.Scope != resolve.Predeclared {
		return
	}
	spec, ok := c.l.Registry.Lookup(id.Name)
	if !ok {
		return
	}
	params := map[string]int{}
	names := make([]string, len(spec.Params))
	for i, p := range spec.Params {
		params[p.Name] = i
		names[i] = p.Name
	}
	passed := make([]bool, len(spec.Params))
	positional, varargs := 0, false
	for _, arg := range call.Args {
		switch a := arg.(type) {
		case *syntax.BinaryExpr:
			if a.Op != syntax.EQ {
				positional++
				continue
			}
			kw, ok := a.X.(*syntax.Ident)
			if !ok {
				continue
			}
			i, known := params[kw.Name]
			if !known {
				c.add(kw.NamePos, UnknownKeyword, "%s() has no parameter %q%s; its parameters are %s",
					spec.Name, kw.Name, didYouMean(kw.Name, names), strings.Join(names, ", "))
				continue
			}
			passed[i] = true
		case *syntax.UnaryExpr:
			if a.Op == syntax.STAR || a.Op == syntax.STARSTAR {
				varargs = true
				continue
			}
			positional++
		default:
			positional++
		}
	}
	if positional > spec.Positional && !varargs {
		switch {
		case len(names) == 0:
			c.add(call.Lparen, Positional, "%s() takes no arguments", spec.Name)
		case spec.Positional == 0:
			c.add(call.Lparen, Positional, "%s() takes keyword arguments only, e.g. %s(%s = …)", spec.Name, spec.Name, names[0])
		default:
			c.add(call.Lparen, Positional, "%s() takes at most %d positional argument(s) (%s); pass the others by keyword",
				spec.Name, spec.Positional, strings.Join(names[:min(spec.Positional, len(names))], ", "))
		}
	}
	for i := 0; i < positional && i < len(passed); i++ {
		passed[i] = true
	}
	if varargs {
		return
	}
	var missing []string
	for i, p := range spec.Params {
		if p.Required() && !passed[i] {
			missing = append(missing, p.Name)
		}
	}
	switch len(missing) {
	case 0:
	case 1:
		c.add(call.Lparen, MissingArgument, "%s() is missing its required argument %s", spec.Name, missing[0])
	default:
		c.add(call.Lparen, MissingArgument, "%s() is missing its required arguments %s", spec.Name, strings.Join(missing, ", "))
	}
}

// load checks that a loaded module exists and defines each loaded symbol.
func (c *checker) load(ld *syntax.LoadStmt) loadRef {
	name := ld.ModuleName()
	ref := loadRef{module: name, pos: ld.Module.TokenPos}
	rel, abs, err := c.l.Workspace.Resolve(c.rel, name)
	if err != nil {
		c.add(ld.Module.TokenPos, LoadMissing, "cannot load %s: %v", name, err)
		return ref
	}
	if !strings.HasSuffix(rel, ".star") {
		c.add(ld.Module.TokenPos, LoadMissing, "cannot load %s: load() takes .star files", name)
		return ref
	}
	m := c.l.module(rel, abs)
	if m.err != nil {
		c.add(ld.Module.TokenPos, LoadMissing, "cannot load %s: %v", name, m.err)
		return ref
	}
	ref.rel = rel
	defined := make([]string, 0, len(m.globals))
	for g := range m.globals {
		defined = append(defined, g)
	}
	sort.Strings(defined)
	for _, from := range ld.From {
		if !m.globals[from.Name] {
			c.add(from.NamePos, LoadMissing, "%s does not define %s%s", rel, from.Name, didYouMean(from.Name, defined))
		}
	}
	return ref
}

// module parses and resolves a loaded file to learn its globals (cached).
func (l *Linter) module(rel, abs string) *module {
	if m, ok := l.modules[rel]; ok {
		return m
	}
	m := &module{globals: map[string]bool{}}
	l.modules[rel] = m
	src, err := os.ReadFile(abs)
	if err != nil {
		if os.IsNotExist(err) {
			err = fmt.Errorf("%s does not exist", rel)
		}
		m.err = err
		return m
	}
	f, err := interp.FileOptions().Parse(rel, src, 0)
	if err != nil {
		m.err = err
		return m
	}
	// Errors of the module itself are reported when it is linted; its
	// globals are known either way.
	_ = resolve.File(f, l.isPredeclared(rel, false), starlark.Universe.Has)
	if mod, ok := f.Module.(*resolve.Module); ok {
		for _, b := range mod.Globals {
			if b.First != nil {
				m.globals[b.First.Name] = true
			}
		}
	}
	return m
}

// IsWorkflow reports whether a workspace-relative file is a workflow: a
// .star file under workflows/ that is not a test.
func IsWorkflow(rel string) bool {
	return strings.HasSuffix(rel, ".star") && !strings.HasSuffix(rel, "_test.star") &&
		(strings.HasPrefix(rel, "workflows/") || strings.Contains(rel, "/workflows/"))
}

// outputs checks that a workflow calls output().
func (c *checker) outputs(f *syntax.File) {
	if !IsWorkflow(c.rel) {
		return
	}
	found := false
	syntax.Walk(f, func(n syntax.Node) bool {
		if call, ok := n.(*syntax.CallExpr); ok {
			if id, ok := call.Fn.(*syntax.Ident); ok && id.Name == "output" {
				found = true
			}
		}
		return !found
	})
	if !found {
		c.add(syntax.MakePosition(&c.rel, 1, 1), NoOutputs,
			"workflow has no output() call: a pipeline cannot use what it built; add output(\"name\", value) for its results")
	}
}

// Check lints rel and every module it loads, transitively, and reports
// load cycles: what `imgflow check` does before anything runs.
func (l *Linter) Check(rel string) []Finding {
	var findings []Finding
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(rel string, chain []string)
	visit = func(rel string, chain []string) {
		state[rel] = 1
		fs, loads := l.file(rel)
		findings = append(findings, fs...)
		chain = append(chain, rel)
		for _, ld := range loads {
			if ld.rel == "" {
				continue
			}
			switch state[ld.rel] {
			case 1:
				i := indexOf(chain, ld.rel)
				cycle := append(append([]string(nil), chain[i:]...), ld.rel)
				findings = append(findings, Finding{File: rel, Line: int(ld.pos.Line), Col: int(ld.pos.Col), Category: Resolve,
					Message: "cycle in load graph: " + strings.Join(cycle, " → ")})
			case 0:
				visit(ld.rel, chain)
			}
		}
		state[rel] = 2
	}
	visit(rel, nil)
	return findings
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return 0
}

// didYouMean suggests the closest candidate, if it is close (the same
// rule as the CLI's hints: internal/suggest).
func didYouMean(name string, candidates []string) string {
	best, ok := suggest.Closest(name, candidates)
	if !ok {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", best)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
