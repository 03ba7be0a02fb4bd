package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/interp"
	"github.com/imgflow/imgflow/release"
)

// A checkCell is one set of vars `imgflow check` plans a workflow with.
type checkCell struct {
	// name says where the vars come from: "default" (the params'
	// defaults), "releases/aks.star job ID" or "workflows/x_test.star VARS".
	name string
	// source is the file the cell comes from, "" for the default.
	source string
	vars   map[string]starlark.Value
}

// checkCells are the var sets check plans the workflow rel with: its
// params' defaults, every job of a release file under releases/ that runs
// it, and every top-level dict of its test file (rel with _test.star)
// passed as run(rel, vars = NAME). Identical var sets are planned once.
func checkCells(ctx context.Context, ws *builtins.Workspace, rel string) []checkCell {
	cells := []checkCell{{name: "default", vars: map[string]starlark.Value{}}}
	seen := map[string]bool{cellKey(cells[0].vars): true}
	add := func(c checkCell) {
		if k := cellKey(c.vars); !seen[k] {
			seen[k] = true
			cells = append(cells, c)
		}
	}
	files, _ := filepath.Glob(filepath.Join(ws.Root, "releases", "*.star"))
	for _, f := range files {
		if !release.IsReleaseFile(f) {
			continue
		}
		r, err := release.Load(ctx, ws, "//releases/"+filepath.Base(f))
		if err != nil {
			continue // its own check reports it
		}
		for _, j := range r.Jobs {
			if j.Workflow != rel {
				continue
			}
			vars := map[string]starlark.Value{}
			for k, v := range j.Vars {
				vars[k] = starlark.String(v)
			}
			add(checkCell{name: r.File + " job " + j.ID, source: r.File, vars: vars})
		}
	}
	testRel := strings.TrimSuffix(rel, ".star") + "_test.star"
	for _, c := range testFileCells(ws, testRel, rel) {
		add(c)
	}
	return cells
}

// cellKey identifies a var set.
func cellKey(vars map[string]starlark.Value) string {
	keys := make([]string, 0, len(vars))
	for k, v := range vars {
		keys = append(keys, k+"="+v.String())
	}
	sort.Strings(keys)
	return strings.Join(keys, "\x00")
}

// testFileCells are the top-level dicts of literals of the test file
// testRel that it passes as run(WORKFLOW, vars = NAME) for the workflow
// rel: the named var sets its tests run. Dicts written inline at a call
// are left out: tests build those to see a run fail.
func testFileCells(ws *builtins.Workspace, testRel, rel string) []checkCell {
	_, abs, err := ws.Resolve("", "//"+testRel)
	if err != nil {
		return nil
	}
	src, err := os.ReadFile(abs)
	if err != nil {
		return nil
	}
	f, err := interp.FileOptions().Parse(testRel, src, 0)
	if err != nil {
		return nil
	}
	consts := map[string]syntax.Expr{}
	for _, stmt := range f.Stmts {
		if a, ok := stmt.(*syntax.AssignStmt); ok && a.Op == syntax.EQ {
			if id, ok := a.LHS.(*syntax.Ident); ok {
				consts[id.Name] = a.RHS
			}
		}
	}
	var names []string
	syntax.Walk(f, func(n syntax.Node) bool {
		call, ok := n.(*syntax.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		if id, ok := call.Fn.(*syntax.Ident); !ok || id.Name != "run" {
			return true
		}
		wf, ok := stringLiteral(call.Args[0])
		if !ok {
			return true
		}
		if r, _, err := ws.Resolve(testRel, wf); err != nil || r != rel {
			return true
		}
		for _, a := range call.Args[1:] {
			if kw, ok := a.(*syntax.BinaryExpr); ok && kw.Op == syntax.EQ {
				if k, ok := kw.X.(*syntax.Ident); ok && k.Name == "vars" {
					if v, ok := kw.Y.(*syntax.Ident); ok && !slices.Contains(names, v.Name) {
						names = append(names, v.Name)
					}
				}
			}
		}
		return true
	})
	var cells []checkCell
	for _, name := range names {
		dict, ok := consts[name].(*syntax.DictExpr)
		if !ok {
			continue
		}
		vars := map[string]starlark.Value{}
		for _, e := range dict.List {
			entry := e.(*syntax.DictEntry)
			k, ok := stringLiteral(entry.Key)
			v, vok := literalString(entry.Value, consts)
			if !ok || !vok {
				vars = nil
				break
			}
			vars[k] = starlark.String(v)
		}
		if vars != nil {
			cells = append(cells, checkCell{name: testRel + " " + name, source: testRel, vars: vars})
		}
	}
	return cells
}

// literalString is e as a --var string: a string literal, or a top-level
// name bound to one.
func literalString(e syntax.Expr, consts map[string]syntax.Expr) (string, bool) {
	if id, ok := e.(*syntax.Ident); ok {
		e = consts[id.Name]
	}
	if e == nil {
		return "", false
	}
	return stringLiteral(e)
}
