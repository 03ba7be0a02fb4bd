package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/interp"
)

// A failing run in CI: the run is one log group, and the error is an
// annotation on the workflow line that asked for the failing call.
func TestCIFailingRunIsGroupedAndAnnotated(t *testing.T) {
	tests := []struct {
		name, env, value     string
		groupStart, groupEnd string
		annotation           string
		newline              string
	}{
		{
			name: "Azure Pipelines", env: "TF_BUILD", value: "True",
			groupStart: "##[group]imgflow run testdata/cli/bad_gallery_name.star (target local, run ",
			groupEnd:   "##[endgroup]", newline: "%0D%0A",
			annotation: "##vso[task.logissue type=error;sourcepath=testdata/cli/bad_gallery_name.star;linenumber=4;columnnumber=12]",
		},
		{
			name: "GitHub Actions", env: "GITHUB_ACTIONS", value: "true",
			groupStart: "::group::imgflow run testdata/cli/bad_gallery_name.star (target local, run ",
			groupEnd:   "::endgroup::", newline: "%0A",
			annotation: "::error file=testdata/cli/bad_gallery_name.star,line=4,col=12::",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(tt.env, tt.value)
			res := failingRun(t, "bad_gallery_name.star")
			require.Equal(t, 1, res.code, res.String())
			lines := strings.Split(strings.TrimSuffix(res.stdout, "\n"), "\n")
			require.GreaterOrEqual(t, len(lines), 3, res.stdout)
			assert.True(t, strings.HasPrefix(lines[0], tt.groupStart), res.stdout)
			assert.Equal(t, tt.groupEnd, lines[1], res.stdout)
			// One annotation, one line, outside the group.
			assert.True(t, strings.HasPrefix(lines[2], tt.annotation), res.stdout)
			assert.Len(t, lines, 3, res.stdout)
			assert.Contains(t, lines[2], `invalid gallery name "flatcar-staging"`)
			assert.Contains(t, lines[2], tt.newline+"Traceback (most recent call last):"+tt.newline)
			assert.NotContains(t, lines[2], "\n")
			// The plain error is still on stderr.
			assert.Contains(t, res.stderr, "error: testdata/cli/bad_gallery_name.star:4:")
		})
	}
}

// A successful run in CI: grouped steps, plain outputs after the group,
// and with --export-outputs the outputs as pipeline variables.
func TestCIExportOutputs(t *testing.T) {
	t.Run("Azure Pipelines", func(t *testing.T) {
		t.Setenv("TF_BUILD", "True")
		res := runParams(t, t.TempDir(), "--var", "name=a;b]c", "--export-outputs")
		require.Equal(t, 0, res.code, res.String())
		assert.True(t, strings.HasPrefix(res.stdout, "##[group]imgflow run testdata/cli/params.star"), res.stdout)
		assert.Contains(t, res.stdout, "##[endgroup]\nOutputs:\n")
		assert.Contains(t, res.stdout, "##vso[task.setvariable variable=name]a;b]c\n")
		assert.Contains(t, res.stdout, "##vso[task.setvariable variable=regions][\"westeurope\"]\n")
		assert.Contains(t, res.stdout, "##vso[task.setvariable variable=count]1\n")
	})
	t.Run("GitHub Actions", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "github_output")
		require.NoError(t, os.WriteFile(out, []byte("earlier=1\n"), 0o644))
		t.Setenv("GITHUB_ACTIONS", "true")
		t.Setenv("GITHUB_OUTPUT", out)
		res := runParams(t, t.TempDir(), "--var", "name=x", "--export-outputs")
		require.Equal(t, 0, res.code, res.String())
		assert.True(t, strings.HasPrefix(res.stdout, "::group::imgflow run testdata/cli/params.star"), res.stdout)
		assert.Contains(t, res.stdout, "::endgroup::\nOutputs:\n")
		data, err := os.ReadFile(out)
		require.NoError(t, err)
		assert.Equal(t, "earlier=1\nname=x\ncount=1\nenabled=false\nregions=[\"westeurope\"]\ncount_type=int\nenabled_type=bool\n", string(data))
	})
	t.Run("elsewhere", func(t *testing.T) {
		state := t.TempDir()
		res := runParams(t, state, "--var", "name=x", "--export-outputs")
		require.Equal(t, 1, res.code, res.String())
		assert.Contains(t, res.stderr, "not running in Azure Pipelines (TF_BUILD) or GitHub Actions")
		assert.Empty(t, res.stdout, "nothing ran")
	})
}

// Outside CI nothing changes: no markers.
func TestNoCIMarkersOutsideCI(t *testing.T) {
	res := failingRun(t, "bad_gallery_name.star")
	assert.NotContains(t, res.stdout, "##")
	assert.NotContains(t, res.stdout, "::")
	res = runParams(t, t.TempDir(), "--var", "name=x")
	require.Equal(t, 0, res.code, res.String())
	assert.True(t, strings.HasPrefix(res.stdout, "imgflow run testdata/cli/params.star"), res.stdout)
}

func TestCIPlanIsGroupedAndAnnotated(t *testing.T) {
	t.Setenv("GITHUB_ACTIONS", "true")
	root := repoRoot(t)
	res := imgflow(t, "plan", "--root", root, "--state", t.TempDir(), filepath.Join(root, "testdata", "cli", "bad_gallery_name.star"))
	require.Equal(t, 1, res.code, res.String())
	assert.True(t, strings.HasPrefix(res.stdout, "::group::imgflow plan testdata/cli/bad_gallery_name.star"), res.stdout)
	assert.Contains(t, res.stdout, "::endgroup::\n::error file=testdata/cli/bad_gallery_name.star,line=4,col=12::")
}

// The escapes of each system: GitHub %25 %0D %0A (and %3A %2C in
// properties), Azure Pipelines %0D%0A for a line break (and %3B %5D in
// properties).
func TestCIEscapes(t *testing.T) {
	assert.Equal(t, "50%25 done%0Anext: a,b%0D", ghData("50% done\nnext: a,b\r"))
	assert.Equal(t, "C%3A%2Cx%0A", ghProperty("C:,x\n"))
	assert.Equal(t, "line 1%0D%0Aline 2%0D%0Aline 3", adoData("line 1\r\nline 2\nline 3"))
	assert.Equal(t, "a%3Bb%5D%0D%0A", adoProperty("a;b]\n"))

	err := errors.Join(
		&interp.Error{Pos: "workflows/x.star:3:5", Msg: "bad: 50%", Backtrace: "Traceback (most recent call last):\n  workflows/x.star:3:5: in <toplevel>"},
		errors.New("cleanup c registered at workflows/x.star:9:1 failed"),
	)
	var b strings.Builder
	ciGitHub.annotateError(&b, err)
	assert.Equal(t, "::error file=workflows/x.star,line=3,col=5::bad: 50%25%0ATraceback (most recent call last):%0A  workflows/x.star:3:5: in <toplevel>\n"+
		"::error::cleanup c registered at workflows/x.star:9:1 failed\n", b.String())
	b.Reset()
	ciAzure.annotateError(&b, err)
	assert.Equal(t, "##vso[task.logissue type=error;sourcepath=workflows/x.star;linenumber=3;columnnumber=5]bad: 50%%0D%0ATraceback (most recent call last):%0D%0A  workflows/x.star:3:5: in <toplevel>\n"+
		"##vso[task.logissue type=error]cleanup c registered at workflows/x.star:9:1 failed\n", b.String())
	b.Reset()
	ciNone.annotateError(&b, err)
	assert.Empty(t, b.String())

	assert.Equal(t, "k=v\n", githubOutput("k", "v"))
	assert.Equal(t, "k<<IMGFLOW_EOF_\na\nIMGFLOW_EOF\nIMGFLOW_EOF_\n", githubOutput("k", "a\nIMGFLOW_EOF"))
}

func TestDetectCI(t *testing.T) {
	assert.Equal(t, ciNone, detectCI())
	t.Setenv("GITHUB_ACTIONS", "false")
	assert.Equal(t, ciNone, detectCI())
	t.Setenv("GITHUB_ACTIONS", "true")
	assert.Equal(t, ciGitHub, detectCI())
	t.Setenv("TF_BUILD", "True")
	assert.Equal(t, ciAzure, detectCI())
}
