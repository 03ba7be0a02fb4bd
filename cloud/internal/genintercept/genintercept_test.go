package genintercept

import (
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var shapes = Spec{Dir: "testdata/shapes", Interface: "Wide", Receiver: "hooked", Field: "w", Output: "hooked_gen.go"}

// TestGeneratedCodeCompiles type-checks the fixture package with the
// generated file: every method of Wide (the embedded Base's included)
// exists with the right signature, or var _ Wide = (*hooked)(nil) fails.
func TestGeneratedCodeCompiles(t *testing.T) {
	src, err := Generate(shapes)
	require.NoError(t, err)

	fset := token.NewFileSet()
	var files []*ast.File
	fixture, err := os.ReadFile(filepath.Join(shapes.Dir, "shapes.go"))
	require.NoError(t, err)
	for name, text := range map[string][]byte{"shapes.go": fixture, shapes.Output: src} {
		f, err := parser.ParseFile(fset, name, text, 0)
		require.NoError(t, err, "%s:\n%s", name, text)
		files = append(files, f)
	}
	// The importer finds the standard library under go/build's GOROOT,
	// which a test binary built with -trimpath (make test's GOFLAGS)
	// does not know: ask the go command.
	if build.Default.GOROOT == "" {
		out, err := exec.Command("go", "env", "GOROOT").Output()
		require.NoError(t, err)
		build.Default.GOROOT = strings.TrimSpace(string(out))
	}
	conf := types.Config{Importer: importer.Default()}
	_, err = conf.Check("shapes", fset, files, nil)
	require.NoError(t, err, "generated:\n%s", src)
}

func TestGeneratedShapes(t *testing.T) {
	src, err := Generate(shapes)
	require.NoError(t, err)
	code := string(src)

	assert.Regexp(t, `^// Code generated .* DO NOT EDIT\.\n`, code)
	// The embedded interface's method is hooked like the others.
	assert.Contains(t, code, `func (x *hooked) Get(ctx context.Context, name string) (r0 *Item, err error) {
	if err = x.before(ctx, "Get"); err != nil {
		return r0, err
	}
	r0, err = x.w.Get(ctx, name)
	if err == nil {
		err = x.after(ctx, "Get")
	}
	return r0, err
}`)
	// Unnamed parameters get names; an error-only method has no other result.
	assert.Contains(t, code, `func (x *hooked) Delete(a0 context.Context, a1 string) (err error) {
	if err = x.before(a0, "Delete"); err != nil {
		return err
	}
	err = x.w.Delete(a0, a1)`)
	assert.Contains(t, code, `func (x *hooked) Pair(ctx context.Context, a int, b int) (r0 string, r1 []Item, err error) {`)
	// Names that would shadow the receiver or the error are renamed.
	assert.Contains(t, code, `func (x *hooked) Collide(ctx context.Context, x_ string, err_ string) (r0 int, err error) {`)
	assert.Contains(t, code, `r0, err = x.w.Collide(ctx, x_, err_)`)
	// A renamed import keeps its name; variadic arguments are passed on.
	assert.Contains(t, code, `stdtime "time"`)
	assert.Contains(t, code, `r0, err = x.w.Many(ctx, wait, opts...)`)
	// Methods that take no context or return no error are passed through.
	assert.Contains(t, code, "func (x *hooked) Name() string {\n\treturn x.w.Name()\n}")
	assert.Contains(t, code, "func (x *hooked) NoError(ctx context.Context) int {\n\treturn x.w.NoError(ctx)\n}")
}

func TestGenerateRefusesWhatItCannotExpand(t *testing.T) {
	dir := t.TempDir()
	write := func(src string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644))
	}
	spec := Spec{Dir: dir, Interface: "I", Receiver: "r", Field: "f", Output: "gen.go"}

	write("package p\nimport \"io\"\ntype I interface { io.Reader }\n")
	_, err := Generate(spec)
	assert.ErrorContains(t, err, "interface I embeds io.Reader")

	write("package p\ntype J interface{ Do() }\n")
	_, err = Generate(spec)
	assert.ErrorContains(t, err, "interface I not found in package p")

	write("package p\ntype I interface{ I }\n")
	_, err = Generate(spec)
	assert.ErrorContains(t, err, "interface I embeds itself")
}
