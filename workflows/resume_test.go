package workflows

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.starlark.net/starlark"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/builtins/faulthook"
	"github.com/imgflow/imgflow/cloud/faults"
	"github.com/imgflow/imgflow/cloud/local"
	"github.com/imgflow/imgflow/cloud/overlay"
	"github.com/imgflow/imgflow/interp"
	"github.com/imgflow/imgflow/journal"
)

// resumedOutcome is how the step that crashed reports itself when the
// resumed run reaches it again: ensures find what it made; a command()
// step (a tool build, not a cloud resource) runs again, and so does a
// test_vm (its VM is gone: the checks run on a new one).
func resumedOutcome(builtin string) string {
	switch builtin {
	case "command":
		return "ran"
	case "test_vm":
		return "passed"
	}
	return "exists"
}

var runTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// harness runs one workflow repeatedly against one fake cloud.
type harness struct {
	t        *testing.T
	ws       *builtins.Workspace
	reg      *builtins.Registry
	cloud    *local.Provider
	journals string
	file     string
	vars     map[string]starlark.Value
}

// newHarness makes a harness for the workspace-relative workflow file run
// with vars.
func newHarness(t *testing.T, file string, vars map[string]starlark.Value) *harness {
	p, err := local.NewMemory(local.Options{Now: func() time.Time { return runTime }, Rand: rand.New(rand.NewSource(1))})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return &harness{t: t, ws: openWorkspace(t), reg: builtins.NewRegistry(), cloud: p, journals: t.TempDir(), file: "//" + file, vars: vars}
}

// run runs (or resumes) the run id with the given faults.
func (h *harness) run(id string, resume bool, injected map[string]faults.Fault) *interp.Result {
	h.t.Helper()
	var j *journal.File
	var err error
	if resume {
		j, err = journal.Open(h.journals, id)
	} else {
		t := runTime
		j, err = journal.Create(h.journals, journal.Record{RunID: id, RunTime: &t})
	}
	require.NoError(h.t, err)
	defer j.Close()
	fs := faults.NewFaults(injected)
	res := interp.Run(context.Background(), h.file, interp.Config{
		Workspace: h.ws, Registry: h.reg, Vars: h.vars, Info: builtins.RunInfo{ID: id, Time: runTime}, Journal: j, Hooks: faulthook.Hooks(fs),
		Programs: &compiled,
	}, interp.Target{Apply: faults.WithFaults(h.cloud, fs), Validate: overlay.New(h.cloud)})
	return res
}

// state is the cloud's state with the platform-generated GUIDs masked,
// so two clouds that did the same things compare equal.
func (h *harness) state() string {
	guid := regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	return guid.ReplaceAllString(h.rawState(), "<guid>")
}

// rawState is the cloud's state with its GUIDs: where two blobs differ
// only by one (captures of two runs), masking would merge their keys.
func (h *harness) rawState() string {
	data, err := json.Marshal(h.cloud.Snapshot())
	require.NoError(h.t, err)
	return string(data)
}

type change struct {
	builtin    string
	occurrence int  // how many calls of the same builtin came before
	cleanup    bool // made by a cleanup of lib/temporary.star
}

func cloudChanges(steps []*builtins.Step) []change {
	var out []change
	seen := map[string]int{}
	for _, s := range steps {
		if s.Effect == builtins.Changes {
			out = append(out, change{s.Builtin, seen[s.Builtin], strings.HasPrefix(s.Pos, "lib/temporary.star:")})
			seen[s.Builtin]++
		}
	}
	return out
}

func outcomes(steps []*builtins.Step) []string {
	var out []string
	for _, s := range steps {
		if s.Effect == builtins.Changes {
			out = append(out, s.Builtin+":"+string(s.Outcome))
		}
	}
	return out
}

// TestCrashAtEveryStepThenResume crashes a run of every workflow right
// after each cloud-changing step (the change made, not journaled), resumes
// it, and checks the resumed run completes the same as an uninterrupted
// one without redoing any journaled step. Each workflow runs with the vars
// of its plan (planVars).
func TestCrashAtEveryStepThenResume(t *testing.T) {
	for _, file := range workflowFiles(t) {
		t.Run(file, func(t *testing.T) {
			t.Parallel() // each workflow has its own clouds and journals
			crashAtEveryStepThenResume(t, "workflows/"+file, planVars(t, strings.TrimSuffix(file, ".star")))
		})
	}
}

// crashAtEveryStepThenResume is TestCrashAtEveryStepThenResume for one
// workspace-relative workflow file run with vars.
func crashAtEveryStepThenResume(t *testing.T, file string, vars map[string]starlark.Value) {
	reference := newHarness(t, file, vars)
	uninterrupted := reference.run("ref", false, nil)
	require.NoError(t, uninterrupted.Err)
	changes := cloudChanges(uninterrupted.Steps)
	require.NotEmpty(t, changes)
	for i, c := range changes {
		t.Run(fmt.Sprintf("%d-%s", i, c.builtin), func(t *testing.T) {
			h := newHarness(t, file, vars)
			crashed := h.run("ref", false, map[string]faults.Fault{c.builtin: {Crash: true, Skip: c.occurrence, Times: 1}})
			require.True(t, crashed.Crashed, "the run must crash at step %d: %v", i, crashed.Err)

			resumed := h.run("ref", true, nil)
			require.NoError(t, resumed.Err)
			// Before the crash: the workflow's steps replay from the
			// journal; the cleanups that finished do not run again.
			var want []string
			for k := 0; k < i; k++ {
				if !changes[k].cleanup {
					want = append(want, changes[k].builtin+":replayed")
				}
			}
			want = append(want, changes[i].builtin+":"+resumedOutcome(changes[i].builtin))
			got := outcomes(resumed.Steps)
			require.Len(t, got, len(want)+len(changes)-i-1)
			assert.Equal(t, want, got[:len(want)], "what the crashed attempt did must not run again; the crashed step was made and the resume finds it")
			assert.Equal(t, outputsOf(uninterrupted), outputsOf(resumed))
			assert.Equal(t, reference.state(), h.state())
		})
	}
}

// TestInjectedFailureAtEveryStepKeepsWhatExisted fails each cloud-changing
// step of a rerun over a finished run of every workflow (with the vars of
// its plan): the rerun fails with the error, and nothing that existed
// before is deleted or changed.
func TestInjectedFailureAtEveryStepKeepsWhatExisted(t *testing.T) {
	for _, file := range workflowFiles(t) {
		t.Run(file, func(t *testing.T) {
			t.Parallel() // each workflow has its own cloud and journals
			h := newHarness(t, "workflows/"+file, planVars(t, strings.TrimSuffix(file, ".star")))
			first := h.run("first", false, nil)
			require.NoError(t, first.Err)
			// The steps of a rerun, which can be fewer than the first
			// run's: a packer build whose version exists is not redone, so
			// its temporaries are not deleted again.
			rerun := h.run("rerun", false, nil)
			require.NoError(t, rerun.Err)
			before := h.rawState()
			for i, c := range cloudChanges(rerun.Steps) {
				res := h.run(fmt.Sprintf("fail-%d", i), false, map[string]faults.Fault{c.builtin: {StatusCode: 500, Code: "InternalServerError", Message: "injected", Skip: c.occurrence, Times: 1}})
				if !assert.Error(t, res.Err, "step %d (%s) must fail", i, c.builtin) {
					continue
				}
				assert.Contains(t, res.Err.Error(), "InternalServerError")
				assert.Equal(t, "apply", res.Pass)
				// A rerun is a new run: what it names after its run id (a
				// captured version, an import) is new, and may stay.
				assertContains(t, fmt.Sprintf("state after a failed rerun at step %d", i), decodeJSON(t, before), decodeJSON(t, h.rawState()))
			}
		})
	}
}

func decodeJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(s), &m))
	return m
}

func outputsOf(res *interp.Result) string {
	m := map[string]any{}
	for _, o := range res.Outputs {
		m[o.Name] = o.Value
	}
	data, _ := json.Marshal(m)
	return regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`).ReplaceAllString(string(data), "<guid>")
}
