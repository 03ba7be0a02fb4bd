package workflows

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud/faults"
	"github.com/imgflow/imgflow/interp"
	"github.com/imgflow/imgflow/journal"
)

// TestAResumeAfterTheCleanupsRanCompletes fails each cloud-changing step
// of capz (and flatcar_capi) so the run's cleanups run, as after Ctrl-C,
// then resumes it: `runs` lists such a run as resumable, and the resume
// must complete as an uninterrupted run does. Before, it replayed the
// staging images the cleanups had deleted and failed on them.
func TestAResumeAfterTheCleanupsRanCompletes(t *testing.T) {
	for _, name := range []string{"capz", "flatcar_capi"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			file, vars := "workflows/"+name+".star", planVars(t, name)
			reference := newHarness(t, file, vars)
			uninterrupted := reference.run("ref", false, nil)
			require.NoError(t, uninterrupted.Err)
			for i, c := range cloudChanges(uninterrupted.Steps) {
				if c.cleanup {
					continue
				}
				t.Run(fmt.Sprintf("%d-%s", i, c.builtin), func(t *testing.T) {
					h := newHarness(t, file, vars)
					failed := h.run("ref", false, map[string]faults.Fault{c.builtin: {StatusCode: 500, Code: "InternalServerError", Message: "injected", Skip: c.occurrence, Times: 1}})
					require.Error(t, failed.Err)
					require.False(t, failed.Crashed)
					h.end("ref", failed)
					resumed := h.run("ref", true, nil)
					require.NoError(t, resumed.Err)
					assert.Equal(t, outputsOf(uninterrupted), outputsOf(resumed))
				})
			}
		})
	}
}

// end journals how a run ended, as imgflow run does.
func (h *harness) end(id string, res *interp.Result) {
	h.t.Helper()
	j, err := journal.Open(h.journals, id)
	require.NoError(h.t, err)
	defer j.Close()
	require.NoError(h.t, j.Append(journal.Record{Type: journal.TypeEnd, Status: journal.StatusFailed, Error: res.Err.Error()}))
}
