package azrules_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stillPorting lists the files that still build Azure's answers
// themselves: the fake ARM's, until cloud/azsim answers for their
// resources, and a rule azsim calls from package cloud. An entry whose
// file no longer builds one fails the test: remove it.
var stillPorting = map[string]string{
	"cloud/azure/fakearm/blobgate.go": "Storage's 404 for an account the fake does not hold, written as the XML Azurite's edge answers",
	// This list must shrink, to nothing.
}

// TestARMErrorsBuiltOnlyInTheSimulation holds issue #25's promise that
// Azure's answers are written once: outside cloud/azsim and cloud/azrules,
// no non-test Go file of the module constructs an ARM error. It reads the
// files' syntax (go/parser), and counts as a construction:
//
//   - a call of cloud.Errorf, cloud.NotFound, cloud.Conflict or
//     cloud.BadRequest: the primitives azrules' and azsim's constructors
//     are made of;
//   - a use of one of the ARM error codes declared in cloud/errors.go, by
//     its constant or as a string literal of its value, anywhere but as a
//     read: an operand of == or !=, a switch case, or an argument of
//     cloud.HasCode, cloud.StatusOf, cloudtest.RequireError or the
//     conformance suite's requireCode (readers). A code in a
//     cloud.Error literal, assigned to a Code field, stored in a variable
//     or passed to any other function is being built into an answer.
//
// Not counted: cloud/errors.go, which declares the codes and primitives;
// a cloud.Error whose code is a variable (a target translating the
// answer Azure gave, an injected fault's code); codes imgflow makes up,
// which are no ARM codes; and transport answers (transportStatus), which
// are the HTTP edge's own, not a rule of Azure's.
func TestARMErrorsBuiltOnlyInTheSimulation(t *testing.T) {
	root := moduleRoot(t)
	codes := armCodes(t, filepath.Join(root, "cloud", "errors.go"))
	require.NotEmpty(t, codes)

	found := map[string][]string{} // file (slash path from root) -> findings
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(must(filepath.Rel(root, path)))
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor" || name == "third_party") ||
				rel == "cloud/azsim" || rel == "cloud/azrules" {
				return filepath.SkipDir
			}
			if path != root && fileExists(filepath.Join(path, "go.mod")) {
				return filepath.SkipDir // another module (a checkout under third_party/)
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || rel == "cloud/errors.go" {
			return nil
		}
		if f := scanFile(t, root, rel, codes); len(f) > 0 {
			found[rel] = f
		}
		return nil
	})
	require.NoError(t, err)

	for _, file := range slices.Sorted(maps.Keys(found)) {
		if _, ok := stillPorting[file]; ok {
			continue
		}
		for _, f := range found[file] {
			t.Errorf("%s: build Azure's answer with a constructor of cloud/azrules (errors.go has the common ones; add one there) or let cloud/azsim answer; a read compares with ==, a switch case or cloud.HasCode", f)
		}
	}
	for _, file := range slices.Sorted(maps.Keys(stillPorting)) {
		if _, ok := found[file]; !ok {
			t.Errorf("stillPorting lists %s, which builds no ARM error now: remove it from the list", file)
		}
	}
}

// transportStatus are the statuses of the answers an HTTP edge gives on
// its own: 401 for a request without a valid token, 429 for throttling.
// A composite literal with one of them as its Status or StatusCode is a
// transport answer, whatever code it carries.
var transportStatus = map[string]bool{"http.StatusUnauthorized": true, "http.StatusTooManyRequests": true}

// constructors are package cloud's primitives for building an answer.
var constructors = map[string]bool{"Errorf": true, "NotFound": true, "Conflict": true, "BadRequest": true}

// readers are the functions that take a code to compare an error with,
// by package path.
var readers = map[string]map[string]bool{
	cloudPath:                  {"HasCode": true, "StatusOf": true},
	cloudPath + "/cloudtest":   {"RequireError": true},
	cloudPath + "/conformance": {"requireCode": true}, // cloudtest.RequireError and no SAS shown
}

const (
	modulePath = "github.com/imgflow/imgflow"
	cloudPath  = modulePath + "/cloud"
)

// scanFile returns the constructions of ARM errors in the file rel, each
// as "file:line: what".
func scanFile(t *testing.T, root, rel string, codes map[string]string) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join(root, rel), nil, parser.SkipObjectResolution)
	require.NoError(t, err)
	own := modulePath + "/" + filepath.ToSlash(filepath.Dir(rel))
	imports := map[string]string{} // local name -> path
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		name := p[strings.LastIndex(p, "/")+1:]
		if im.Name != nil {
			name = im.Name.Name
		}
		imports[name] = p
	}
	// ref resolves e to (package path, name) when it names a member of an
	// imported package or of the file's own.
	ref := func(e ast.Expr) (string, string) {
		switch e := e.(type) {
		case *ast.SelectorExpr:
			if x, ok := e.X.(*ast.Ident); ok && imports[x.Name] != "" {
				return imports[x.Name], e.Sel.Name
			}
		case *ast.Ident:
			return own, e.Name
		}
		return "", ""
	}
	codeOf := func(e ast.Expr) (string, bool) {
		if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			s, _ := strconv.Unquote(lit.Value)
			for _, v := range codes {
				if s == v {
					return lit.Value, true
				}
			}
			return "", false
		}
		if pkg, name := ref(e); pkg == cloudPath {
			if _, ok := codes[name]; ok {
				return "cloud." + name, true
			}
		}
		return "", false
	}

	var out []string
	seen := map[int]bool{}
	report := func(n ast.Node, format string, args ...any) {
		line := fset.Position(n.Pos()).Line
		if !seen[line] {
			seen[line] = true
			out = append(out, fmt.Sprintf("%s:%d: %s", rel, line, fmt.Sprintf(format, args...)))
		}
	}
	var stack []ast.Node
	ast.Inspect(f, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		parent := ast.Node(nil)
		if len(stack) > 0 {
			parent = stack[len(stack)-1]
		}
		stack = append(stack, n)
		switch n := n.(type) {
		case *ast.CompositeLit:
			if isTransport(n) {
				stack = stack[:len(stack)-1]
				return false
			}
		case *ast.CallExpr:
			if pkg, name := ref(n.Fun); pkg == cloudPath && constructors[name] {
				report(n, "cloud.%s builds an ARM error", name)
			}
		case *ast.SelectorExpr, *ast.Ident, *ast.BasicLit:
			if _, isSel := parent.(*ast.SelectorExpr); isSel && n != ast.Node(parent.(*ast.SelectorExpr).X) {
				return true // the Sel of a selector is seen with it
			}
			code, ok := codeOf(n.(ast.Expr))
			if ok && !isRead(n.(ast.Expr), parent, ref) {
				report(n, "the ARM error code %s is built into a value", code)
			}
			if _, isSel := n.(*ast.SelectorExpr); isSel && ok {
				stack = stack[:len(stack)-1]
				return false
			}
		}
		return true
	})
	return out
}

// isRead reports whether the code e is compared with, not built.
func isRead(e ast.Expr, parent ast.Node, ref func(ast.Expr) (string, string)) bool {
	switch p := parent.(type) {
	case *ast.BinaryExpr:
		return p.Op == token.EQL || p.Op == token.NEQ
	case *ast.CaseClause:
		return slices.Contains(p.List, e)
	case *ast.CallExpr:
		pkg, name := ref(p.Fun)
		return slices.Contains(p.Args, e) && readers[pkg][name]
	}
	return false
}

// isTransport reports whether lit is a transport answer: a struct literal
// whose Status or StatusCode field is one of transportStatus.
func isTransport(lit *ast.CompositeLit) bool {
	for _, el := range lit.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		key, ok := kv.Key.(*ast.Ident)
		if !ok || (key.Name != "Status" && key.Name != "StatusCode") {
			continue
		}
		if sel, ok := kv.Value.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok && transportStatus[x.Name+"."+sel.Sel.Name] {
				return true
			}
		}
	}
	return false
}

// armCodes reads the ARM error codes cloud/errors.go declares: its string
// constants named Code*, by name.
func armCodes(t *testing.T, path string) map[string]string {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	require.NoError(t, err)
	codes := map[string]string{}
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING && strings.HasPrefix(name.Name, "Code") {
					codes[name.Name] = must(strconv.Unquote(lit.Value))
				}
			}
		}
	}
	return codes
}

func moduleRoot(t *testing.T) string {
	dir := must(os.Getwd())
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "no go.mod above the test")
		dir = parent
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestBuiltOnceRule pins what the rule counts, on a file of each case.
func TestBuiltOnceRule(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "x"), 0o755))
	src := `package x

import (
	"net/http"

	"github.com/imgflow/imgflow/cloud"
)

func built(id string) error {
	return &cloud.Error{StatusCode: 409, Code: cloud.CodeConflict, Resource: id}
}

func literal() string { return "BlobNotFound" }

func primitive(code string) error { return cloud.Errorf(code, "", "x") }

func assigned(ce *cloud.Error) { ce.Code = cloud.CodeInvalidRange }

func reads(err error, ce *cloud.Error) bool {
	switch ce.Code {
	case cloud.CodeNotFound, "InvalidParameter":
		return true
	}
	return ce.Code == cloud.CodeConflict || "BlobNotFound" != ce.Code || cloud.HasCode(err, cloud.CodeBlobNotFound)
}

func translated(status int, code string) error { return &cloud.Error{StatusCode: status, Code: code} }

func transport() error {
	return &cloud.Error{StatusCode: http.StatusUnauthorized, Code: "AuthenticationFailed"}
}
`
	require.NoError(t, os.WriteFile(filepath.Join(root, "x", "x.go"), []byte(src), 0o644))
	codes := armCodes(t, filepath.Join(moduleRoot(t), "cloud", "errors.go"))
	assert.Equal(t, []string{
		"x/x.go:10: the ARM error code cloud.CodeConflict is built into a value",
		`x/x.go:13: the ARM error code "BlobNotFound" is built into a value`,
		"x/x.go:15: cloud.Errorf builds an ARM error",
		"x/x.go:17: the ARM error code cloud.CodeInvalidRange is built into a value",
	}, scanFile(t, root, "x/x.go", codes))
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
