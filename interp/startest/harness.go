package startest

import (
	"context"
	"encoding/json"
	"fmt"

	"go.starlark.net/starlark"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/cloud/local"
	"github.com/imgflow/imgflow/interp"
)

// harness provides run() to a test file: it runs a workflow on the current
// test's fake cloud, which persists across run() calls of one test so a
// test can prove that a rerun changes nothing.
type harness struct {
	runner   *Runner
	testFile string
	cloud    *local.Provider
	runs     int
}

func (h *harness) begin(c *local.Provider) {
	h.cloud = c
	h.runs = 0
}

func (h *harness) run(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var workflow string
	var vars *starlark.Dict
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "workflow", &workflow, "vars?", &vars); err != nil {
		return nil, err
	}
	if h.cloud == nil {
		return nil, fmt.Errorf("run() can only be called from a test_* function")
	}
	rel, _, err := h.runner.Workspace.Resolve(h.testFile, workflow)
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	values := map[string]starlark.Value{}
	if vars != nil {
		for _, kv := range vars.Items() {
			k, ok := kv[0].(starlark.String)
			if !ok {
				return nil, fmt.Errorf("run: vars keys must be strings, got %s", kv[0].Type())
			}
			values[string(k)] = kv[1]
		}
	}
	ctx, _ := thread.Local("context").(context.Context)
	if ctx == nil {
		ctx = context.Background()
	}
	h.runs++
	res := interp.Run(ctx, "//"+rel, interp.Config{
		Workspace: h.runner.Workspace, Registry: h.runner.Registry, Vars: values,
		Info:     builtins.RunInfo{ID: fmt.Sprintf("test-%d", h.runs), Time: h.runner.Time},
		Reporter: h.runner.Reporter,
	}, interp.Target{Apply: h.cloud, Validate: h.cloud.DryRun()})
	return h.result(res)
}

// result is the value run() returns: struct(ok, error, phase, calls,
// outputs, state).
func (h *harness) result(res *interp.Result) (starlark.Value, error) {
	var errVal any
	if res.Err != nil {
		errVal = res.Err.Error()
	}
	calls := make([]any, len(res.Steps))
	for i, s := range res.Steps {
		var stepErr any
		if s.Err != nil {
			stepErr = s.Err.Error()
		}
		calls[i] = builtins.MakeStruct("call", map[string]any{
			"builtin": s.Builtin, "args": s.Args, "result": s.Result, "pos": s.Pos,
			"outcome": string(s.Outcome), "error": stepErr,
		})
	}
	outputs := map[string]any{}
	for _, o := range res.Outputs {
		outputs[o.Name] = o.Value
	}
	state, err := snapshot(h.cloud)
	if err != nil {
		return nil, err
	}
	return builtins.MakeStruct("run_result", map[string]any{
		"ok": res.Err == nil, "error": errVal, "phase": res.Pass, "calls": calls, "outputs": outputs, "state": state,
	}), nil
}

// snapshot is the fake cloud's state as JSON-like values.
func snapshot(c *local.Provider) (any, error) {
	data, err := json.Marshal(c.Snapshot())
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	return v, nil
}
