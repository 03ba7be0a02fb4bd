package lint

import (
	"regexp"
	"strings"

	"go.starlark.net/syntax"
)

// Checks of the functions a module exports (its public top-level defs),
// as lucicfg has its own: more than three parameters are keyword-only,
// and a docstring documents each parameter and the result.
const (
	KeywordOnly   = "keyword-only"
	DocstringArgs = "docstring-args"
)

// OptionalWarnings are imgflow's checks off by default (--warnings=+name).
// docstring-args holds for lib/aks (cmd/imgflow's
// TestAKSLibraryDocumentsEveryArgument); the other modules' docstrings
// are not yet written that way.
var OptionalWarnings = []string{DocstringArgs}

// maxPositional is how many parameters a public function may take before
// they must all be keyword-only.
const maxPositional = 3

// defs checks the file's public top-level functions; a test file's are
// helpers of its tests, no module's API.
func (c *checker) defs(f *syntax.File) {
	if strings.HasSuffix(c.rel, "_test.star") {
		return
	}
	for _, st := range f.Stmts {
		def, ok := st.(*syntax.DefStmt)
		if !ok || strings.HasPrefix(def.Name.Name, "_") {
			continue
		}
		c.keywordOnly(def)
		c.docstringArgs(def)
	}
}

// params are a def's parameter names ("*args", "**kwargs" with their
// stars) and how many of them can be passed positionally.
func params(def *syntax.DefStmt) (names []string, positional int) {
	star := false
	for _, p := range def.Params {
		switch p := p.(type) {
		case *syntax.Ident:
			names = append(names, p.Name)
			if !star {
				positional++
			}
		case *syntax.BinaryExpr: // name = default
			names = append(names, p.X.(*syntax.Ident).Name)
			if !star {
				positional++
			}
		case *syntax.UnaryExpr:
			star = true
			if id, ok := p.X.(*syntax.Ident); ok {
				prefix := "*"
				if p.Op == syntax.STARSTAR {
					prefix = "**"
				}
				names = append(names, prefix+id.Name)
			}
		}
	}
	return names, positional
}

func (c *checker) keywordOnly(def *syntax.DefStmt) {
	names, positional := params(def)
	named := 0
	for _, n := range names {
		if !strings.HasPrefix(n, "*") {
			named++
		}
	}
	if named <= maxPositional || positional == 0 {
		return
	}
	c.add(def.Def, KeywordOnly, "%s() takes %d parameters, %d of them positionally: make them keyword-only, def %s(*, %s), and name them at every call",
		def.Name.Name, named, positional, def.Name.Name, strings.Join(names[:min(len(names), 3)], ", ")+", …")
}

var docArg = regexp.MustCompile(`^(\*{0,2}\w+)( \([^)]*\))?:`)

// docstringArgs wants an Args: section naming every parameter, no other
// name, and a Returns: section when the function returns a value.
func (c *checker) docstringArgs(def *syntax.DefStmt) {
	name := def.Name.Name
	doc, pos, ok := docstringOf(def)
	if !ok {
		c.add(def.Def, DocstringArgs, "%s() has no docstring: start its body with \"\"\"summary, Args:, Returns:\"\"\"", name)
		return
	}
	args, hasArgs, hasReturns := parseDoc(doc)
	names, _ := params(def)
	var missing []string
	for _, n := range names {
		if !args[n] {
			missing = append(missing, n)
		}
		delete(args, n)
	}
	switch {
	case len(names) > 0 && !hasArgs:
		c.add(pos, DocstringArgs, "%s()'s docstring has no Args: section: document %s, one indented \"name: what it is\" line each", name, strings.Join(names, ", "))
	case len(missing) > 0:
		c.add(pos, DocstringArgs, "%s()'s docstring does not document %s under Args:", name, strings.Join(missing, ", "))
	}
	for n := range args {
		c.add(pos, DocstringArgs, "%s()'s docstring documents %s, which is not a parameter", name, n)
	}
	if !hasReturns && returnsValue(def) {
		c.add(pos, DocstringArgs, "%s() returns a value its docstring does not describe: add a Returns: section", name)
	}
}

func docstringOf(def *syntax.DefStmt) (string, syntax.Position, bool) {
	if len(def.Body) == 0 {
		return "", def.Def, false
	}
	e, ok := def.Body[0].(*syntax.ExprStmt)
	if !ok {
		return "", def.Def, false
	}
	lit, ok := e.X.(*syntax.Literal)
	if !ok || lit.Token != syntax.STRING {
		return "", def.Def, false
	}
	return lit.Value.(string), lit.TokenPos, true
}

// parseDoc reads a docstring's sections: a line "Args:" or "Returns:" at
// the docstring's own indentation, then lines indented under it; an
// argument is the first word of a line at the entries' indentation.
func parseDoc(doc string) (args map[string]bool, hasArgs, hasReturns bool) {
	args = map[string]bool{}
	section, entry := "", -1
	for _, line := range strings.Split(doc, "\n") {
		text := strings.TrimSpace(line)
		indent := len(line) - len(strings.TrimLeft(line, " "))
		switch {
		case text == "Args:" || text == "Returns:":
			section, entry = text, -1
			hasArgs = hasArgs || text == "Args:"
			hasReturns = hasReturns || text == "Returns:"
			continue
		case text == "":
			continue
		case section != "" && entry >= 0 && indent < entry:
			section = "" // back at the docstring's indentation
			continue
		}
		if section != "Args:" {
			continue
		}
		if entry < 0 {
			entry = indent
		}
		if indent == entry {
			if m := docArg.FindStringSubmatch(text); m != nil {
				args[m[1]] = true
			}
		}
	}
	return args, hasArgs, hasReturns
}

// returnsValue reports whether def has a `return x` of its own (not of a
// nested def or lambda).
func returnsValue(def *syntax.DefStmt) bool {
	found := false
	syntax.Walk(&syntax.File{Stmts: def.Body}, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.DefStmt, *syntax.LambdaExpr:
			return false
		case *syntax.ReturnStmt:
			if n.Result != nil {
				found = true
			}
		}
		return !found
	})
	return found
}
