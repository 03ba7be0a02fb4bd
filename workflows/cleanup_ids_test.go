package workflows

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud/faults"
	"github.com/imgflow/imgflow/journal"
)

// managedImages lists the managed images left in the harness's cloud.
func (h *harness) managedImages() []string {
	var names []string
	for _, rg := range h.cloud.Snapshot().ResourceGroups {
		for _, img := range rg.Images {
			names = append(names, img.Name)
		}
	}
	return names
}

// pendingCleanups are the cleanups run id's journal holds that never ran:
// what imgflow gc runs for a dead run.
func (h *harness) pendingCleanups(id string) []journal.Cleanup {
	h.t.Helper()
	j, err := journal.Open(h.journals, id)
	require.NoError(h.t, err)
	defer j.Close()
	return journal.PendingCleanups(j.Records())
}

// TestResumeBetweenParallelCleanupsLeaksNothing stops flatcar_capi with
// two Kubernetes versions between the two branches' temporary() deletions
// (the first done and journaled, the second failing as a killed process
// would leave it), then resumes it. Both branches register their cleanup at the same line,
// in whichever order the scheduler runs them; the resumed run must still
// know which one ran. Repeated, since the order differs from run to run.
func TestResumeBetweenParallelCleanupsLeaksNothing(t *testing.T) {
	vars := map[string]string{"kubernetes_versions": "1.31.1,1.32.2", "image_builder": "//testdata/image-builder"}
	for i := range 20 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			h := newHarness(t, "workflows/flatcar_capi.star", stringVars(vars))
			stopped := h.run("capi", false, map[string]faults.Fault{"delete": {StatusCode: 500, Code: "Injected", Skip: 1, Times: 1}})
			require.ErrorContains(t, stopped.Err, "Injected", "the second deletion must fail")
			require.Len(t, h.managedImages(), 1, "the first deletion happened, the second did not")
			resumed := h.run("capi", true, nil)
			require.NoError(t, resumed.Err)
			assert.Empty(t, h.managedImages())
		})
	}
}

// TestGCRemovesTheTemporaryResourcesOfAKilledRun kills flatcar_capi at its
// last replicate(), after both branches registered their packer build's
// managed image as temporary(), and runs what gc runs for a dead run: the
// journal's pending cleanups.
func TestGCRemovesTheTemporaryResourcesOfAKilledRun(t *testing.T) {
	h := newHarness(t, "workflows/flatcar_capi.star", stringVars(map[string]string{"kubernetes_versions": "1.31.1,1.32.2", "image_builder": "//testdata/image-builder"}))
	crashed := h.run("capi", false, map[string]faults.Fault{"replicate": {Crash: true, Skip: 1, Times: 1}})
	require.True(t, crashed.Crashed, crashed.Err)
	require.Len(t, h.managedImages(), 2, "the packer builds' managed images exist until the run's cleanups")
	pending := h.pendingCleanups("capi")
	var names []string
	for _, c := range pending {
		names = append(names, c.Name)
	}
	require.Len(t, pending, 2, "both temporary() deletions are journaled: %s", strings.Join(names, ", "))
	for _, c := range pending {
		require.NoError(t, h.reg.RunCleanup(t.Context(), h.cloud, c))
	}
	assert.Empty(t, h.managedImages())
}
