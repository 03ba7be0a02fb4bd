//go:build unix

package main

import (
	"net/http"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud/azure/fakearm"
)

// A run on the Azure target keeps its journal in the local state dir's
// runs/ unless --journal says otherwise. Nothing locks that state dir on
// the Azure target (the subscription is the state), so the journal's own
// flock is what keeps two resumes of one run from both changing the cloud:
// the second is refused before its first step.
func TestTwoResumesOfOneAzureRunCannotBothProceed(t *testing.T) {
	srv := fakearm.NewServer(t, fakearm.Options{})
	var env []string
	for k, v := range srv.Env() {
		t.Setenv(k, v) // for the in-process imgflow
		env = append(env, k+"="+v)
	}
	bin := buildImgflow(t)
	root, file := workspaceWith(t, applySpinWorkflow)
	state := t.TempDir()
	azureRun := func(extra ...string) []string {
		return append([]string{"run", "--root", root, "--state", state, "--target", "azure", "--max-steps", "100000000000"}, extra...)
	}

	first := startImgflow(t, bin, env, azureRun(file)...)
	first.waitFor("spinning")
	cancelled := first.signal(syscall.SIGTERM)
	require.Equal(t, 143, cancelled.code, cancelled.stderr)
	runID := cancelled.runID

	resumed := startImgflow(t, bin, env, azureRun("--resume", runID)...)
	resumed.waitFor("(target azure, run " + runID + ")")
	requestsBefore := len(srv.Requests())

	second := imgflow(t, azureRun("--resume", runID)...)
	require.Equal(t, 1, second.code, second.String())
	assert.Contains(t, second.stderr, "run "+runID+" is in use by another imgflow process")
	for _, r := range srv.Requests()[requestsBefore:] {
		assert.Equal(t, http.MethodGet, r.Method, "a refused resume changes nothing: %s %s", r.Method, r.Path)
	}
	assert.NotContains(t, second.stdout, "(target azure, run", "refused before the workflow ran")

	resumed.stillRunning("the refused resume ended")
	ended := resumed.signal(syscall.SIGTERM)
	assert.Equal(t, 143, ended.code, ended.stderr)
	assert.Contains(t, ended.stderr, "resume it with: imgflow run --resume "+runID)
}
