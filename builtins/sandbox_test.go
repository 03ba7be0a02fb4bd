package builtins_test

import (
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.starlark.net/starlark"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/local"
	"github.com/imgflow/imgflow/cloud/overlay"
	"github.com/imgflow/imgflow/internal/localpacker"
	"github.com/imgflow/imgflow/interp"
	"github.com/imgflow/imgflow/vhd"
)

// snippetTime is the fixed run time of every sandbox run.
var snippetTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// snippetSandbox is a temporary workspace and an in-memory local cloud on
// which small Starlark workflows run through interp.Run.
type snippetSandbox struct {
	t     *testing.T
	ws    *builtins.Workspace
	reg   *builtins.Registry
	cloud *local.Provider
	// apply is the provider of the apply pass (cloud unless wrapped).
	apply cloud.Provider
	runs  int
	// artifacts is the runs' artifacts directory ("" = none).
	artifacts string
}

func newSnippetSandbox(t *testing.T) *snippetSandbox {
	t.Helper()
	ws, err := localpacker.NewWorkspace(t.TempDir())
	require.NoError(t, err)
	p, err := local.NewMemory(local.Options{
		Rand: rand.New(rand.NewSource(1)),
		Now:  func() time.Time { return snippetTime },
	})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, p.Close()) })
	return &snippetSandbox{t: t, ws: ws, reg: builtins.NewRegistry(), cloud: p, apply: p}
}

// write creates a workspace file (slash path relative to the root).
func (s *snippetSandbox) write(rel, content string) {
	s.t.Helper()
	abs := filepath.Join(s.ws.Root, filepath.FromSlash(rel))
	require.NoError(s.t, os.MkdirAll(filepath.Dir(abs), 0o755))
	require.NoError(s.t, os.WriteFile(abs, []byte(content), 0o644))
}

// fixedVHD creates an empty fixed VHD of mib MiB in the workspace; with
// marker set, its first sector holds that text (other content).
func (s *snippetSandbox) fixedVHD(rel string, mib int64, marker string) {
	s.t.Helper()
	abs := filepath.Join(s.ws.Root, filepath.FromSlash(rel))
	require.NoError(s.t, os.MkdirAll(filepath.Dir(abs), 0o755))
	_, err := vhd.CreateFixed(abs, mib<<20, true)
	require.NoError(s.t, err)
	if marker != "" {
		f, err := os.OpenFile(abs, os.O_WRONLY, 0)
		require.NoError(s.t, err)
		_, err = f.WriteAt([]byte(marker), 0)
		require.NoError(s.t, err)
		require.NoError(s.t, f.Close())
	}
}

// exec writes src as main.star and runs it: the validation pass against a
// dry-run copy, then the apply pass.
func (s *snippetSandbox) exec(src string, vars map[string]string) *interp.Result {
	s.t.Helper()
	return s.execFile("main.star", src, vars, true)
}

// execApply runs src without the validation pass.
func (s *snippetSandbox) execApply(src string, vars map[string]string) *interp.Result {
	s.t.Helper()
	return s.execFile("main.star", src, vars, false)
}

func (s *snippetSandbox) execFile(name, src string, vars map[string]string, validate bool) *interp.Result {
	s.t.Helper()
	s.write(name, src)
	values := map[string]starlark.Value{}
	for k, v := range vars {
		values[k] = starlark.String(v)
	}
	s.runs++
	target := interp.Target{Apply: s.apply}
	if validate {
		target.Validate = overlay.New(s.cloud)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return interp.Run(ctx, "//"+name, interp.Config{
		Workspace: s.ws, Registry: s.reg, Vars: values,
		Info: builtins.RunInfo{ID: "snippet-" + strconv.Itoa(s.runs), Time: snippetTime}, ArtifactsDir: s.artifacts,
	}, target)
}

// mustRun runs src and fails the test on an error.
func (s *snippetSandbox) mustRun(src string, vars map[string]string) *interp.Result {
	s.t.Helper()
	res := s.exec(src, vars)
	require.NoError(s.t, res.Err, "workflow failed")
	return res
}

// mustFail runs src, requires an error and returns its text.
func (s *snippetSandbox) mustFail(src string, vars map[string]string) string {
	s.t.Helper()
	res := s.exec(src, vars)
	require.Error(s.t, res.Err, "workflow should fail")
	return res.Err.Error()
}

// outputs maps a result's outputs by name.
func outputsOf(res *interp.Result) map[string]any {
	out := map[string]any{}
	for _, o := range res.Outputs {
		out[o.Name] = o.Value
	}
	return out
}

// stepsOf returns the recorded calls of one builtin.
func stepsOf(res *interp.Result, builtin string) []*builtins.Step {
	var out []*builtins.Step
	for _, s := range res.Steps {
		if s.Builtin == builtin {
			out = append(out, s)
		}
	}
	return out
}

// lastOutcome is the outcome of the last call of builtin.
func lastOutcome(t *testing.T, res *interp.Result, builtin string) cloud.Outcome {
	t.Helper()
	steps := stepsOf(res, builtin)
	require.NotEmpty(t, steps, "no %s() call recorded", builtin)
	return steps[len(steps)-1].Outcome
}

// countingProvider counts the calls that change an image version.
type countingProvider struct {
	cloud.Provider
	mu      sync.Mutex
	updates []cloud.ImageVersion
}

func (c *countingProvider) UpdateImageVersion(ctx context.Context, v cloud.ImageVersion) (*cloud.ImageVersion, error) {
	c.mu.Lock()
	c.updates = append(c.updates, v)
	c.mu.Unlock()
	return c.Provider.UpdateImageVersion(ctx, v)
}

func (c *countingProvider) updateCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.updates)
}

// builtinCaller calls builtins directly from Go on a thread attached to a
// run, without a workflow file.
type builtinCaller struct {
	thread *starlark.Thread
	env    starlark.StringDict
	run    *builtins.Run
}

func newBuiltinCaller(t *testing.T, s *snippetSandbox) *builtinCaller {
	t.Helper()
	run := &builtins.Run{Ctx: context.Background(), Provider: s.apply, Workspace: s.ws, Info: builtins.RunInfo{ID: "direct", Time: snippetTime}}
	th := &starlark.Thread{Name: "direct"}
	run.Attach(th)
	return &builtinCaller{thread: th, env: s.reg.Predeclared(), run: run}
}

// call calls a builtin with positional args and keyword pairs.
func (b *builtinCaller) call(name string, args []starlark.Value, kwargs ...starlark.Tuple) (starlark.Value, error) {
	fn, ok := b.env[name]
	if !ok {
		panic("no builtin " + name)
	}
	return starlark.Call(b.thread, fn, starlark.Tuple(args), kwargs)
}

func kw(name string, v starlark.Value) starlark.Tuple {
	return starlark.Tuple{starlark.String(name), v}
}

// firstLine is the first line of an error text.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
