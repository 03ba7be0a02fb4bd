package workflows

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/cloud/overlay"
	"github.com/imgflow/imgflow/interp"
	"github.com/imgflow/imgflow/packer"
	"github.com/imgflow/imgflow/packer/packertest"
)

// buildRecorder is the plan's packer validator: it records every
// packer_build request instead of validating it, with a copy of the
// staged files (packer_build removes its staging directory when it
// returns).
type buildRecorder struct {
	t        *testing.T
	workflow string
	mu       sync.Mutex
	builds   []recordedBuild
	seen     map[string]bool
}

type recordedBuild struct {
	workflow string
	req      packer.BuildRequest
	// validated says err is packer validate's, run while the build's own
	// directory existed.
	validated bool
	err       error
}

func (r *buildRecorder) Validate(_ context.Context, req packer.BuildRequest) error {
	vars := make(map[string]string, len(req.Vars))
	for k, v := range req.Vars {
		vars[k] = v
	}
	if dir, ok := vars[packer.FilesDirVar]; ok {
		kept := r.t.TempDir()
		require.NoError(r.t, os.CopyFS(kept, os.DirFS(dir)))
		vars[packer.FilesDirVar] = kept
	}
	req.Vars = vars
	b := recordedBuild{workflow: r.workflow, req: req}
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

// TestPackerValidatesEveryTemplateWithWorkflowVars plans every workflow,
// records each packer_build (template, vars, var-files, only) and runs the
// real `packer validate` on it: the vars the workflows pass must satisfy
// packer, not only imgflow's model of the template. Every template under
// artifacts/packer/ must be validated through at least one workflow.
func TestPackerValidatesEveryTemplateWithWorkflowVars(t *testing.T) {
	rec := &buildRecorder{t: t}
	ws := openWorkspace(t)
	for _, file := range workflowFiles(t) {
		rec.workflow = file
		res := interp.Plan(context.Background(), "//workflows/"+file, interp.Config{
			Workspace: ws, Registry: builtins.NewRegistry(), Vars: planVars(t, strings.TrimSuffix(file, ".star")),
			Info: builtins.RunInfo{ID: "plan", Time: runTime}, PackerValidator: rec,
		}, overlay.New(newPlanCloud(t)))
		require.NoError(t, res.Err, "plan of %s", file)
	}
	// linux.star's templates differ by cell of the AKS matrix: plan each.
	t.Setenv(linuxMatrixUATokenEnv, "ua-token-for-the-validate-test")
	for _, c := range linuxMatrix {
		rec.workflow = "linux.star " + c.sku
		res := interp.Plan(context.Background(), "//workflows/linux.star", interp.Config{
			Workspace: ws, Registry: builtins.NewRegistry(), Vars: c.vars(),
			Info: builtins.RunInfo{ID: "plan", Time: runTime}, PackerValidator: rec,
		}, overlay.New(newPlanCloud(t)))
		require.NoError(t, res.Err, "plan of linux.star %s", c.sku)
	}
	// AgentBaker's templates, through every job of the fixture checkout.
	for _, job := range pipelineJobs(t, filepath.Join(ws.Root, agentbakerFixture)) {
		rec.workflow = "linux.star " + job
		res := interp.Plan(context.Background(), "//workflows/linux.star", interp.Config{
			Workspace: ws, Registry: builtins.NewRegistry(), Vars: agentbakerJobVars(job),
			Info: builtins.RunInfo{ID: "plan", Time: runTime}, PackerValidator: rec,
		}, overlay.New(newPlanCloud(t)))
		require.NoError(t, res.Err, "plan of linux.star %s", job)
	}
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
