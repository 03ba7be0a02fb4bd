// Package startest runs *_test.star files: every test_* function, sorted,
// each on a fresh in-memory local cloud, with starlarktest's assert module
// and run(workflow, vars=…) to execute a workflow and inspect what it did.
package startest

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarktest"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/cloud/local"
	"github.com/imgflow/imgflow/internal/tenant"
	"github.com/imgflow/imgflow/interp"
	"github.com/imgflow/imgflow/journal"
)

// Result is the outcome of one test_* function.
type Result struct {
	File     string
	Name     string
	Failures []string
	Duration time.Duration
}

// Passed reports whether the test had no failure.
func (r Result) Passed() bool { return len(r.Failures) == 0 }

// Runner runs test files of one workspace.
type Runner struct {
	Workspace *builtins.Workspace
	Registry  *builtins.Registry
	// Reporter receives print() output of tests (nil: discarded).
	Reporter builtins.Reporter
	// Time is the fixed run time of workflows run by tests.
	Time time.Time

	// programs compiles each workflow, library and test file once for
	// all the tests' runs.
	programs interp.Programs
}

// NewRunner makes a runner for the workspace.
func NewRunner(ws *builtins.Workspace) *Runner {
	return &Runner{Workspace: ws, Registry: builtins.NewRegistry(), Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

// Discover lists the *_test.star files under paths (workspace-relative
// files or directories; "dir/..." is accepted), sorted.
func (r *Runner) Discover(paths []string) ([]string, error) {
	return r.walk(paths, func(name string) bool { return strings.HasSuffix(name, TestSuffix) })
}

// walk lists the workspace-relative files under paths whose base name
// keep accepts, sorted; hidden directories and node_modules are skipped.
func (r *Runner) walk(paths []string, keep func(name string) bool) ([]string, error) {
	var files []string
	for _, p := range paths {
		p = strings.TrimSuffix(strings.TrimSuffix(p, "..."), "/")
		if p == "" || p == "." {
			p = "."
		}
		_, abs, err := r.Workspace.Resolve("", "//"+filepath.ToSlash(p))
		if err != nil {
			return nil, err
		}
		err = filepath.WalkDir(abs, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && path != abs && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			if !d.IsDir() && keep(d.Name()) {
				files = append(files, r.Workspace.Rel(path))
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("find files in %s: %w", p, err)
		}
	}
	sort.Strings(files)
	return files, nil
}

// RunFiles runs the test files' tests, up to parallel at once (at least
// one), and sends each file's results on the returned channel in the
// order of files, as soon as that file and those before it are done.
// Tests, not files, are the unit of parallelism, so a file with many
// slow tests does not finish alone on one core: every test has its own
// fake cloud and journal directory. The Reporter, if set, must be safe
// for concurrent use.
func (r *Runner) RunFiles(ctx context.Context, files []string, parallel int) <-chan []Result {
	parallel = max(parallel, 1)
	type job struct {
		results []Result
		i       int
		run     func() Result
		done    *sync.WaitGroup
	}
	fileDone := make([]*sync.WaitGroup, len(files))
	fileResults := make([][]Result, len(files))
	jobs := make(chan job)
	loaded := make(chan int, len(files)) // files whose tests are all queued
	go func() {
		defer close(jobs)
		for fi, f := range files {
			tests := r.loadTests(ctx, f)
			fileResults[fi] = make([]Result, len(tests))
			wg := &sync.WaitGroup{}
			wg.Add(len(tests))
			fileDone[fi] = wg
			loaded <- fi
			for ti, t := range tests {
				jobs <- job{results: fileResults[fi], i: ti, run: t, done: wg}
			}
		}
	}()
	for range parallel {
		go func() {
			for j := range jobs {
				j.results[j.i] = j.run()
				j.done.Done()
			}
		}()
	}
	out := make(chan []Result)
	go func() {
		defer close(out)
		for range files {
			fi := <-loaded
			fileDone[fi].Wait()
			out <- fileResults[fi]
		}
	}()
	return out
}

// RunFile runs every test_* function of one test file, one after the
// other. An error loading the file is reported as a failing pseudo-test
// named "<load>".
func (r *Runner) RunFile(ctx context.Context, file string) []Result {
	var results []Result
	for _, run := range r.loadTests(ctx, file) {
		results = append(results, run())
	}
	return results
}

// loadTests loads a test file and returns a function per test_* function,
// in name order, each running its test on a fresh cloud; or a single one
// reporting the failures that kept the file from loading.
func (r *Runner) loadTests(ctx context.Context, file string) []func() Result {
	cfg := interp.Config{Workspace: r.Workspace, Registry: r.Registry, Reporter: r.Reporter, Programs: &r.programs}
	globals, failures := r.load(ctx, cfg, file)
	if len(failures) > 0 {
		return []func() Result{func() Result { return Result{File: file, Name: "<load>", Failures: failures} }}
	}
	var tests []func() Result
	for _, name := range globals.Keys() { // sorted
		fn, ok := globals[name].(*starlark.Function)
		if !ok || !strings.HasPrefix(name, "test_") {
			continue
		}
		tests = append(tests, func() Result { return r.runTest(ctx, cfg, file, name, fn) })
	}
	return tests
}

// load executes a test file's module with assert and run() predeclared,
// returning its globals, or the failures that kept it from loading.
func (r *Runner) load(ctx context.Context, cfg interp.Config, file string) (starlark.StringDict, []string) {
	assertMod, err := starlarktest.LoadAssertModule()
	if err != nil {
		return nil, []string{err.Error()}
	}
	loadRep := &collector{}
	extra := starlark.StringDict{"assert": assertMod["assert"], "run": starlark.NewBuiltin("run", runBuiltin)}
	globals, err := interp.ExecModule(ctx, cfg, "//"+file, extra, func(th *starlark.Thread) { starlarktest.SetReporter(th, loadRep) })
	msgs := loadRep.failures
	if err != nil {
		msgs = append(msgs, err.Error())
	}
	return globals, msgs
}

// runTest calls one test function on a fresh fake cloud.
func (r *Runner) runTest(ctx context.Context, cfg interp.Config, file, name string, fn *starlark.Function) Result {
	res := Result{File: file, Name: name}
	start := time.Now()
	tn := local.NewTenant()
	cloud, err := local.NewMemory(local.Options{Tenant: tn})
	if err != nil {
		res.Failures = []string{err.Error()}
		return res
	}
	defer cloud.Close()
	subs := tenant.NewMemory(tn, local.Options{})
	defer subs.Close()
	journals, err := os.MkdirTemp("", "imgflow-test-runs-")
	if err != nil {
		res.Failures = []string{err.Error()}
		return res
	}
	defer os.RemoveAll(journals)
	h := &harness{runner: r, testFile: file, cloud: cloud, subs: subs, journals: journal.ScratchDir(journals)}
	rep := &collector{}
	th, stop := interp.NewThread(ctx, cfg, file+":"+name)
	starlarktest.SetReporter(th, rep)
	th.SetLocal(harnessKey, h)
	_, err = starlark.Call(th, fn, nil, nil)
	stop()
	res.Failures = rep.failures
	if err != nil {
		res.Failures = append(res.Failures, interp.RenderError(err, r.Workspace).Error())
	}
	res.Duration = time.Since(start)
	return res
}

// collector gathers assert failures (starlarktest.Reporter).
type collector struct{ failures []string }

func (c *collector) Error(args ...any) { c.failures = append(c.failures, fmt.Sprint(args...)) }
