package release

import (
	"fmt"
	"os"
	"sort"

	"go.starlark.net/syntax"

	"github.com/imgflow/imgflow/interp"
)

// workflowInfo is what a release needs to know of a workflow before
// running it, read from its syntax: the params it declares and the
// secrets it and the modules it loads read.
type workflowInfo struct {
	params  map[string]bool
	secrets []string
}

func (w *workflowInfo) paramNames() []string {
	names := make([]string, 0, len(w.params))
	for n := range w.params {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// workflow reads a workflow once per release.
func (c *collector) workflow(rel, abs string) (*workflowInfo, error) {
	if w, ok := c.workflows[rel]; ok {
		return w, nil
	}
	src, err := os.ReadFile(abs)
	if err != nil {
		return nil, fmt.Errorf("workflow %s: %w", rel, err)
	}
	f, err := interp.FileOptions().Parse(rel, src, 0)
	if err != nil {
		return nil, fmt.Errorf("workflow %s: %w", rel, err)
	}
	w := &workflowInfo{params: map[string]bool{}}
	for _, call := range literalCalls(f, "param") {
		w.params[call] = true
	}
	secrets := map[string]bool{}
	c.collectSecrets(rel, f, secrets, map[string]bool{})
	for s := range secrets {
		w.secrets = append(w.secrets, s)
	}
	sort.Strings(w.secrets)
	c.workflows[rel] = w
	return w, nil
}

// collectSecrets adds the secret("name") literals of f and of the modules
// it loads, following each module once. A module that cannot be read is
// left to the run, which reports it with its position.
func (c *collector) collectSecrets(rel string, f *syntax.File, into, seen map[string]bool) {
	seen[rel] = true
	for _, name := range literalCalls(f, "secret") {
		into[name] = true
	}
	for _, stmt := range f.Stmts {
		load, ok := stmt.(*syntax.LoadStmt)
		if !ok {
			continue
		}
		modRel, modAbs, err := c.ws.Resolve(rel, load.ModuleName())
		if err != nil || seen[modRel] {
			continue
		}
		src, err := os.ReadFile(modAbs)
		if err != nil {
			continue
		}
		mod, err := interp.FileOptions().Parse(modRel, src, 0)
		if err != nil {
			continue
		}
		c.collectSecrets(modRel, mod, into, seen)
	}
}

// literalCalls are the first arguments of the calls fn("literal", …) in f.
func literalCalls(f *syntax.File, fn string) []string {
	var out []string
	syntax.Walk(f, func(n syntax.Node) bool {
		call, ok := n.(*syntax.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		if id, ok := call.Fn.(*syntax.Ident); ok && id.Name == fn {
			if lit, ok := call.Args[0].(*syntax.Literal); ok && lit.Token == syntax.STRING {
				out = append(out, lit.Value.(string))
			}
		}
		return true
	})
	return out
}
