package builtins_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/overlay"
	"github.com/imgflow/imgflow/interp"
)

// runHooked runs src as main.star against the sandbox with hooks, as a
// run does: the validation pass on the dry run, then the apply pass.
func runHooked(t *testing.T, s *snippetSandbox, src string, hooks builtins.CallHooks) *interp.Result {
	t.Helper()
	s.write("main.star", src)
	cfg := interp.Config{Workspace: s.ws, Registry: s.reg, Info: builtins.RunInfo{ID: "hooked", Time: snippetTime}, Hooks: hooks}
	return interp.Run(context.Background(), "//main.star", cfg, interp.Target{Apply: s.cloud, Validate: overlay.New(s.cloud)})
}

const twoGroups = `resource_group("rg1", location = "westeurope")
resource_group("rg2", location = "westeurope")
`

func TestCallHooksSeeEachBuiltinOfTheApplyPassWithItsStep(t *testing.T) {
	s := newSnippetSandbox(t)
	var calls []string
	record := func(when string) func(context.Context, string, *builtins.Step) error {
		return func(_ context.Context, builtin string, step *builtins.Step) error {
			require.NotNil(t, step)
			calls = append(calls, fmt.Sprintf("%s %s %v @%s", when, builtin, step.Args["name"], step.Pos))
			return nil
		}
	}
	res := runHooked(t, s, twoGroups, builtins.CallHooks{Before: record("before"), After: record("after")})
	require.NoError(t, res.Err)
	assert.Equal(t, []string{
		"before resource_group rg1 @main.star:1:15",
		"after resource_group rg1 @main.star:1:15",
		"before resource_group rg2 @main.star:2:15",
		"after resource_group rg2 @main.star:2:15",
	}, calls, "once per call, in the apply pass only")
}

func TestCallHookErrorStopsTheStep(t *testing.T) {
	s := newSnippetSandbox(t)
	refused := errors.New("refused by the hook")
	res := runHooked(t, s, twoGroups, builtins.CallHooks{Before: func(_ context.Context, builtin string, step *builtins.Step) error {
		if step.Args["name"] == "rg2" {
			return refused
		}
		return nil
	}})
	require.ErrorIs(t, res.Err, refused)
	assert.Contains(t, res.Err.Error(), "main.star:2")
	_, err := s.cloud.GetResourceGroup(context.Background(), "rg1")
	assert.NoError(t, err, "the step before ran")
	_, err = s.cloud.GetResourceGroup(context.Background(), "rg2")
	assert.True(t, cloud.IsNotFound(err), "the refused builtin did not run: %v", err)
	assert.False(t, res.Crashed)
}

func TestCallHookHaltStopsTheRunAsIfKilled(t *testing.T) {
	s := newSnippetSandbox(t)
	res := runHooked(t, s, twoGroups, builtins.CallHooks{After: func(_ context.Context, builtin string, step *builtins.Step) error {
		if step.Args["name"] == "rg1" {
			return fmt.Errorf("%s: %w", builtin, cloud.ErrHalt)
		}
		return nil
	}})
	require.ErrorIs(t, res.Err, cloud.ErrHalt)
	assert.True(t, res.Crashed, "a halt is reported as a crash")
	_, err := s.cloud.GetResourceGroup(context.Background(), "rg1")
	assert.NoError(t, err, "the halted builtin ran before the hook")
	_, err = s.cloud.GetResourceGroup(context.Background(), "rg2")
	assert.True(t, cloud.IsNotFound(err), "nothing after the halt runs: %v", err)
}
