package main

import (
	"context"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"
	"sync"

	"go.starlark.net/starlark"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/interp"
)

// runMany runs several workflows side by side (imgflow run -j N a.star
// b.star …) on one target, each with its own journal and its lines
// prefixed with its name. Each workflow takes the --vars it declares; a
// --var no workflow declares is an error. It fails when any workflow fails.
func runMany(ctx context.Context, e *env, ws *builtins.Workspace, tgt *target, files []string, values map[string]starlark.Value, jobs int, maxSteps uint64) error {
	if jobs < 1 {
		jobs = 1
	}
	e = e.synchronized() // the workflows print side by side
	var (
		mu       sync.Mutex
		failed   []string
		declared = map[string]bool{}
		wg       sync.WaitGroup
		sem      = make(chan struct{}, jobs)
	)
	reg := builtins.NewRegistry()
	for _, f := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			res, id, err := runOneOfMany(ctx, e, ws, tgt, reg, f, values, maxSteps)
			mu.Lock()
			defer mu.Unlock()
			if res != nil {
				for _, p := range res.Params {
					declared[p.Name] = true
				}
			}
			if err == nil && res.Err != nil {
				err = fmt.Errorf("%v\n(resume with: imgflow run --resume %s)", res.Err, id)
			}
			if err != nil {
				failed = append(failed, f)
				e.errorf("[%s] %v", name(f), err)
			}
		}()
	}
	wg.Wait()
	var unknown []string
	for v := range values {
		if !declared[v] {
			unknown = append(unknown, v)
		}
	}
	sort.Strings(unknown)
	if len(unknown) > 0 && len(failed) == 0 {
		e.errorf("unknown --var %s: none of the workflows declares it", strings.Join(unknown, ", "))
		return exitCode(1)
	}
	fmt.Fprintf(e.stdout, "%d workflow(s) succeeded, %d failed\n", len(files)-len(failed), len(failed))
	if len(failed) > 0 {
		return exitCode(1)
	}
	return nil
}

// runOneOfMany runs one workflow of a runMany with its own journal and a
// reporter prefixing its lines.
func runOneOfMany(ctx context.Context, e *env, ws *builtins.Workspace, tgt *target, reg *builtins.Registry, f string, values map[string]starlark.Value, maxSteps uint64) (*interp.Result, string, error) {
	own := make(map[string]starlark.Value, len(values))
	for k, v := range values {
		own[k] = v
	}
	store, err := tgt.journals()
	if err != nil {
		return nil, "", err
	}
	j, info, file, err := openJournal(ctx, ws, store, "", []string{f}, own, tgt.name)
	if err != nil {
		return nil, "", err
	}
	defer j.Close()
	rep := newConsoleReporter(e)
	rep.prefix = "[" + name(f) + "] "
	fmt.Fprintf(e.stdout, "%simgflow run %s %s\n", rep.prefix, file, rep.dim(fmt.Sprintf("(target %s, run %s)", tgt.name, info.ID)))
	// Each run writes its artifacts into its own directory (--artifacts
	// takes one workflow).
	artifactsDir, err := artifactsDirOf("", tgt.stateDir, info.ID)
	if err != nil {
		return nil, info.ID, err
	}
	// What a killed run left there, imgflow gc removes.
	defer os.RemoveAll(builtins.RunTempDir(info.ID))
	res := interp.Run(ctx, "//"+file, interp.Config{
		Workspace: ws, Registry: reg, Vars: own, Info: info, MaxSteps: maxSteps, Reporter: rep, Journal: j, Packer: tgt.packer, AnyVars: true,
		ArtifactsDir: artifactsDir, TempDir: builtins.RunTempDir(info.ID), Subscriptions: tgt.subscriptions(),
	}, interp.Target{Apply: tgt.provider, Validate: tgt.dryRun()})
	if err := endJournal(ctx, j, res); err != nil {
		return res, info.ID, err
	}
	if res.Err == nil {
		for _, o := range res.Outputs {
			fmt.Fprintf(e.stdout, "%s%s = %s\n", rep.prefix, o.Name, jsonText(o.Value))
		}
		for _, a := range res.Artifacts {
			fmt.Fprintf(e.stdout, "%sartifact %s %s\n", rep.prefix, a.Name, a.Path)
		}
	}
	return res, info.ID, nil
}

// name is a workflow's short name for prefixes: its file name without .star.
func name(file string) string {
	return strings.TrimSuffix(path.Base(file), ".star")
}
