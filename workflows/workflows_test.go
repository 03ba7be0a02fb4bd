// Package workflows holds imgflow's workflows; this test runs their
// *_test.star files from go test.
package workflows

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/interp/startest"
)

func TestStarlarkTests(t *testing.T) {
	ws, err := builtins.NewWorkspace("..")
	require.NoError(t, err)
	r := startest.NewRunner(ws)
	files, err := r.Discover([]string{"workflows"})
	require.NoError(t, err)
	require.NotEmpty(t, files, "no *_test.star files found")
	for _, f := range files {
		for _, res := range r.RunFile(context.Background(), f) {
			t.Run(f+":"+res.Name, func(t *testing.T) {
				for _, msg := range res.Failures {
					t.Error(msg)
				}
			})
		}
	}
}
