// Package workflows holds imgflow's workflows; this test runs their
// *_test.star files from go test.
package workflows

import (
	"context"
	"path"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/interp/startest"
)

// TestStarlarkTests runs every *_test.star file of workflows/, each
// test_* function as a subtest of its file. Files run side by side, as
// imgflow test runs them: each test has its own fake cloud and journals.
func TestStarlarkTests(t *testing.T) {
	r := startest.NewRunner(openWorkspace(t))
	files, err := r.Discover([]string{"workflows"})
	require.NoError(t, err)
	require.NotEmpty(t, files, "no *_test.star files found")
	for _, f := range files {
		t.Run(path.Base(f), func(t *testing.T) {
			t.Parallel()
			for _, res := range r.RunFile(context.Background(), f) {
				t.Run(res.Name, func(t *testing.T) {
					for _, msg := range res.Failures {
						t.Error(msg)
					}
				})
			}
		})
	}
}
