package interp_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/cloud/local"
	"github.com/imgflow/imgflow/cloud/overlay"
	"github.com/imgflow/imgflow/internal/testharness"
	"github.com/imgflow/imgflow/interp"
)

// recorder is a Reporter that keeps prints and finished steps.
type recorder struct {
	mu     sync.Mutex
	prints []string
	steps  []string
}

func (r *recorder) StepStarted(*builtins.Step) {}
func (r *recorder) StepFinished(s *builtins.Step) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.steps = append(r.steps, s.Builtin)
}
func (r *recorder) Print(pos, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.prints = append(r.prints, pos+": "+msg)
}

type fixture struct {
	cfg   interp.Config
	cloud *local.Provider
	rep   *recorder
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	rep := &recorder{}
	cfg := testharness.New(t, "..", "test").Config(nil)
	cfg.Reporter = rep
	return &fixture{cfg: cfg, cloud: testharness.Memory(t, local.Options{}), rep: rep}
}

// run runs a workflow with the validation pass, as imgflow run does.
func (f *fixture) run(t *testing.T, file string) *interp.Result {
	t.Helper()
	return interp.Run(context.Background(), file, f.cfg, interp.Target{Apply: f.cloud, Validate: overlay.New(f.cloud)})
}

func requireInterpError(t *testing.T, err error) *interp.Error {
	t.Helper()
	require.Error(t, err)
	var ie *interp.Error
	require.True(t, errors.As(err, &ie), "want *interp.Error, got %T: %v", err, err)
	return ie
}

func TestLoadCycleIsReportedAsACycle(t *testing.T) {
	f := newFixture(t)
	res := f.run(t, "//testdata/interp/cycle_a.star")
	ie := requireInterpError(t, res.Err)
	assert.Contains(t, ie.Msg, "cycle in load graph")
	assert.Contains(t, ie.Msg, "testdata/interp/cycle_a.star → testdata/interp/cycle_b.star → testdata/interp/cycle_a.star")
	assert.Equal(t, "testdata/interp/cycle_b.star:1:1", ie.Pos)
}

func TestLoadOutsideTheWorkspaceIsRefused(t *testing.T) {
	for _, file := range []string{"outside.star", "absolute.star"} {
		t.Run(file, func(t *testing.T) {
			f := newFixture(t)
			ie := requireInterpError(t, f.run(t, "//testdata/interp/"+file).Err)
			assert.Contains(t, ie.Pos, "testdata/interp/"+file+":1:")
			assert.Regexp(t, "outside the workspace|is absolute", ie.Msg)
		})
	}
}

func TestRunawayLoopHitsTheStepLimit(t *testing.T) {
	f := newFixture(t)
	f.cfg.MaxSteps = 100_000
	ie := requireInterpError(t, f.run(t, "//testdata/interp/runaway.star").Err)
	assert.Contains(t, ie.Msg, "too many steps (limit 100000)")
	assert.Contains(t, ie.Pos, "testdata/interp/runaway.star:")
}

func TestCancellationStopsARunningWorkflow(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *interp.Result)
	go func() {
		done <- interp.Run(ctx, "//testdata/interp/runaway.star", f.cfg, interp.Target{Apply: f.cloud})
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case res := <-done:
		ie := requireInterpError(t, res.Err)
		assert.Contains(t, ie.Msg, "interrupted")
	case <-time.After(10 * time.Second):
		t.Fatal("the workflow did not stop after cancellation")
	}
}

func TestDialectRefusesWhileAndRecursion(t *testing.T) {
	f := newFixture(t)
	ie := requireInterpError(t, f.run(t, "//testdata/interp/while_loop.star").Err)
	assert.Contains(t, ie.Msg, "while")
	assert.Equal(t, "testdata/interp/while_loop.star:2:1", ie.Pos)

	ie = requireInterpError(t, f.run(t, "//testdata/interp/recursion.star").Err)
	assert.Contains(t, ie.Msg, "called recursively")
}

// A global hiding a builtin the file calls is refused at the assignment,
// not reported later as "invalid call of non-function (struct)".
func TestGlobalHidingABuiltinIsRefusedAtItsAssignment(t *testing.T) {
	f := newFixture(t)
	res := f.run(t, "//testdata/interp/shadowed_builtin.star")
	ie := requireInterpError(t, res.Err)
	assert.Equal(t, "testdata/interp/shadowed_builtin.star:3:1", ie.Pos)
	assert.Contains(t, ie.Msg, "global gallery hides the builtin gallery()")
	assert.NotContains(t, ie.Msg, "non-function")
	assert.Empty(t, f.cloud.Snapshot().ResourceGroups)
}

func TestLibraryCannotChangeTheCloudWhileLoading(t *testing.T) {
	f := newFixture(t)
	ie := requireInterpError(t, f.run(t, "//testdata/interp/loads_side_effect.star").Err)
	assert.Contains(t, ie.Msg, "resource_group() cannot run while testdata/interp/lib_with_side_effect.star is being loaded")
	assert.Equal(t, "testdata/interp/lib_with_side_effect.star:1:20", ie.Pos)
	assert.Contains(t, ie.Backtrace, "testdata/interp/loads_side_effect.star:1:1: in <toplevel>")
	assert.Empty(t, f.cloud.Snapshot().ResourceGroups)
}

func TestModulesAreCachedByResolvedPath(t *testing.T) {
	f := newFixture(t)
	res := f.run(t, "//testdata/interp/loads_twice.star")
	require.NoError(t, res.Err)
	// Two spellings of the same module, one print from the apply pass only.
	assert.Equal(t, []string{"testdata/interp/loads_twice.star:4:6: double 42 2"}, f.rep.prints)
}

func TestErrorsShowTheDeepestFrameAndTheSourceLine(t *testing.T) {
	f := newFixture(t)
	ie := requireInterpError(t, f.run(t, "//testdata/interp/deep_error.star").Err)
	assert.Equal(t, "fail: something went wrong", ie.Msg)
	assert.Equal(t, "testdata/interp/lib_ok.star:5:16", ie.Pos)
	assert.Contains(t, ie.Source, `return fail(msg)`)
	assert.Contains(t, ie.Source, "^")
	lines := strings.Split(ie.Backtrace, "\n")
	require.GreaterOrEqual(t, len(lines), 4)
	assert.Equal(t, "  testdata/interp/deep_error.star:6:5: in <toplevel>", lines[1])
	assert.Equal(t, "  testdata/interp/deep_error.star:4:14: in step", lines[2])
}

func TestValidationPassRefusesBadInputBeforeAnythingIsCreated(t *testing.T) {
	f := newFixture(t)
	res := f.run(t, "//testdata/interp/bad_gallery.star")
	ie := requireInterpError(t, res.Err)
	assert.Equal(t, "validate", res.Pass)
	assert.Equal(t, "testdata/interp/bad_gallery.star:2:12", ie.Pos)
	assert.Contains(t, ie.Msg, `invalid gallery name "flatcar-staging"`)
	assert.Contains(t, ie.Source, `g = gallery("flatcar-staging"`)
	// The resource group of line 1 was only created in the dry run.
	assert.Empty(t, f.cloud.Snapshot().ResourceGroups)
	assert.Empty(t, f.rep.steps, "no step may be reported before validation passes")
}

func TestCleanupsRunNewestFirstAfterAFailure(t *testing.T) {
	f := newFixture(t)
	res := interp.Run(context.Background(), "//testdata/interp/cleanup_order.star", f.cfg, interp.Target{Apply: f.cloud})
	ie := requireInterpError(t, res.Err)
	assert.Equal(t, "fail: boom", ie.Msg)
	require.Len(t, f.rep.prints, 2)
	assert.Contains(t, f.rep.prints[0], "second registered")
	assert.Contains(t, f.rep.prints[1], "first registered")
}

func TestAFailingCleanupFailsTheRun(t *testing.T) {
	f := newFixture(t)
	res := interp.Run(context.Background(), "//testdata/interp/cleanup_fails.star", f.cfg, interp.Target{Apply: f.cloud})
	require.Error(t, res.Err)
	assert.Contains(t, res.Err.Error(), "cleanup broken registered at testdata/interp/cleanup_fails.star:4:8 failed")
	assert.Contains(t, res.Err.Error(), "cleanup broke")
}

func TestParallelReturnsResultsInOrder(t *testing.T) {
	f := newFixture(t)
	res := f.run(t, "//testdata/interp/parallel_ok.star")
	require.NoError(t, res.Err)
	require.Len(t, res.Outputs, 1)
	assert.Equal(t, []any{"rg-a", "rg-b", "rg-c"}, res.Outputs[0].Value)
	assert.Len(t, f.cloud.Snapshot().ResourceGroups, 3)
}

func TestParallelFirstFailureCancelsTheOthersAndKeepsTheStack(t *testing.T) {
	f := newFixture(t)
	start := time.Now()
	res := interp.Run(context.Background(), "//testdata/interp/parallel_fail.star", f.cfg, interp.Target{Apply: f.cloud})
	ie := requireInterpError(t, res.Err)
	assert.Less(t, time.Since(start), 20*time.Second, "the spinning branches must be cancelled")
	assert.Contains(t, ie.Msg, "branch broke")
	assert.Equal(t, "testdata/interp/parallel_fail.star:8:9", ie.Pos)
	assert.Contains(t, ie.Backtrace, "testdata/interp/parallel_fail.star:10:9: in <toplevel>", "the parallel() call")
	assert.Contains(t, ie.Backtrace, "testdata/interp/parallel_fail.star:8:9: in broken", "the failing branch")
}

func TestParallelFreezesSharedValues(t *testing.T) {
	f := newFixture(t)
	ie := requireInterpError(t, f.run(t, "//testdata/interp/parallel_mutation.star").Err)
	assert.Contains(t, ie.Msg, "frozen")
	assert.Equal(t, "testdata/interp/parallel_mutation.star:4:18", ie.Pos)
}

func TestRecursionThroughParallelIsRefused(t *testing.T) {
	f := newFixture(t)
	res := f.run(t, "//testdata/interp/parallel_recursion.star")
	ie := requireInterpError(t, res.Err)
	assert.Contains(t, ie.Msg, "descend calls itself through parallel()")
	assert.Contains(t, ie.Pos, "testdata/interp/parallel_recursion.star:2:")
}

func TestParallelBranchesAreBounded(t *testing.T) {
	f := newFixture(t)
	res := f.run(t, "//testdata/interp/parallel_wide.star")
	ie := requireInterpError(t, res.Err)
	assert.Contains(t, ie.Msg, "100 branches could run at once here (10 in this call × 10 of the enclosing parallel() calls), more than a run's limit of 64")
	assert.Contains(t, ie.Error(), "testdata/interp/parallel_wide.star:5:")
}

func TestNestedParallelWithinTheBoundRuns(t *testing.T) {
	f := newFixture(t)
	res := f.run(t, "//testdata/interp/parallel_wide_limited.star")
	require.NoError(t, res.Err)
	require.Len(t, res.Outputs, 1)
	assert.EqualValues(t, 2025, res.Outputs[0].Value, "10 × 4 = 40 live branches at most: allowed")
}

// Runs sharing a compile cache, side by side, behave like runs that
// compile for themselves: the same prints, and errors at the same places.
func TestRunsSharingCompiledProgramsBehaveAlike(t *testing.T) {
	var programs interp.Programs
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			f := newFixture(t)
			f.cfg.Programs = &programs
			res := f.run(t, "//testdata/interp/loads_twice.star")
			assert.NoError(t, res.Err)
			assert.Equal(t, []string{"testdata/interp/loads_twice.star:4:6: double 42 2"}, f.rep.prints)

			var ie *interp.Error // not require: this is not the test's goroutine
			if assert.ErrorAs(t, f.run(t, "//testdata/interp/deep_error.star").Err, &ie) {
				assert.Equal(t, "testdata/interp/lib_ok.star:5:16", ie.Pos)
				assert.Contains(t, ie.Backtrace, "testdata/interp/deep_error.star:4:14: in step")
			}
		})
	}
	wg.Wait()
}
