// Package libdoc generates the reference of the shared Starlark modules
// (lib/*.star) from their docstrings, the way `imgflow doc` generates the
// builtin reference from the registry: each module's docstring, then the
// signature and docstring of every function it exports.
//
// A module exports what a workflow can load: the fields of its struct named
// after the file (lib/aks.star's `aks = struct(…)`), or, without one, its
// public top-level functions (lib/temporary.star's temporary()). A struct
// field may be a function the module loads (lib/aks.star re-exports those
// of lib/aks/*.star): it is documented from the loaded module's def.
package libdoc

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"go.starlark.net/syntax"

	"github.com/imgflow/imgflow/interp"
)

// Markers delimit the generated library reference inside WORKFLOWS.md.
const (
	Begin = "<!-- BEGIN GENERATED LIBRARY: imgflow doc -->"
	End   = "<!-- END GENERATED LIBRARY -->"
)

// Module is one documented library module.
type Module struct {
	// Path is the module's workspace path, "lib/aks.star".
	Path string
	// Name is what a workflow loads: "aks".
	Name string
	Doc  string
	// Funcs are the exported functions, in the order the module exports
	// them; Constants the other exported names.
	Funcs     []Func
	Constants []string
}

// Func is an exported function: its call shape and docstring.
type Func struct {
	Signature string
	Doc       string
}

// Reader reads a module by the name load() gives it ("//lib/aks/naming.star").
type Reader func(module string) ([]byte, error)

// ReadDir parses every *.star file of dir (not *_test.star, not in
// subdirectories), named rel/<file> (rel is dir as the workspace names it,
// "lib"); the modules they load are read from the workspace dir is in.
func ReadDir(dir, rel string) ([]Module, error) {
	root := dir
	for range strings.Split(path.Clean(rel), "/") {
		root = filepath.Dir(root)
	}
	read := func(module string) ([]byte, error) {
		return os.ReadFile(filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(module, "//"))))
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.star"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var mods []Module
	for _, f := range files {
		if strings.HasSuffix(f, "_test.star") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		m, err := ParseWith(path.Join(rel, filepath.Base(f)), src, read)
		if err != nil {
			return nil, err
		}
		mods = append(mods, m)
	}
	return mods, nil
}

// Parse documents one module from its source.
func Parse(name string, src []byte) (Module, error) {
	return ParseWith(name, src, nil)
}

// ParseWith is Parse with read for the workspace modules ("//…") the
// module loads; with a nil read, loaded names are constants.
func ParseWith(name string, src []byte, read Reader) (Module, error) {
	f, err := interp.FileOptions().Parse(name, src, syntax.RetainComments)
	if err != nil {
		return Module{}, err
	}
	type origin struct{ module, name string }
	loaded := map[string]origin{}
	m := Module{Path: name, Name: strings.TrimSuffix(path.Base(name), ".star"), Doc: docstring(f.Stmts)}
	defs := map[string]*syntax.DefStmt{}
	var public []string
	var exports *syntax.CallExpr
	for _, st := range f.Stmts {
		switch st := st.(type) {
		case *syntax.LoadStmt:
			for i, to := range st.To {
				loaded[to.Name] = origin{st.ModuleName(), st.From[i].Name}
			}
		case *syntax.DefStmt:
			defs[st.Name.Name] = st
			if !strings.HasPrefix(st.Name.Name, "_") {
				public = append(public, st.Name.Name)
			}
		case *syntax.AssignStmt:
			if id, ok := st.LHS.(*syntax.Ident); ok && id.Name == m.Name {
				if call, ok := st.RHS.(*syntax.CallExpr); ok && isIdent(call.Fn, "struct") {
					exports = call
				}
			}
		}
	}
	if exports == nil {
		for _, name := range public {
			m.Funcs = append(m.Funcs, function(name, defs[name], src))
		}
		return m, nil
	}
	mods := map[string]*parsed{}
	for _, arg := range exports.Args {
		kw, ok := arg.(*syntax.BinaryExpr)
		if !ok || kw.Op != syntax.EQ {
			continue
		}
		field := kw.X.(*syntax.Ident).Name
		id, _ := kw.Y.(*syntax.Ident)
		switch {
		case id != nil && defs[id.Name] != nil:
			m.Funcs = append(m.Funcs, function(m.Name+"."+field, defs[id.Name], src))
		case id != nil && read != nil && strings.HasPrefix(loaded[id.Name].module, "//"):
			from := loaded[id.Name]
			p := mods[from.module]
			if p == nil {
				if p, err = parseDefs(from.module, read); err != nil {
					return Module{}, fmt.Errorf("%s: %w", name, err)
				}
				mods[from.module] = p
			}
			if def := p.defs[from.name]; def != nil {
				m.Funcs = append(m.Funcs, function(m.Name+"."+field, def, p.src))
				continue
			}
			m.Constants = append(m.Constants, field)
		default:
			m.Constants = append(m.Constants, field)
		}
	}
	return m, nil
}

// parsed is a loaded module's source and top-level defs.
type parsed struct {
	src  []byte
	defs map[string]*syntax.DefStmt
}

func parseDefs(module string, read Reader) (*parsed, error) {
	src, err := read(module)
	if err != nil {
		return nil, err
	}
	f, err := interp.FileOptions().Parse(strings.TrimPrefix(module, "//"), src, syntax.RetainComments)
	if err != nil {
		return nil, err
	}
	p := &parsed{src: src, defs: map[string]*syntax.DefStmt{}}
	for _, st := range f.Stmts {
		if def, ok := st.(*syntax.DefStmt); ok {
			p.defs[def.Name.Name] = def
		}
	}
	return p, nil
}

func isIdent(e syntax.Expr, name string) bool {
	id, ok := e.(*syntax.Ident)
	return ok && id.Name == name
}

// function is the exported name's signature, its parameters as the source
// spells them (whitespace collapsed), and the def's docstring.
func function(name string, def *syntax.DefStmt, src []byte) Func {
	params := ""
	if n := len(def.Params); n > 0 {
		start, _ := def.Params[0].Span()
		_, end := def.Params[n-1].Span()
		params = strings.Join(strings.Fields(between(src, start, end)), " ")
	}
	return Func{Signature: name + "(" + params + ")", Doc: docstring(def.Body)}
}

// between is the source text from start to end (1-based lines, 1-based
// rune columns, as syntax positions count).
func between(src []byte, start, end syntax.Position) string {
	lines := strings.Split(string(src), "\n")
	var b strings.Builder
	for l := start.Line; l <= end.Line && int(l) <= len(lines); l++ {
		line := []rune(lines[l-1])
		from, to := 0, len(line)
		if l == start.Line {
			from = min(int(start.Col)-1, len(line))
		}
		if l == end.Line {
			to = min(int(end.Col)-1, len(line))
		}
		b.WriteString(string(line[from:to]) + "\n")
	}
	return b.String()
}

// docstring is the string literal a module or function body starts with,
// dedented as Python's inspect.cleandoc does.
func docstring(stmts []syntax.Stmt) string {
	if len(stmts) == 0 {
		return ""
	}
	e, ok := stmts[0].(*syntax.ExprStmt)
	if !ok {
		return ""
	}
	lit, ok := e.X.(*syntax.Literal)
	if !ok || lit.Token != syntax.STRING {
		return ""
	}
	return cleandoc(lit.Value.(string))
}

func cleandoc(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	indent := -1
	for _, l := range lines[1:] {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if n := len(l) - len(strings.TrimLeft(l, " ")); indent < 0 || n < indent {
			indent = n
		}
	}
	for i := 1; i < len(lines); i++ {
		if len(lines[i]) >= indent && indent > 0 {
			lines[i] = lines[i][indent:]
		}
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	return strings.Join(lines, "\n")
}

// Reference renders the modules as Markdown: a section per module with
// its load() line and docstring, then each exported function.
func Reference(mods []Module) string {
	var b strings.Builder
	for _, m := range mods {
		fmt.Fprintf(&b, "### `%s`\n\n```python\nload(\"//%s\", \"%s\")\n```\n\n", m.Path, m.Path, m.Name)
		if m.Doc != "" {
			b.WriteString(m.Doc + "\n\n")
		}
		if len(m.Constants) > 0 {
			fmt.Fprintf(&b, "Constants: `%s.%s`.\n\n", m.Name, strings.Join(m.Constants, "`, `"+m.Name+"."))
		}
		for _, f := range m.Funcs {
			fmt.Fprintf(&b, "#### `%s`\n\n", f.Signature)
			if f.Doc != "" {
				b.WriteString(markdown(f.Doc) + "\n\n")
			}
		}
	}
	return b.String()
}

// markdown renders a docstring's Args: and Returns: sections (lucicfg's
// layout: a section header, then entries indented under it) as Markdown:
// a list of the arguments, each `name` first, and a Returns paragraph.
// The rest is Markdown already.
func markdown(doc string) string {
	var out []string
	section := ""
	for _, line := range strings.Split(doc, "\n") {
		switch {
		case line == "Args:" || line == "Returns:":
			section = strings.TrimSuffix(line, ":")
			out = append(out, "**"+line+"**", "")
			continue
		case line == "" || !strings.HasPrefix(line, " "):
			section = ""
		}
		text := strings.TrimSpace(line)
		switch {
		case section == "Args" && len(line)-len(strings.TrimLeft(line, " ")) <= 2:
			name, desc, _ := strings.Cut(text, ":")
			out = append(out, "- `"+name+"`:"+desc)
		case section != "":
			out = append(out, "  "+text)
		default:
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// Splice replaces the generated library section of doc with ref.
func Splice(doc, ref string) (string, error) {
	begin := strings.Index(doc, Begin)
	end := strings.Index(doc, End)
	if begin < 0 || end < begin {
		return "", fmt.Errorf("markers %q and %q not found", Begin, End)
	}
	return doc[:begin+len(Begin)] + "\n\n" + ref + doc[end:], nil
}
