package interp

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.starlark.net/starlark"
)

func TestProgramsCompileEachSourceOnce(t *testing.T) {
	var c Programs
	env := starlark.StringDict{"param": starlark.None, "gallery": starlark.None}
	src := []byte("n = param(\"count\")\nm = param(\"mode\")\ng = gallery\n")

	first := c.compile("w.star", src, env)
	require.NoError(t, first.err)
	assert.Equal(t, []string{"count", "mode"}, first.static.names, "param() names, from the same parse")
	assert.Same(t, first, c.compile("w.star", append([]byte(nil), src...), env), "same name, source and names: the cached entry")

	edited := c.compile("w.star", append(src, "x = 1\n"...), env)
	assert.NotSame(t, first, edited, "an edited file compiles anew")
	assert.NotSame(t, first, c.compile("other.star", src, env), "another file")
	more := starlark.StringDict{"param": starlark.None, "gallery": starlark.None, "assert": starlark.None}
	assert.NotSame(t, first, c.compile("w.star", src, more), "other predeclared names resolve differently")

	// Without a cache every call compiles.
	var none *Programs
	assert.NotSame(t, none.compile("w.star", src, env), none.compile("w.star", src, env))
}

func TestProgramsKeepErrors(t *testing.T) {
	var c Programs
	env := starlark.StringDict{}
	bad := c.compile("bad.star", []byte("x = (\n"), env)
	require.Error(t, bad.err)
	assert.Contains(t, bad.err.Error(), "bad.star:2:1")
	_, err := bad.exec(&starlark.Thread{}, env)
	assert.Equal(t, bad.err, err)

	undefined := c.compile("undefined.star", []byte("x = nope\n"), env)
	require.Error(t, undefined.err, "resolving is part of compiling")
	assert.Contains(t, undefined.err.Error(), "undefined: nope")
}

// Every run of a cached program gets its own globals, frozen like
// starlark.ExecFileOptions leaves them.
func TestProgramsRunsDoNotShareGlobals(t *testing.T) {
	var c Programs
	env := starlark.StringDict{}
	p := c.compile("m.star", []byte("l = []\nl.append(1)\n"), env)
	g1, err := p.exec(&starlark.Thread{}, env)
	require.NoError(t, err)
	g2, err := p.exec(&starlark.Thread{}, env)
	require.NoError(t, err)
	assert.Equal(t, "[1]", g1["l"].String())
	assert.Equal(t, "[1]", g2["l"].String(), "the second run starts from a fresh list")
	assert.Error(t, g1["l"].(*starlark.List).Append(starlark.None), "frozen")
}

// The key holds the source's hash, not the source: an edit that keeps
// its length (one character) is another entry and runs as edited.
func TestProgramsSameLengthEditRunsAsEdited(t *testing.T) {
	var c Programs
	env := starlark.StringDict{}
	first := c.compile("w.star", []byte("x = 1\n"), env)
	edited := c.compile("w.star", []byte("x = 2\n"), env)
	require.NoError(t, edited.err)
	assert.NotSame(t, first, edited)
	assert.EqualValues(t, 2, c.compiled.Load())
	g, err := edited.exec(&starlark.Thread{}, env)
	require.NoError(t, err)
	assert.Equal(t, "2", g["x"].String())
}
