package interp

import (
	"fmt"

	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// ShadowedBuiltins reports the globals of f, a resolved file, that hide a
// builtin (one of isBuiltin's or Starlark's universe) which the file
// calls: after `gallery = struct(…)` a call of gallery() would fail only
// when reached, far from the assignment, as "invalid call of non-function
// (struct)". A def of the builtin's name is a deliberate replacement and
// passes, as does a global the file never calls. Run and lint both refuse
// them, at the binding.
func ShadowedBuiltins(f *syntax.File, isBuiltin func(string) bool) resolve.ErrorList {
	m, ok := f.Module.(*resolve.Module)
	if !ok {
		return nil
	}
	called := map[string]bool{}
	defs := map[*syntax.Ident]bool{}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CallExpr:
			if id, ok := n.Fn.(*syntax.Ident); ok {
				called[id.Name] = true
			}
		case *syntax.DefStmt:
			defs[n.Name] = true
		}
		return true
	})
	var errs resolve.ErrorList
	for _, b := range m.Globals {
		id := b.First
		if id == nil || defs[id] || !called[id.Name] || !(isBuiltin(id.Name) || starlark.Universe.Has(id.Name)) {
			continue
		}
		errs = append(errs, resolve.Error{Pos: id.NamePos, Msg: fmt.Sprintf(
			"global %s hides the builtin %s(): the file's calls of %s() would reach this value instead; rename it (e.g. %s_)",
			id.Name, id.Name, id.Name, id.Name)})
	}
	return errs
}
