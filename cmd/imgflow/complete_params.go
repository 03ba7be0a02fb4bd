package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"go.starlark.net/syntax"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/cloud/local"
	"github.com/imgflow/imgflow/cloud/overlay"
	"github.com/imgflow/imgflow/interp"
	"github.com/imgflow/imgflow/release"
)

// cmdCompleteParams prints name= for each param("name", …) a workflow
// declares or, given a param's name too, that param's choices: the
// completion scripts offer them after --var. Hidden; quiet on errors.
func cmdCompleteParams(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet("__complete-params", e)
	fs.SetOutput(io.Discard)
	var shared sharedFlags
	shared.addRoot(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return flagError(err)
	}
	if len(pos) != 1 && len(pos) != 2 {
		return exitCode(2)
	}
	src, err := os.ReadFile(pos[0])
	if err != nil {
		return exitCode(1)
	}
	if release.IsRelease(pos[0], src) {
		for _, line := range releaseCompletions(ctx, shared.root, pos[0], src, pos[1:]) {
			fmt.Fprintln(e.stdout, line)
		}
		return nil
	}
	if len(pos) == 1 {
		for _, p := range declaredParams(pos[0], src) {
			fmt.Fprintln(e.stdout, p.name+"=")
		}
		return nil
	}
	for _, choice := range paramChoices(ctx, shared.root, pos[0], src, pos[1]) {
		fmt.Fprintln(e.stdout, choice)
	}
	return nil
}

// A declaredParam is a param("name", …, choices = [...]) call as written:
// choices holds the literal strings of a literal list, nil otherwise.
type declaredParam struct {
	name    string
	choices []string
}

// declaredParams finds the param("name", …) calls in a workflow's source,
// in order, without running it.
func declaredParams(filename string, src []byte) []declaredParam {
	f, err := interp.FileOptions().Parse(filename, src, 0)
	if err != nil {
		return nil
	}
	var params []declaredParam
	seen := map[string]bool{}
	syntax.Walk(f, func(n syntax.Node) bool {
		call, ok := n.(*syntax.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		if id, ok := call.Fn.(*syntax.Ident); ok && id.Name == "param" {
			if name, ok := stringLiteral(call.Args[0]); ok && !seen[name] {
				seen[name] = true
				params = append(params, declaredParam{name: name, choices: literalChoices(call.Args[1:])})
			}
		}
		return true
	})
	return params
}

// literalChoices is the choices = [...] keyword argument when it is a list
// of string literals.
func literalChoices(args []syntax.Expr) []string {
	for _, a := range args {
		kw, ok := a.(*syntax.BinaryExpr)
		if !ok || kw.Op != syntax.EQ {
			continue
		}
		if id, ok := kw.X.(*syntax.Ident); !ok || id.Name != "choices" {
			continue
		}
		list, ok := kw.Y.(*syntax.ListExpr)
		if !ok {
			return nil
		}
		var out []string
		for _, el := range list.List {
			s, ok := stringLiteral(el)
			if !ok {
				return nil
			}
			out = append(out, s)
		}
		return out
	}
	return nil
}

func stringLiteral(e syntax.Expr) (string, bool) {
	lit, ok := e.(*syntax.Literal)
	if !ok || lit.Token != syntax.STRING {
		return "", false
	}
	return lit.Value.(string), true
}

// paramChoicesTimeout bounds how long completion may plan a workflow.
const paramChoicesTimeout = 5 * time.Second

// paramChoices are the choices of the param name: a literal list as
// written, else the values the workflow computes (choices =
// flatcar.CHANNELS), learned by planning it with its params' defaults on
// an empty in-memory target, as imgflow check does. Nothing real is
// touched.
func paramChoices(ctx context.Context, root, file string, src []byte, name string) []string {
	for _, p := range declaredParams(file, src) {
		if p.name == name && p.choices != nil {
			return p.choices
		}
	}
	ws, err := newWorkspace(root)
	if err != nil {
		return nil
	}
	rel, err := workspacePath(ws, file)
	if err != nil {
		return nil
	}
	mem, err := local.NewMemory(local.Options{})
	if err != nil {
		return nil
	}
	defer mem.Close()
	ctx, cancel := context.WithTimeout(ctx, paramChoicesTimeout)
	defer cancel()
	res := interp.Plan(ctx, "//"+rel, interp.Config{Workspace: ws, Registry: builtins.NewRegistry(), Info: newRunInfo()}, overlay.New(mem))
	for _, p := range res.Params {
		if p.Name == name {
			return p.Choices
		}
	}
	return nil
}

// releaseCompletions are, for a release file, what --var takes: its own
// var("name", …) and the params of its jobs' workflows (a release's --var
// goes to every job that takes it), as name=; given a name, that param's
// choices, as the first job's workflow declaring it has them.
func releaseCompletions(ctx context.Context, root, file string, src []byte, name []string) []string {
	ws, err := builtins.NewWorkspace(root)
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, paramChoicesTimeout)
	defer cancel()
	rel, err := release.Load(ctx, ws, file)
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p+"=")
		}
	}
	if len(name) == 0 {
		for _, v := range releaseVarNames(file, src) {
			add(v)
		}
	}
	for _, j := range rel.Jobs {
		wf := filepath.Join(ws.Root, filepath.FromSlash(j.Workflow))
		wsrc, err := os.ReadFile(wf)
		if err != nil {
			continue
		}
		for _, p := range declaredParams(wf, wsrc) {
			if len(name) == 1 && p.name == name[0] {
				return paramChoices(ctx, root, wf, wsrc, p.name)
			}
			if len(name) == 0 {
				add(p.name)
			}
		}
	}
	if len(name) == 1 {
		return nil
	}
	return out
}

// releaseVarNames are the names of a release file's var("name", …) calls.
func releaseVarNames(file string, src []byte) []string {
	f, err := interp.FileOptions().Parse(file, src, 0)
	if err != nil {
		return nil
	}
	var names []string
	syntax.Walk(f, func(n syntax.Node) bool {
		if call, ok := n.(*syntax.CallExpr); ok && len(call.Args) > 0 {
			if id, ok := call.Fn.(*syntax.Ident); ok && id.Name == "var" {
				if name, ok := stringLiteral(call.Args[0]); ok {
					names = append(names, name)
				}
			}
		}
		return true
	})
	return names
}
