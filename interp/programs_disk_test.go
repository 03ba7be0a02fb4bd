package interp

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/imgflow/imgflow/internal/cachetrim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.starlark.net/starlark"
)

// diskEntries lists the compiled modules stored in dir.
func diskEntries(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// A Programs with a Dir stands for one process: the next one, with the
// same binary (Salt) and the same file, loads the compiled module instead
// of compiling it, and it runs as the compiled one did, param() names
// and error positions included.
func TestProgramsOnDiskServeTheNextProcess(t *testing.T) {
	dir := t.TempDir()
	param := starlark.NewBuiltin("param", func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
		return starlark.None, nil
	})
	env := starlark.StringDict{"param": param}
	src := []byte("n = param(\"count\", default = 2)\n\ndef f():\n    return 1 // 0\n")

	first := &Programs{Dir: dir, Salt: "imgflow A"}
	p := first.compile("lib/w.star", src, env)
	require.NoError(t, p.err)
	assert.EqualValues(t, 1, first.compiled.Load())
	require.Len(t, diskEntries(t, dir), 1)

	next := &Programs{Dir: dir, Salt: "imgflow A"}
	q := next.compile("lib/w.star", src, env)
	require.NoError(t, q.err)
	assert.EqualValues(t, 0, next.compiled.Load(), "found on disk, not compiled")
	assert.Equal(t, p.static, q.static, "param() names come with it")

	g, err := q.exec(&starlark.Thread{}, env)
	require.NoError(t, err)
	_, err = starlark.Call(&starlark.Thread{}, g["f"], nil, nil)
	var evalErr *starlark.EvalError
	require.ErrorAs(t, err, &evalErr)
	assert.Contains(t, evalErr.Backtrace(), "lib/w.star:4:14", "positions survive the round trip")
}

// Anything compiling depends on is in an entry's name: a changed input
// compiles anew (and is stored beside the old entry) rather than running
// the stale module.
func TestProgramsOnDiskChangedInputCompilesAnew(t *testing.T) {
	dir := t.TempDir()
	env := starlark.StringDict{"param": starlark.None}
	src := []byte("x = 1\n")
	(&Programs{Dir: dir, Salt: "imgflow A"}).compile("w.star", src, env)

	for name, change := range map[string]struct {
		salt, file string
		src        []byte
		env        starlark.StringDict
	}{
		"edited source":        {"imgflow A", "w.star", []byte("x = 2\n"), env},
		"another binary":       {"imgflow B", "w.star", src, env},
		"another file":         {"imgflow A", "v.star", src, env},
		"other predeclared":    {"imgflow A", "w.star", src, starlark.StringDict{"param": starlark.None, "x2": starlark.None}},
		"whitespace in source": {"imgflow A", "w.star", []byte("x = 1 \n"), env},
	} {
		t.Run(name, func(t *testing.T) {
			c := &Programs{Dir: dir, Salt: change.salt}
			p := c.compile(change.file, change.src, change.env)
			require.NoError(t, p.err)
			assert.EqualValues(t, 1, c.compiled.Load(), "compiled, not taken from disk")
			g, err := p.exec(&starlark.Thread{}, change.env)
			require.NoError(t, err)
			want := "1"
			if name == "edited source" {
				want = "2"
			}
			assert.Equal(t, want, g["x"].String())
		})
	}
}

// A file that does not compile is never stored (its errors are always
// this binary's), and an entry that does not decode is compiled again
// and replaced.
func TestProgramsOnDiskErrorsAndBadEntries(t *testing.T) {
	dir := t.TempDir()
	env := starlark.StringDict{}
	bad := (&Programs{Dir: dir, Salt: "s"}).compile("bad.star", []byte("x = (\n"), env)
	require.Error(t, bad.err)
	assert.Contains(t, bad.err.Error(), "bad.star:2:1")
	assert.Empty(t, diskEntries(t, dir))

	src := []byte("x = 3\n")
	(&Programs{Dir: dir, Salt: "s"}).compile("ok.star", src, env)
	entries := diskEntries(t, dir)
	require.Len(t, entries, 1)
	require.NoError(t, os.WriteFile(filepath.Join(dir, entries[0]), []byte("\x05torn"), 0o644))

	c := &Programs{Dir: dir, Salt: "s"}
	p := c.compile("ok.star", src, env)
	require.NoError(t, p.err)
	assert.EqualValues(t, 1, c.compiled.Load())
	g, err := p.exec(&starlark.Thread{}, env)
	require.NoError(t, err)
	assert.Equal(t, "3", g["x"].String())
	assert.NotNil(t, readDisk(filepath.Join(dir, entries[0])), "rewritten whole")
}

// A module loaded from disk is marked used, so that the cache's daily
// trim (cachetrim) keeps the entries plans still load.
func TestProgramsOnDiskMarkWhatTheyLoadUsed(t *testing.T) {
	dir := t.TempDir()
	env := starlark.StringDict{}
	src := []byte("x = 1\n")
	require.NoError(t, (&Programs{Dir: dir, Salt: "imgflow A"}).compile("w.star", src, env).err)
	names := diskEntries(t, dir)
	require.Len(t, names, 1)
	entry := filepath.Join(dir, names[0])
	long := time.Now().Add(-cachetrim.MaxAge)
	require.NoError(t, os.Chtimes(entry, long, long))

	next := &Programs{Dir: dir, Salt: "imgflow A"}
	require.NoError(t, next.compile("w.star", src, env).err)
	require.EqualValues(t, 0, next.compiled.Load(), "found on disk")
	info, err := os.Stat(entry)
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now(), info.ModTime(), time.Minute)
}
