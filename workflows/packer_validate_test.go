package workflows

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.starlark.net/starlark"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/cloud/overlay"
	"github.com/imgflow/imgflow/interp"
	"github.com/imgflow/imgflow/packer"
	"github.com/imgflow/imgflow/packer/packertest"
)

// buildRecorder records every packer_build request of the plans it
// watches (through planRecorder, one per plan) instead of validating it,
// with a copy of the staged files (packer_build removes its staging
// directory when it returns).
type buildRecorder struct {
	t      *testing.T
	mu     sync.Mutex
	builds []recordedBuild
	seen   map[string]bool
	plans  int // plans made so far (planAll numbers the next from here)
}

type recordedBuild struct {
	workflow string
	plan     int // the plan's index: builds are reported in plan order
	req      packer.BuildRequest
	// validated says err is packer validate's, run while the build's own
	// directory existed.
	validated bool
	err       error
}

// planRecorder is one plan's packer validator: its builds go to rec under
// the plan's name and index.
type planRecorder struct {
	rec      *buildRecorder
	workflow string
	plan     int
}

func (p planRecorder) Validate(_ context.Context, req packer.BuildRequest) error {
	r := p.rec
	vars := make(map[string]string, len(req.Vars))
	for k, v := range req.Vars {
		vars[k] = v
	}
	if dir, ok := vars[packer.FilesDirVar]; ok {
		kept := r.t.TempDir()
		if err := os.CopyFS(kept, os.DirFS(dir)); err != nil {
			return err
		}
		vars[packer.FilesDirVar] = kept
	}
	req.Vars = vars
	b := recordedBuild{workflow: p.workflow, plan: p.plan, req: req}
	if req.Mirrors != "" {
		// One validation per checkout template: packer takes seconds.
		key := req.Mirrors + "\x00" + filepath.Base(req.TemplatePath)
		r.mu.Lock()
		seen := r.seen[key]
		if r.seen == nil {
			r.seen = map[string]bool{}
		}
		r.seen[key] = true
		r.mu.Unlock()
		if seen {
			return nil
		}
		// The build's own directory (the checkout mirrored, with stand-ins
		// for generated uploads) is gone when packer_build returns:
		// validate now, and record the template by its checkout path.
		if _, err := exec.LookPath("packer"); err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			b.validated, b.err = true, (&packer.Runner{KillGrace: 5 * time.Second}).Validate(ctx, req)
		}
		if rel, err := filepath.Rel(req.WorkDir, req.TemplatePath); err == nil && !strings.HasPrefix(rel, "..") {
			b.req.TemplatePath = filepath.Join(req.Mirrors, rel)
		}
		b.req.WorkDir = req.Mirrors
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.builds = append(r.builds, b)
	return nil
}

// planJob is one plan the validate test makes.
type planJob struct {
	name, file string
	vars       map[string]starlark.Value
}

// planAll plans the jobs side by side, as many at a time as there are
// cores (each plan waits mostly on its packer validate runs), recording
// their builds in rec; it fails the test, in job order, for a plan that
// fails.
func planAll(t *testing.T, ws *builtins.Workspace, rec *buildRecorder, jobs []planJob) {
	t.Helper()
	errs := make([]error, len(jobs))
	base := rec.plans
	rec.plans += len(jobs)
	sem := make(chan struct{}, max(2, runtime.NumCPU()))
	var wg sync.WaitGroup
	for i, j := range jobs {
		clouds := overlay.New(newPlanCloud(t))
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			res := interp.Plan(context.Background(), "//workflows/"+j.file, interp.Config{
				Workspace: ws, Registry: builtins.NewRegistry(), Vars: j.vars,
				Info: builtins.RunInfo{ID: "plan", Time: runTime}, PackerValidator: planRecorder{rec: rec, workflow: j.name, plan: base + i},
			}, clouds)
			errs[i] = res.Err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "plan of %s", jobs[i].name)
	}
}

// TestPackerValidatesEveryTemplateWithWorkflowVars plans every workflow,
// records each packer_build (template, vars, var-files, only) and runs the
// real `packer validate` on it: the vars the workflows pass must satisfy
// packer, not only imgflow's model of the template. Every template under
// artifacts/packer/ must be validated through at least one workflow.
func TestPackerValidatesEveryTemplateWithWorkflowVars(t *testing.T) {
	rec := &buildRecorder{t: t}
	ws := openWorkspace(t)
	var jobs []planJob
	for _, file := range workflowFiles(t) {
		jobs = append(jobs, planJob{name: file, file: file, vars: planVars(t, strings.TrimSuffix(file, ".star"))})
	}
	planAll(t, ws, rec, jobs)
	// linux.star's templates differ by cell of the AKS matrix: plan each.
	t.Setenv(linuxMatrixUATokenEnv, "ua-token-for-the-validate-test")
	jobs = nil
	for _, c := range linuxMatrix {
		jobs = append(jobs, planJob{name: "linux.star " + c.sku, file: "linux.star", vars: c.vars()})
	}
	// AgentBaker's templates, through every job of the fixture checkout.
	for _, job := range pipelineJobs(t, filepath.Join(ws.Root, agentbakerFixture)) {
		jobs = append(jobs, planJob{name: "linux.star " + job, file: "linux.star", vars: agentbakerJobVars(job)})
	}
	planAll(t, ws, rec, jobs)
	// In plan order, whichever plan's packer run ended first.
	sort.SliceStable(rec.builds, func(i, j int) bool { return rec.builds[i].plan < rec.builds[j].plan })
	require.NotEmpty(t, rec.builds, "no workflow calls packer_build")

	packertest.Require(t)
	runner := &packer.Runner{KillGrace: 5 * time.Second}
	checked := map[string]bool{} // workspace-relative template paths
	outcomes := make([]func(), len(rec.builds))
	// Two at a time: each run is mostly packer starting its plugins.
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	start := time.Now()
	for i, b := range rec.builds {
		tpl, err := filepath.Rel(ws.Root, packer.ResolvePath(b.req.WorkDir, b.req.TemplatePath))
		require.NoError(t, err)
		tpl = filepath.ToSlash(tpl)
		checked[tpl] = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			err := b.err
			if !b.validated {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				err = runner.Validate(ctx, b.req)
			}
			outcomes[i] = func() { reportValidate(t, tpl, b, err) }
		}()
	}
	wg.Wait()
	for _, report := range outcomes {
		report() // in workflow order, whatever order packer finished in
	}
	t.Logf("%d packer validate runs in %s", len(rec.builds), time.Since(start).Round(time.Millisecond))

	templates := packerTemplates(t, filepath.Join(ws.Root, "artifacts", "packer"))
	require.NotEmpty(t, templates)
	fixture, err := filepath.Glob(filepath.Join(ws.Root, agentbakerFixture, "vhdbuilder", "packer", "vhd-image-builder-*.json"))
	require.NoError(t, err)
	require.Len(t, fixture, 9, "the fixture checkout's templates, one per packer.mk case")
	templates = append(templates, fixture...)
	for _, tpl := range templates {
		rel, err := filepath.Rel(ws.Root, tpl)
		require.NoError(t, err)
		if !checked[filepath.ToSlash(rel)] {
			t.Errorf("%s is built by no workflow, so packer never validated it with real vars: use it in a workflow (with testdata/plans/<workflow>.vars.json for its params) or delete it", rel)
		}
	}
}

// reportValidate logs or fails one recorded build's packer validate.
func reportValidate(t *testing.T, tpl string, b recordedBuild, err error) {
	t.Helper()
	var nv *packer.NotValidatedError
	switch {
	case errors.As(err, &nv):
		t.Logf("%s (built by %s): checked by imgflow's model only (%s)", tpl, b.workflow, nv.Reason)
	case err != nil:
		t.Errorf("packer validate rejects %s with the vars %s passes:\n%v", tpl, b.workflow, err)
	default:
		t.Logf("%s (built by %s, only=%v): packer validate passed", tpl, b.workflow, b.req.Only)
	}
}

// packerTemplates lists the packer templates in dir: legacy JSON and HCL2.
func packerTemplates(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() && (strings.HasSuffix(name, ".json") || strings.HasSuffix(name, ".pkr.hcl")) && !strings.HasSuffix(name, ".pkrvars.json") {
			out = append(out, filepath.Join(dir, name))
		}
	}
	sort.Strings(out)
	return out
}
