package lint

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPublicFunctionsOfMoreThanThreeParametersAreKeywordOnly(t *testing.T) {
	l := newTestLinter(t, nil)
	l.Warnings = []string{KeywordOnly}
	src := `"""Functions."""

def three(a, b, c = 1):
    return a

def four(a, b, c, d = 1):
    return a

def keywords(*, a, b, c, d):
    return a

def subject_first(a, *, b, c, d):
    return a

def varargs(*args, a, b, c, d):
    return a

def _private(a, b, c, d):
    return a
`
	assert.Equal(t, []string{
		`lib/defs.star:6:1: keyword-only: four() takes 4 parameters, 4 of them positionally: make them keyword-only, def four(*, a, b, c, …), and name them at every call`,
		`lib/defs.star:12:1: keyword-only: subject_first() takes 4 parameters, 1 of them positionally: make them keyword-only, def subject_first(*, a, b, c, …), and name them at every call`,
	}, strs(l.Source("lib/defs.star", []byte(src))))
	assert.Empty(t, l.Source("workflows/helpers_test.star", []byte(src)), "a test file's helpers are no API")
}

func TestDocstringArgsWantsEveryParameterAndTheResult(t *testing.T) {
	l := newTestLinter(t, nil)
	l.Warnings = []string{DocstringArgs}
	src := `"""Functions."""

def documented(*, name, arch = "amd64", **kwargs):
    """The image name.

    Args:
      name: the name,
        over two lines.
      arch: the architecture.
      **kwargs: more.

    Returns:
      The name.
    """
    return name

def undocumented(a):
    return a

def no_args(name, arch):
    """The image name.

    Returns:
      The name.
    """
    return name

def missing_one(name, arch):
    """The image name.

    Args:
      name: the name.
      gen: not a parameter.
    """
    pass

def no_returns(name):
    """The image name.

    Args:
      name: the name.
    """
    return name

def nothing_returned():
    """Only fails."""
    fail("no")

def _private(a):
    return a
`
	assert.Equal(t, []string{
		`lib/docs.star:17:1: docstring-args: undocumented() has no docstring: start its body with """summary, Args:, Returns:"""`,
		`lib/docs.star:21:5: docstring-args: no_args()'s docstring has no Args: section: document name, arch, one indented "name: what it is" line each`,
		`lib/docs.star:29:5: docstring-args: missing_one()'s docstring does not document arch under Args:`,
		`lib/docs.star:29:5: docstring-args: missing_one()'s docstring documents gen, which is not a parameter`,
		`lib/docs.star:38:5: docstring-args: no_returns() returns a value its docstring does not describe: add a Returns: section`,
	}, strs(l.Source("lib/docs.star", []byte(src))))
}

func TestDocstringArgsIsOptional(t *testing.T) {
	assert.NotContains(t, DefaultWarnings(), DocstringArgs)
	ws, err := ParseWarnings("+docstring-args")
	assert.NoError(t, err)
	assert.Contains(t, ws, DocstringArgs)
	assert.Contains(t, DefaultWarnings(), KeywordOnly)
}
