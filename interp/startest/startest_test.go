package startest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/internal/localpacker"
	"github.com/imgflow/imgflow/interp/startest"
)

// RunFiles runs files side by side yet reports them in the given order,
// with the same results as running them one by one.
func TestRunFilesKeepsTheOrderOfFiles(t *testing.T) {
	ws, err := localpacker.NewWorkspace("../..")
	require.NoError(t, err)
	r := startest.NewRunner(ws)
	files, err := r.Discover([]string{"workflows"})
	require.NoError(t, err)
	require.Greater(t, len(files), 2)
	files = files[:3]

	var got []string
	for results := range r.RunFiles(context.Background(), files, 3) {
		require.NotEmpty(t, results)
		got = append(got, results[0].File)
		for _, res := range results {
			assert.Empty(t, res.Failures, "%s:%s", res.File, res.Name)
		}
	}
	assert.Equal(t, files, got)
}

// Tests of one file run side by side, yet each file's results come in
// name order and complete; a file that fails to load is one "<load>"
// result; run() is refused outside a test function.
func TestRunFilesReportsEveryTestOfEveryFileInOrder(t *testing.T) {
	root := t.TempDir()
	write := func(name, src string) {
		require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(src), 0o644))
	}
	var many strings.Builder
	for i := range 12 {
		fmt.Fprintf(&many, "def test_%02d():\n    assert.eq(%d, %d)\n", 11-i, i, i)
	}
	many.WriteString("def test_fails():\n    assert.eq(1, 2)\n")
	write("a_test.star", many.String())
	write("b_test.star", "def test_x(:\n")
	write("c_test.star", "run(\"//w.star\")\n")
	write("d_test.star", "def test_only():\n    pass\n")
	ws, err := localpacker.NewWorkspace(root)
	require.NoError(t, err)
	r := startest.NewRunner(ws)
	files, err := r.Discover([]string{"."})
	require.NoError(t, err)

	var got [][]startest.Result
	for results := range r.RunFiles(context.Background(), files, 4) {
		got = append(got, results)
	}
	require.Len(t, got, 4)
	var names []string
	for _, res := range got[0] {
		assert.Equal(t, "a_test.star", res.File)
		names = append(names, res.Name)
		assert.Equal(t, res.Name == "test_fails", !res.Passed(), res.Name)
	}
	want := []string{}
	for i := range 12 {
		want = append(want, fmt.Sprintf("test_%02d", i))
	}
	assert.Equal(t, append(want, "test_fails"), names)
	require.Len(t, got[1], 1)
	assert.Equal(t, "<load>", got[1][0].Name)
	require.Len(t, got[2], 1)
	assert.Contains(t, strings.Join(got[2][0].Failures, "\n"), "run() can only be called from a test_* function")
	require.Len(t, got[3], 1)
	assert.True(t, got[3][0].Passed())
}
