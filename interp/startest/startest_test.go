package startest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/interp/startest"
)

// RunFiles runs files side by side yet reports them in the given order,
// with the same results as running them one by one.
func TestRunFilesKeepsTheOrderOfFiles(t *testing.T) {
	ws, err := builtins.NewWorkspace("../..")
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
