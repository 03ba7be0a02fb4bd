package fakearm

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// azureTargetCalls lists the SDK operations the Azure target calls
// ("GalleryImagesClient.Get"), read from its source: every method used on
// a field of Provider whose type is an SDK client (*armX.YClient).
func azureTargetCalls(t *testing.T) map[string][]string {
	t.Helper()
	dir := ".."
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var files []*ast.File
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, 0)
		require.NoError(t, err)
		files = append(files, f)
	}
	clients := map[string]string{} // Provider field -> SDK client type
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || ts.Name.Name != "Provider" {
				return true
			}
			for _, field := range ts.Type.(*ast.StructType).Fields.List {
				star, ok := field.Type.(*ast.StarExpr)
				if !ok {
					continue
				}
				sel, ok := star.X.(*ast.SelectorExpr)
				if pkg, isIdent := sel.X.(*ast.Ident); !ok || !isIdent || !strings.HasPrefix(pkg.Name, "arm") || !strings.HasSuffix(sel.Sel.Name, "Client") {
					continue
				}
				for _, name := range field.Names {
					clients[name.Name] = sel.Sel.Name
				}
			}
			return false
		})
	}
	calls := map[string][]string{} // SDK operation -> where
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			outer, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			inner, ok := outer.X.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if client, ok := clients[inner.Sel.Name]; ok {
				api := client + "." + outer.Sel.Name
				calls[api] = append(calls[api], fset.Position(outer.Pos()).String())
			}
			return true
		})
	}
	require.NotEmpty(t, clients, "no SDK client fields found in cloud/azure's Provider")
	return calls
}

// Every SDK operation the Azure target calls has a handler in the fake:
// without one the SDK's fake server fails the call when a test first
// reaches the call, or never, if no test does. A new call fails here until
// it is added to operations (docs/adding-an-azure-operation.md).
func TestEveryAzureTargetCallHasAnOperation(t *testing.T) {
	ops := reflect.TypeOf((*operations)(nil)).Elem()
	handled := map[string]bool{}
	for i := range ops.NumMethod() {
		handled[apiOf(ops.Method(i).Name)] = true
	}
	calls := azureTargetCalls(t)
	assert.Greater(t, len(calls), 20, "the source scan finds the target's calls")
	var missing []string
	for api, where := range calls {
		if !handled[api] {
			missing = append(missing, api+" (called at "+where[0]+")")
		}
	}
	sort.Strings(missing)
	assert.Empty(t, missing, "SDK operations cloud/azure calls that the fake ARM does not serve: add them to operations in operations.go")
}
