package interp

import (
	"crypto/sha256"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"go.starlark.net/starlark"
)

// Programs caches compiled modules, so that a process running the same
// workflows and libraries many times (imgflow test: two passes per run(),
// several runs per test) parses, resolves and compiles each file once.
// An entry is keyed by the file's name, its exact source (by its
// SHA-256, rather than a copy of it) and the names predeclared to it, so
// an edited file or another environment compiles anew. A
// *starlark.Program is immutable: one entry serves any number of runs at
// once. The zero value is ready; it is safe for concurrent use.
type Programs struct {
	// Dir, when set, also keeps compiled modules on disk, for the next
	// process (see programs_disk.go); Salt must then identify the
	// binary, whose Starlark dialect and checks decide what compiles.
	Dir, Salt string

	mu      sync.Mutex
	entries map[programKey]*program
	// compiled counts the files compiled rather than found (tests).
	compiled atomic.Int64
}

type programKey struct {
	filename, predeclared string
	src                   [sha256.Size]byte
}

// program is one compiled file: its program, or the syntax or resolve
// error every run of it reports, and its param() names (paramNames).
type program struct {
	once   sync.Once
	prog   *starlark.Program
	static staticParams
	err    error
}

// compile returns the compiled form of src, from the cache when c is not
// nil.
func (c *Programs) compile(filename string, src []byte, predeclared starlark.StringDict) *program {
	if c == nil {
		return compileProgram(filename, src, predeclared)
	}
	key := programKey{filename: filename, src: sha256.Sum256(src), predeclared: namesOf(predeclared)}
	c.mu.Lock()
	if c.entries == nil {
		c.entries = map[programKey]*program{}
	}
	p, ok := c.entries[key]
	if !ok {
		p = &program{}
		c.entries[key] = p
	}
	c.mu.Unlock()
	p.once.Do(func() {
		var path string
		if c.Dir != "" {
			path = c.diskPath(key)
			if d := readDisk(path); d != nil {
				p.prog, p.static = d.prog, d.static
				return
			}
		}
		c.compiled.Add(1)
		compiled := compileProgram(filename, src, predeclared)
		p.prog, p.static, p.err = compiled.prog, compiled.static, compiled.err
		if path != "" && p.err == nil {
			writeDisk(path, p)
		}
	})
	return p
}

// compileProgram parses src once for both its param() names and its
// program (starlark.ExecFileOptions would parse it again).
func compileProgram(filename string, src []byte, predeclared starlark.StringDict) *program {
	f, err := FileOptions().Parse(filename, src, 0)
	if err != nil {
		return &program{err: err}
	}
	static := paramNames(f) // before FileProgram resolves (mutates) f
	prog, err := starlark.FileProgram(f, predeclared.Has)
	if err == nil {
		if errs := ShadowedBuiltins(f, predeclared.Has); len(errs) > 0 {
			return &program{err: errs}
		}
	}
	return &program{prog: prog, static: static, err: err}
}

// exec runs the program's top level on thread, as
// starlark.ExecFileOptions does: the globals come back frozen.
func (p *program) exec(thread *starlark.Thread, predeclared starlark.StringDict) (starlark.StringDict, error) {
	if p.err != nil {
		return nil, p.err
	}
	g, err := p.prog.Init(thread, predeclared)
	g.Freeze()
	return g, err
}

// namesOf is the sorted names of env, the part of an environment that
// compiling depends on.
func namesOf(env starlark.StringDict) string {
	names := make([]string, 0, len(env))
	for k := range env {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}
