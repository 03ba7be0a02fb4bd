package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/cloud/local"
	"github.com/imgflow/imgflow/interp"
)

func cmdRun(ctx context.Context, e *env, args []string) error {
	fs := newFlagSet("run", e)
	vars := varsFlag{}
	fs.Var(vars, "var", "set a workflow param: `name=value` (repeatable)")
	varsFile := fs.String("vars-file", "", "JSON `file` of param values")
	root := fs.String("root", ".", "workspace root `dir`: load() and file reads stay inside it")
	stateDir := fs.String("state", "", "local target state `dir` (default ROOT/.imgflow)")
	outputs := fs.String("outputs", "", "write the workflow outputs as JSON to `file`")
	target := fs.String("target", "local", "where to run: local or azure")
	maxSteps := fs.Uint64("max-steps", interp.DefaultMaxSteps, "Starlark step limit per thread")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return exitCode(2)
	}
	if len(pos) != 1 {
		return fmt.Errorf("run takes one workflow file, got %d: imgflow run workflows/flatcar.star --var name=value", len(pos))
	}
	values, err := loadVars(*varsFile, vars)
	if err != nil {
		return err
	}
	ws, err := builtins.NewWorkspace(*root)
	if err != nil {
		return err
	}
	file, err := workspacePath(ws, pos[0])
	if err != nil {
		return err
	}
	if *target != "local" {
		if *target == "azure" {
			return errors.New("the azure target is not available in this version yet (it comes with the Azure provider); run on the local target: --target local")
		}
		return fmt.Errorf("unknown target %q: use local or azure", *target)
	}
	if *stateDir == "" {
		*stateDir = filepath.Join(ws.Root, ".imgflow")
	}
	p, err := local.Open(*stateDir, local.Options{})
	if err != nil {
		return err
	}
	defer p.Close()

	info := newRunInfo()
	rep := newConsoleReporter(e)
	fmt.Fprintf(e.stdout, "%s %s %s\n", e.paint()("imgflow run"), file, rep.dim(fmt.Sprintf("(target local, run %s)", info.ID)))
	res := interp.Run(ctx, "//"+file, interp.Config{
		Workspace: ws, Registry: builtins.NewRegistry(), Vars: values, Info: info, MaxSteps: *maxSteps, Reporter: rep,
	}, interp.Target{Apply: p, Validate: p.DryRun()})
	if res.Err != nil {
		if res.Pass == "validate" {
			e.errorf("%v\n%s", res.Err, rep.dim("(found while validating the workflow: nothing was changed)"))
		} else {
			e.errorf("%v", res.Err)
		}
		return exitCode(1)
	}
	rep.printOutputs(res.Outputs)
	if *outputs != "" {
		if err := writeOutputs(*outputs, res.Outputs); err != nil {
			return err
		}
	}
	return nil
}

// workspacePath makes a command-line path workspace-relative.
func workspacePath(ws *builtins.Workspace, path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	rel := ws.Rel(abs)
	if filepath.IsAbs(rel) {
		return "", fmt.Errorf("%s is outside the workspace %s: run imgflow from the workspace, or pass --root", path, ws.Root)
	}
	return rel, nil
}

func newRunInfo() builtins.RunInfo {
	now := time.Now().UTC().Truncate(time.Second)
	var b [3]byte
	_, _ = rand.Read(b[:])
	return builtins.RunInfo{ID: now.Format("20060102-150405") + "-" + hex.EncodeToString(b[:]), Time: now}
}

func writeOutputs(path string, outputs []builtins.Output) error {
	m := map[string]any{}
	for _, o := range outputs {
		m[o.Name] = o.Value
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write outputs: %w", err)
	}
	return nil
}
