package builtins_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.starlark.net/starlark"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/cloud/overlay"
	"github.com/imgflow/imgflow/interp"
	"github.com/imgflow/imgflow/packer"
)

// requestRecorder is a PackerValidator that records what packer would get.
type requestRecorder struct {
	mu   sync.Mutex
	reqs []packer.BuildRequest
	// playbook: whether the working directory had ansible/node.yml.
	playbook []bool
}

func (r *requestRecorder) Validate(_ context.Context, req packer.BuildRequest) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, req)
	if err := req.PrepareWorkDir(); err != nil {
		return err
	}
	_, err := os.Stat(filepath.Join(req.WorkDir, "ansible", "node.yml"))
	r.playbook = append(r.playbook, err == nil)
	return nil
}

const imageBuilderCwdStar = "testdata/build/imagebuilder_cwd.star"

// TestPackerBuildRunsPackerInCwd: packer runs in cwd and is given the
// template relative to it, as `packer build packer/azure/packer.json` from
// image-builder's images/capi, so the template's ./ansible/node.yml is found.
func TestPackerBuildRunsPackerInCwd(t *testing.T) {
	f := newBuildFixture(t)
	rec := &requestRecorder{}
	res := interp.Plan(context.Background(), "//"+imageBuilderCwdStar, interp.Config{
		Workspace: f.ws, Registry: f.reg, Vars: map[string]starlark.Value{}, Reporter: f.rep,
		Info: builtins.RunInfo{ID: "plan", Time: snippetTime}, PackerValidator: rec,
	}, overlay.New(f.cloud))
	require.NoError(t, res.Err)
	require.Len(t, rec.reqs, 1)
	req := rec.reqs[0]
	capi := filepath.Join(f.ws.Root, "testdata", "image-builder", "images", "capi")
	assert.Equal(t, capi, req.Mirrors, "packer runs in a directory of the build's own that mirrors cwd")
	assert.NotEqual(t, capi, req.WorkDir)
	assert.Equal(t, "packer/azure/packer.json", req.TemplatePath)
	assert.Equal(t, []bool{true}, rec.playbook, "the template's playbook, relative to packer's working directory")
	assert.NoDirExists(t, req.WorkDir, "removed after the build")
	require.Len(t, req.VarFiles, 12)
	assert.Equal(t, filepath.Join(capi, "packer", "config", "kubernetes.json"), req.VarFiles[0])
	assert.Equal(t, filepath.Join(capi, "packer", "azure", "ubuntu-2404-gen2.json"), req.VarFiles[11])

	step := stepsOf(res, "packer_build")[0]
	assert.Equal(t, "//testdata/image-builder/images/capi", step.Args["cwd"])

	f.mustRun(imageBuilderCwdStar, nil)
	assert.NotNil(t, f.cloud.Snapshot().ResourceGroups["capi-images"].Galleries["capi_gallery"].Definitions["capi-ubuntu-2404-gen2"].Versions["1.33.1"],
		"the simulation reads the template from cwd too")
}

func TestPackerBuildCwdMustBeAWorkspaceDirectory(t *testing.T) {
	f := newBuildFixture(t)
	for cwd, want := range map[string]string{
		"//testdata/image-builder/images/nope":           "packer_build: cwd testdata/image-builder/images/nope is not a directory of the workspace",
		"//testdata/image-builder/images/capi/README.md": "is not a directory",
		"//..": "outside the workspace",
	} {
		res := f.run(imageBuilderCwdStar, map[string]string{"cwd": cwd})
		require.Error(t, res.Err, cwd)
		assert.Contains(t, res.Err.Error(), want)
		assert.Contains(t, res.Err.Error(), imageBuilderCwdStar+":")
	}
	assert.Empty(t, f.cloud.Snapshot().ResourceGroups, "nothing is created")
}

// A build's directory is made in the run's own temporary place, so that
// imgflow gc can remove what a killed run left, and is removed after it.
func TestPackerBuildWorksInTheRunsTempDir(t *testing.T) {
	f := newBuildFixture(t)
	rec := &requestRecorder{}
	tmp := filepath.Join(t.TempDir(), "imgflow-run-x")
	res := interp.Plan(context.Background(), "//"+imageBuilderCwdStar, interp.Config{
		Workspace: f.ws, Registry: f.reg, Vars: map[string]starlark.Value{}, Reporter: f.rep,
		Info: builtins.RunInfo{ID: "plan", Time: snippetTime}, PackerValidator: rec, TempDir: tmp,
	}, overlay.New(f.cloud))
	require.NoError(t, res.Err)
	require.Len(t, rec.reqs, 1)
	rel, err := filepath.Rel(tmp, rec.reqs[0].WorkDir)
	require.NoError(t, err)
	assert.Regexp(t, `^imgflow-build-\d+/cwd$`, filepath.ToSlash(rel))
	entries, err := os.ReadDir(tmp)
	require.NoError(t, err)
	assert.Empty(t, entries, "the build's directory is removed")
	assert.Equal(t, filepath.Join(os.TempDir(), "imgflow-run-r1"), builtins.RunTempDir("r1"))
}
