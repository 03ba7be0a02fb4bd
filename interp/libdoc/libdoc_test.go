package libdoc_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/interp/libdoc"
)

func TestParseDocumentsWhatTheModuleExports(t *testing.T) {
	src := `"""Naming rules.

    A second paragraph, indented in the source.
"""

PREFIX = "img"

def image_name(channel, arch = "amd64",
               suffix = None):
    """The image name of a channel.

    Multi-line docs are dedented.
    """
    return _join(PREFIX, channel, arch)

def _join(*parts):
    """Private: not documented."""
    return "-".join(parts)

def helper():
    """Public but not exported by the struct."""
    pass

naming = struct(PREFIX = PREFIX, image_name = image_name)
`
	m, err := libdoc.Parse("lib/naming.star", []byte(src))
	require.NoError(t, err)
	assert.Equal(t, "naming", m.Name)
	assert.Equal(t, "Naming rules.\n\nA second paragraph, indented in the source.", m.Doc)
	assert.Equal(t, []string{"PREFIX"}, m.Constants)
	require.Len(t, m.Funcs, 1, "only the struct's functions are exported")
	assert.Equal(t, `naming.image_name(channel, arch = "amd64", suffix = None)`, m.Funcs[0].Signature)
	assert.Equal(t, "The image name of a channel.\n\nMulti-line docs are dedented.", m.Funcs[0].Doc)

	ref := libdoc.Reference([]libdoc.Module{m})
	assert.Contains(t, ref, "### `lib/naming.star`")
	assert.Contains(t, ref, `load("//lib/naming.star", "naming")`)
	assert.Contains(t, ref, "#### `naming.image_name(channel, arch = \"amd64\", suffix = None)`")
	assert.NotContains(t, ref, "helper")
	assert.NotContains(t, ref, "Private")
}

func TestParseWithoutAStructExportsPublicFunctions(t *testing.T) {
	m, err := libdoc.Parse("lib/temporary.star", []byte(`"""Temporaries."""

def _delete(r):
    pass

def temporary(*resources):
    """Deletes each resource when the workflow ends."""
    pass
`))
	require.NoError(t, err)
	require.Len(t, m.Funcs, 1)
	assert.Equal(t, "temporary(*resources)", m.Funcs[0].Signature)
	assert.Empty(t, m.Constants)
}

func TestParseWithDocumentsTheFunctionsAFacadeLoads(t *testing.T) {
	naming := `"""Naming."""

PREFIX = "img"

def image_name(*, channel, arch):
    """The image name.

    Args:
      channel: the channel.
      arch: the architecture.
    """
    return PREFIX
`
	var read []string
	reader := func(module string) ([]byte, error) {
		read = append(read, module)
		require.Equal(t, "//lib/img/naming.star", module)
		return []byte(naming), nil
	}
	m, err := libdoc.ParseWith("lib/img.star", []byte(`"""Images."""

load("//lib/img/naming.star", "PREFIX", name = "image_name")

img = struct(PREFIX = PREFIX, image_name = name)
`), reader)
	require.NoError(t, err)
	assert.Equal(t, []string{"PREFIX"}, m.Constants)
	require.Len(t, m.Funcs, 1)
	assert.Equal(t, "img.image_name(*, channel, arch)", m.Funcs[0].Signature)
	assert.Equal(t, "The image name.\n\nArgs:\n  channel: the channel.\n  arch: the architecture.", m.Funcs[0].Doc)
	assert.Equal(t, []string{"//lib/img/naming.star"}, read, "a loaded module is read once")

	m, err = libdoc.Parse("lib/img.star", []byte("load(\"//lib/img/naming.star\", \"image_name\")\nimg = struct(image_name = image_name)\n"))
	require.NoError(t, err)
	assert.Equal(t, []string{"image_name"}, m.Constants, "without a reader, a loaded name is not followed")
}

func TestReferenceRendersArgsAndReturns(t *testing.T) {
	ref := libdoc.Reference([]libdoc.Module{{Path: "lib/img.star", Name: "img", Funcs: []libdoc.Func{{
		Signature: "img.name(*, channel, arch)",
		Doc:       "The image name.\n\nArgs:\n  channel: the channel,\n    stable or beta.\n  arch: the architecture.\n\nReturns:\n  The name,\n  lower case.",
	}}}})
	assert.Contains(t, ref, "The image name.\n\n**Args:**\n\n- `channel`: the channel,\n  stable or beta.\n- `arch`: the architecture.\n\n**Returns:**\n\n  The name,\n  lower case.\n\n")
}

func TestSpliceNeedsTheMarkers(t *testing.T) {
	_, err := libdoc.Splice("no markers", "x")
	assert.Error(t, err)
	out, err := libdoc.Splice("a\n"+libdoc.Begin+"\nold\n"+libdoc.End+"\n", "new\n")
	require.NoError(t, err)
	assert.Equal(t, "a\n"+libdoc.Begin+"\n\nnew\n"+libdoc.End+"\n", out)
}
