package workflows

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.starlark.net/starlark"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/cloud/overlay"
	"github.com/imgflow/imgflow/interp"
	"github.com/imgflow/imgflow/release"
)

// agentbakerFixture is the checkout-shaped fixture the AKS tests build from.
const agentbakerFixture = "testdata/agentbaker"

var pipelineJobRE = regexp.MustCompile(`(?m)^\s*- job:\s*([A-Za-z0-9_]+)\s*$`)

// pipelineJobs are the job names of a checkout's release pipeline YAML,
// read here independently of lib/agentbaker.star's reader.
func pipelineJobs(t *testing.T, checkout string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(checkout, ".pipelines", ".vsts-vhd-builder-release.yaml"))
	require.NoError(t, err)
	var out []string
	for _, m := range pipelineJobRE.FindAllStringSubmatch(string(data), -1) {
		out = append(out, m[1])
	}
	sort.Strings(out)
	return out
}

// TestAKSReleaseHasEveryJobOfThePipeline: releases/aks.star lists exactly
// the jobs of the fixture checkout's pipeline YAML, each run by
// workflows/linux.star with the checkout and the job's name, under the
// job's name as id.
func TestAKSReleaseHasEveryJobOfThePipeline(t *testing.T) {
	r, err := release.Load(context.Background(), openWorkspace(t), "releases/aks.star")
	require.NoError(t, err)
	var jobs []string
	for _, j := range r.Jobs {
		assert.Equal(t, "workflows/linux.star", j.Workflow)
		assert.Equal(t, "//third_party/AgentBaker", j.Vars["agentbaker"])
		assert.Equal(t, strings.ToLower(j.Vars["job"]), j.ID)
		jobs = append(jobs, j.Vars["job"])
	}
	sort.Strings(jobs)
	want := pipelineJobs(t, filepath.Join(workspaceRoot(), agentbakerFixture))
	assert.Len(t, want, 32, "the fixture has the 32 jobs of AgentBaker's pipeline")
	assert.Equal(t, want, jobs)
}

// TestAgentBakerJobsScriptListsTheDifference: the script users run on
// their checkout names the pipeline jobs a release file lacks and the
// ones it has that the pipeline does not, and exits 1.
func TestAgentBakerJobsScriptListsTheDifference(t *testing.T) {
	root := workspaceRoot()
	script := filepath.Join(root, "scripts", "agentbaker-jobs.sh")
	fixture := filepath.Join(root, agentbakerFixture)
	out, err := exec.Command(script, fixture).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "has the 32 jobs")

	data, err := os.ReadFile(filepath.Join(root, "releases", "aks.star"))
	require.NoError(t, err)
	edited := strings.Replace(string(data), "    \"buildacltlgen2\",\n", "    \"build1804containerd\",\n", 1)
	require.NotEqual(t, string(data), edited)
	other := filepath.Join(t.TempDir(), "aks.star")
	require.NoError(t, os.WriteFile(other, []byte(edited), 0o644))
	out, err = exec.Command(script, fixture, other).CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "%s", out)
	assert.Equal(t, 1, exit.ExitCode())
	assert.Equal(t, "missing from "+other+": buildacltlgen2\nnot in the pipeline: build1804containerd\n", string(out))
}

// agentbakerJobVars are linux.star's vars for a job of the fixture checkout.
func agentbakerJobVars(job string) map[string]starlark.Value {
	return map[string]starlark.Value{"agentbaker": starlark.String("//" + agentbakerFixture), "job": starlark.String(job)}
}

// TestEveryAgentBakerJobPlans: each job of the fixture's pipeline plans
// with linux.star: a packer build with the template packer.mk picks, or,
// for the imagecustomizer job, AgentBaker's own make targets.
func TestEveryAgentBakerJobPlans(t *testing.T) {
	t.Setenv(linuxMatrixUATokenEnv, "ua-token-for-the-plan-test")
	ws := openWorkspace(t)
	templates := map[string]bool{}
	for _, job := range pipelineJobs(t, filepath.Join(workspaceRoot(), agentbakerFixture)) {
		res := interp.Plan(context.Background(), "//workflows/linux.star", interp.Config{
			Workspace: ws, Registry: builtins.NewRegistry(), Vars: agentbakerJobVars(job),
			Info: builtins.RunInfo{ID: "plan", Time: runTime},
		}, overlay.New(newPlanCloud(t)))
		require.NoError(t, res.Err, "plan of %s", job)
		var builtinsUsed []string
		for _, s := range res.Steps {
			builtinsUsed = append(builtinsUsed, s.Builtin)
		}
		outputs := map[string]any{}
		for _, o := range res.Outputs {
			outputs[o.Name] = o.Value
		}
		if job == "buildAzureLinuxOSGuardV3gen2fipsTL" {
			assert.NotContains(t, builtinsUsed, "packer_build", job)
			assert.Equal(t, "imagecustomizer", outputs["builder"], job)
			continue
		}
		assert.Contains(t, builtinsUsed, "packer_build", job)
		assert.Contains(t, builtinsUsed, "test_vm", job)
		tpl, _ := outputs["template"].(string)
		templates[tpl] = true
	}
	assert.Len(t, templates, 9, "every template packer.mk picks is planned: %v", templates)
}
