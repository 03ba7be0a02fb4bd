package startest

import (
	"context"
	"encoding/json"
	"fmt"

	"go.starlark.net/starlark"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/builtins/faulthook"
	"github.com/imgflow/imgflow/cloud/faults"
	"github.com/imgflow/imgflow/cloud/local"
	"github.com/imgflow/imgflow/cloud/overlay"
	"github.com/imgflow/imgflow/internal/tenant"
	"github.com/imgflow/imgflow/interp"
	"github.com/imgflow/imgflow/journal"
)

// harness is one test's: run() runs a workflow on the test's fake cloud,
// which persists across run() calls of the test so a test can prove that
// a rerun changes nothing.
type harness struct {
	runner   *Runner
	testFile string
	cloud    *local.Provider
	// subs are the fake cloud's other subscriptions (a gallery in
	// another subscription), one tenant with cloud.
	subs *tenant.Cache
	runs int
	// journals holds the runs' journals for resume.
	journals journal.ScratchDir
}

// harnessKey is the thread-local key of the running test's harness.
const harnessKey = "startest.harness"

// runBuiltin is run(): it finds the calling test's harness on its thread.
func runBuiltin(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	h, _ := thread.Local(harnessKey).(*harness)
	if h == nil {
		return nil, fmt.Errorf("run() can only be called from a test_* function")
	}
	return h.run(thread, b, args, kwargs)
}

func (h *harness) run(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var workflow string
	var vars, faultDict *starlark.Dict
	var resume string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "workflow", &workflow, "vars?", &vars, "faults?", &faultDict, "resume?", &resume); err != nil {
		return nil, err
	}
	rel, _, err := h.runner.Workspace.Resolve(h.testFile, workflow)
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	values, err := stringKeyed(vars, "vars")
	if err != nil {
		return nil, err
	}
	faultSet, err := parseFaults(faultDict)
	if err != nil {
		return nil, err
	}
	ctx, _ := thread.Local("context").(context.Context)
	if ctx == nil {
		ctx = context.Background()
	}
	j, info, err := h.journal(ctx, resume)
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	defer j.Close()
	res := interp.Run(ctx, "//"+rel, interp.Config{
		Workspace: h.runner.Workspace, Registry: h.runner.Registry, Vars: values,
		Info: info, Reporter: h.runner.Reporter, Journal: j, Hooks: faulthook.Hooks(faultSet), Programs: &h.runner.programs,
		Subscriptions: tenant.ForPass(h.subs),
	}, interp.Target{Apply: faults.WithFaults(h.cloud, faultSet), Validate: overlay.New(h.cloud)})
	if !res.Crashed {
		status := journal.StatusSucceeded
		if res.Err != nil {
			status = journal.StatusFailed
		}
		if err := j.Append(journal.Record{Type: journal.TypeEnd, Status: status}); err != nil {
			return nil, err
		}
	}
	return h.result(res, info.ID)
}

// journal starts a new run's journal, or reopens the one to resume.
func (h *harness) journal(ctx context.Context, resume string) (*journal.File, builtins.RunInfo, error) {
	if resume != "" {
		j, err := h.journals.Open(ctx, resume)
		if err != nil {
			return nil, builtins.RunInfo{}, err
		}
		hdr := j.Header()
		if err := j.Append(journal.Record{Type: journal.TypeResume}); err != nil {
			j.Close()
			return nil, builtins.RunInfo{}, err
		}
		return j, builtins.RunInfo{ID: hdr.RunID, Time: *hdr.RunTime}, nil
	}
	h.runs++
	info := builtins.RunInfo{ID: fmt.Sprintf("test-%d", h.runs), Time: h.runner.Time}
	j, err := h.journals.Create(ctx, journal.Record{RunID: info.ID, RunTime: &info.Time})
	return j, info, err
}

func stringKeyed(d *starlark.Dict, what string) (map[string]starlark.Value, error) {
	out := map[string]starlark.Value{}
	if d == nil {
		return out, nil
	}
	for _, kv := range d.Items() {
		k, ok := kv[0].(starlark.String)
		if !ok {
			return nil, fmt.Errorf("run: %s keys must be strings, got %s", what, kv[0].Type())
		}
		out[string(k)] = kv[1]
	}
	return out, nil
}

// parseFaults reads faults={"image_version": "crash", "CreateImageVersion":
// {"status": 500, "code": "InternalError", "message": "…", "times": 1}}.
// Lowercase names are builtins, capitalised ones Provider operations.
func parseFaults(d *starlark.Dict) (*faults.Faults, error) {
	m, err := stringKeyed(d, "faults")
	if err != nil {
		return nil, err
	}
	byName := map[string]faults.Fault{}
	for name, v := range m {
		if s, ok := v.(starlark.String); ok {
			if s != "crash" {
				return nil, fmt.Errorf("run: fault %s: want \"crash\" or a dict(status=, code=, message=, times=)", name)
			}
			byName[name] = faults.Fault{Crash: true}
			continue
		}
		g, err := builtins.ToGo(v)
		spec, ok := g.(map[string]any)
		if err != nil || !ok {
			return nil, fmt.Errorf("run: fault %s: want \"crash\" or a dict(status=, code=, message=, times=)", name)
		}
		f := faults.Fault{}
		for k, val := range spec {
			switch k {
			case "status":
				f.StatusCode = int(asInt(val))
			case "code":
				f.Code, _ = val.(string)
			case "message":
				f.Message, _ = val.(string)
			case "times":
				f.Times = int(asInt(val))
			case "skip":
				f.Skip = int(asInt(val))
			default:
				return nil, fmt.Errorf("run: fault %s: unknown field %q (status, code, message, times, skip)", name, k)
			}
		}
		byName[name] = f
	}
	return faults.NewFaults(byName), nil
}

func asInt(v any) int64 {
	n, _ := v.(int64)
	return n
}

// result is the value run() returns: struct(ok, error, phase, run_id,
// crashed, calls, outputs, state, subscriptions): state is the target's
// subscription, subscriptions the others' by id.
func (h *harness) result(res *interp.Result, runID string) (starlark.Value, error) {
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
	// The other subscriptions the runs of the test reached, by id.
	others := map[string]any{}
	for _, p := range h.subs.Opened() {
		if lp, ok := p.(*local.Provider); ok {
			if others[lp.SubscriptionID()], err = snapshot(lp); err != nil {
				return nil, err
			}
		}
	}
	return builtins.MakeStruct("run_result", map[string]any{
		"ok": res.Err == nil, "error": errVal, "run_id": runID, "crashed": res.Crashed, "phase": res.Pass, "calls": calls, "outputs": outputs, "state": state,
		"subscriptions": others,
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
