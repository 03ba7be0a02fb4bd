package builtins_test

import (
	"context"
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

// stubValidator stands in for packer.Runner.Validate: it records each
// request, checks that its staged files exist while packer would read
// them, and returns err.
type stubValidator struct {
	t    *testing.T
	err  error
	mu   sync.Mutex
	reqs []packer.BuildRequest
}

func (v *stubValidator) Validate(_ context.Context, req packer.BuildRequest) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.reqs = append(v.reqs, req)
	dir := req.Vars[packer.FilesDirVar]
	require.NotEmpty(v.t, dir, "the staged files are passed")
	assert.DirExists(v.t, dir, "staged files exist while packer validates")
	return v.err
}

const vhdMarketplaceStar = "testdata/build/vhd_marketplace.star"

// plan plans file on the fixture's cloud with validator.
func (f *buildFixture) plan(file string, validator builtins.PackerValidator) *interp.Result {
	f.t.Helper()
	return interp.Plan(context.Background(), "//"+file, interp.Config{
		Workspace: f.ws, Registry: f.reg, Vars: map[string]starlark.Value{}, Reporter: f.rep,
		Info: builtins.RunInfo{ID: "plan", Time: snippetTime}, PackerValidator: validator,
	}, overlay.New(f.cloud))
}

func TestPlanValidatesEachDistinctPackerBuildOnce(t *testing.T) {
	f := newBuildFixture(t)
	stub := &stubValidator{t: t}
	once := builtins.PackerValidateOnce(stub)
	require.NoError(t, f.plan(vhdMarketplaceStar, once).Err)
	require.NoError(t, f.plan(vhdMarketplaceStar, once).Err)
	require.Len(t, stub.reqs, 1, "the second plan stages its files in another directory, but they are the same files")
	req := stub.reqs[0]
	assert.Equal(t, "artifacts/packer/vhd-marketplace.json", req.TemplatePath)
	assert.Equal(t, "22_04-lts", req.Vars["img_sku"])
	assert.Equal(t, f.ws.Root, req.Mirrors)

	// Another value is another request.
	res := interp.Plan(context.Background(), "//"+vhdMarketplaceStar, interp.Config{
		Workspace: f.ws, Registry: f.reg, Vars: map[string]starlark.Value{"os_disk_size_gb": starlark.String("2")},
		Info: builtins.RunInfo{ID: "plan", Time: snippetTime}, PackerValidator: once,
	}, overlay.New(f.cloud))
	require.NoError(t, res.Err)
	require.Len(t, stub.reqs, 2)
	assert.Equal(t, "2", stub.reqs[1].Vars["os_disk_size_gb"])
}

func TestPlanReportsPackerValidateErrorsAtTheCall(t *testing.T) {
	f := newBuildFixture(t)
	abs := f.ws.Root + "/artifacts/packer/vhd-marketplace.json"
	stub := &stubValidator{t: t, err: &packer.ValidateError{Template: abs, ExitCode: 1, Errors: []string{
		"Error: Failed to prepare build: \"azure-arm\"\n\n1 error occurred:\n\t* unknown configuration key: '\"bogus\"'",
	}}}
	res := f.plan(vhdMarketplaceStar, stub)
	require.Error(t, res.Err)
	msg := res.Err.Error()
	assert.Contains(t, msg, vhdMarketplaceStar+":9:", "at the packer_build call")
	assert.Contains(t, msg, "packer validate artifacts/packer/vhd-marketplace.json failed (exit status 1):")
	assert.Contains(t, msg, "unknown configuration key: '\"bogus\"'")
	assert.Contains(t, msg, "change the template, or the vars, var_files or only of this packer_build")
	assert.NotContains(t, msg, abs, "the template is named relative to the workspace")
}

func TestPlanNotesTemplatesPackerCannotValidate(t *testing.T) {
	f := newBuildFixture(t)
	stub := &stubValidator{t: t, err: &packer.NotValidatedError{Template: "/x/t.pkr.hcl", Reason: "needs azure plugin 2.x: packer init"}}
	require.NoError(t, f.plan(vhdMarketplaceStar, stub).Err)
	assert.Contains(t, f.rep.text(), vhdMarketplaceStar+":9:")
	assert.Contains(t, f.rep.text(), "packer_build artifacts/packer/vhd-marketplace.json: not run: checked by imgflow's model only (needs azure plugin 2.x: packer init)")
}

func TestRunDoesNotValidatePacker(t *testing.T) {
	f := newBuildFixture(t)
	stub := &stubValidator{t: t}
	res := interp.Run(context.Background(), "//"+vhdMarketplaceStar, interp.Config{
		Workspace: f.ws, Registry: f.reg, Info: builtins.RunInfo{ID: "run", Time: snippetTime}, PackerValidator: stub,
	}, interp.Target{Apply: f.apply, Validate: overlay.New(f.cloud)})
	require.NoError(t, res.Err)
	assert.Empty(t, stub.reqs, "a run's passes simulate (validation) or run (apply) packer itself")
}
