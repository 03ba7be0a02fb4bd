package interp

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"

	"go.starlark.net/starlark"

	"github.com/imgflow/imgflow/builtins"
)

// loader implements load() for one pass of a run: "//lib/x.star" from the
// workspace root, other paths relative to the loading file, nothing outside
// the workspace. Modules are cached by resolved path, so each runs once;
// a module that is still loading when asked for again is a cycle.
type loader struct {
	ctx         context.Context
	ws          *builtins.Workspace
	run         *builtins.Run
	predeclared starlark.StringDict
	maxSteps    uint64
	programs    *Programs

	mu      sync.Mutex
	modules map[string]*module
	// chain is the stack of modules being loaded, for cycle messages.
	chain []string
}

type module struct {
	globals starlark.StringDict
	err     error
	loading bool
}

func newLoader(ctx context.Context, cfg Config, run *builtins.Run, predeclared starlark.StringDict, maxSteps uint64, mainFile string) *loader {
	return &loader{
		ctx: ctx, ws: cfg.Workspace, run: run, predeclared: predeclared, maxSteps: maxSteps, programs: cfg.Programs,
		modules: map[string]*module{mainFile: {loading: true}},
		chain:   []string{mainFile},
	}
}

func (l *loader) load(thread *starlark.Thread, name string) (starlark.StringDict, error) {
	from := thread.CallFrame(0).Pos.Filename()
	rel, abs, err := l.ws.Resolve(from, name)
	if err != nil {
		return nil, err
	}
	if !strings.HasSuffix(rel, ".star") {
		return nil, fmt.Errorf("%s is not a Starlark module: load() takes .star files", name)
	}
	l.mu.Lock()
	if m, ok := l.modules[rel]; ok {
		l.mu.Unlock()
		if m.loading {
			return nil, fmt.Errorf("cycle in load graph: %s → %s", strings.Join(l.chainTo(rel), " → "), rel)
		}
		return m.globals, m.err
	}
	m := &module{loading: true}
	l.modules[rel] = m
	l.chain = append(l.chain, rel)
	l.mu.Unlock()

	m.globals, m.err = l.exec(rel, abs)

	l.mu.Lock()
	m.loading = false
	l.chain = l.chain[:len(l.chain)-1]
	l.mu.Unlock()
	return m.globals, m.err
}

// chainTo returns the loading chain from rel's first appearance.
func (l *loader) chainTo(rel string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, c := range l.chain {
		if c == rel {
			return append([]string(nil), l.chain[i:]...)
		}
	}
	return append([]string(nil), l.chain...)
}

// exec runs a library module on its own thread, marked as loading so
// builtins that change the cloud refuse to run.
func (l *loader) exec(rel, abs string) (starlark.StringDict, error) {
	src, err := os.ReadFile(abs)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", rel, err)
	}
	th := newThread("load "+rel, l.run, l, l.maxSteps)
	builtins.SetLoading(th, rel)
	stop := watchCancel(l.ctx, th)
	defer stop()
	return l.programs.compile(rel, src, l.predeclared).exec(th, l.predeclared)
}
