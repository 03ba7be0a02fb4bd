package builtins_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.starlark.net/starlark"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/overlay"
	"github.com/imgflow/imgflow/interp"
)

// The upstream projects' templates, as their pipelines feed them (fixtures
// of the same shape in testdata/packer/imagebuilder and agentbaker), go
// through packer_build's plan and local run with packer 1.9.5's semantics.

// planOf plans file on the fixture's cloud with vars.
func (f *buildFixture) planOf(file string, vars map[string]string) *interp.Result {
	f.t.Helper()
	values := map[string]starlark.Value{}
	for k, v := range vars {
		values[k] = starlark.String(v)
	}
	return interp.Plan(context.Background(), "//"+file, interp.Config{
		Workspace: f.ws, Registry: f.reg, Reporter: f.rep, Vars: values,
		Info: builtins.RunInfo{ID: "plan", Time: snippetTime},
	}, overlay.New(f.cloud))
}

func TestImageBuildersStockVarFilesBuildFlatcar(t *testing.T) {
	const file = "testdata/build/imagebuilder_flatcar.star"
	f := newBuildFixture(t)

	plan := f.planOf(file, nil)
	require.NoError(t, plan.Err)
	steps := stepsOf(plan, "packer_build")
	require.Len(t, steps, 1)
	assert.Equal(t, cloud.Created, steps[0].Outcome)
	assert.Contains(t, steps[0].Summary, "version capi_gallery/capi-flatcar-stable-4152.2.3-gen2/0.3.1767323045")
	assert.Contains(t, steps[0].Summary, "; env AZURE_LOCATION=westeurope, AZURE_SUBSCRIPTION_ID=")
	env, ok := steps[0].Args["env"].(map[string]any)
	require.True(t, ok, "env is recorded: %#v", steps[0].Args)
	assert.Equal(t, "stable", env["FLATCAR_CHANNEL"])

	f.rep = &printRecorder{}
	res := f.mustRun(file, nil)
	assert.Equal(t, cloud.Created, outcomeOf(t, res, "packer_build"))
	out := outputsOf(res)
	sub := f.cloud.SubscriptionID()
	assert.Equal(t, cloud.ImageVersionID(sub, "capi-images", "capi_gallery", "capi-flatcar-stable-4152.2.3-gen2", "0.3.1767323045"), out["sig_version"],
		"the name comes from var-file values rendered from env and other var-files")
	assert.Equal(t, []any{"westeurope", "eastus", "eastus2"}, out["regions"], "packer splits replication_regions on commas")
	assert.Equal(t, "capi-flatcar-stable-4152.2.3-gen2-1767323045", out["managed_image"])
	img := f.cloud.Snapshot().ResourceGroups["capi-images"].Images["capi-flatcar-stable-4152.2.3-gen2-1767323045"]
	require.NotNil(t, img)
	assert.Equal(t, "v1.33.4", img.Tags["kubernetes_version"])

	printed := f.rep.text()
	assert.Contains(t, printed, "warning: packer_build testdata/packer/imagebuilder/azure/packer.json: distro_name: used at post-processors[0].custom_data.os_name but neither declared")
	assert.NotContains(t, printed, "epel_rpm_gpg_key", "references inside var-file values render as \"\" without a word")
	assert.Contains(t, printed, "warning: packer_build testdata/packer/imagebuilder/azure/packer.json: build sig-flatcar-gen2: packer authenticates with the Azure CLI (use_azure_cli_auth)",
		"USE_AZURE_CLI_AUTH=True: packer's login cannot outlive a CI job's federated token")

	before := f.state()
	again := f.mustRun(file, nil)
	assert.Equal(t, cloud.Exists, outcomeOf(t, again, "packer_build"))
	assert.JSONEq(t, before, f.state())
}

func TestImageBuilderWithoutItsEnvNamesTheVariable(t *testing.T) {
	f := newBuildFixture(t)
	res := f.run("testdata/build/imagebuilder_flatcar.star", map[string]string{"location": ""})
	require.Error(t, res.Err)
	msg := res.Err.Error()
	assert.Contains(t, msg, "testdata/build/imagebuilder_flatcar.star:")
	assert.Contains(t, msg, `sig-flatcar-gen2.location is "": specify either a location to build in or an existing build_resource_group_name`)
	assert.Contains(t, msg, "made from {{env `AZURE_LOCATION`}}, which packer renders as \"\" because packer_build's env does not set it or sets it to \"\": pass env = {\"AZURE_LOCATION\": …}")
	assert.Empty(t, f.cloud.Snapshot().ResourceGroups, "nothing is created")

	res = f.run("testdata/build/imagebuilder_flatcar.star", map[string]string{"regions": "westeurope,,eastus"})
	require.Error(t, res.Err)
	assert.Contains(t, res.Err.Error(), `replication_regions "westeurope,,eastus" has an empty region at position 2`)
}

func TestAgentBakersEnvFedTemplateBuildsAndKeepsTheTokenSecret(t *testing.T) {
	t.Setenv("IMGFLOW_SECRET_UA_TOKEN", secretValue)
	const file = "testdata/build/agentbaker_base.star"
	f := newBuildFixture(t)

	plan := f.planOf(file, nil)
	require.NoError(t, plan.Err)
	steps := stepsOf(plan, "packer_build")
	require.Len(t, steps, 1)
	assert.Contains(t, steps[0].Summary, "PACKER_BUILD_LOCATION=westeurope")
	assert.Contains(t, steps[0].Summary, "UA_TOKEN=<secret>")
	env := steps[0].Args["env"].(map[string]any)
	assert.Equal(t, "<secret ua_token>", env["UA_TOKEN"])

	planned := f.rep.text()
	assert.Contains(t, planned, "VHD_BUILD_TIMESTAMP: used at provisioners[1].environment_vars[6] but neither declared", "AgentBaker's real latent typo is a warning, as packer renders it \"\"")

	f.rep = &printRecorder{}
	res := f.mustRun(file, nil)
	assert.Contains(t, f.rep.text(), "VHD_BUILD_TIMESTAMP", "a run warns too")
	out := outputsOf(res)
	sub := f.cloud.SubscriptionID()
	assert.Equal(t, cloud.ImageVersionID(sub, "aks-vhd-build", "PackerSigGalleryEastUS", "2404gen2containerd", "1.1767323045.23277"), out["sig_version"])
	assert.Equal(t, []any{"westeurope"}, out["regions"], "replication_regions [\"{{user `location`}}\"], location from PACKER_BUILD_LOCATION")
	assert.Equal(t, "2404gen2containerd-1.1767323045.23277", out["managed_image"])
	// On a fresh cloud: an existing destination version would be reused.
	fresh := newBuildFixture(t)
	failed := fresh.run(file, map[string]string{"location": ""})
	require.Error(t, failed.Err)
	msg := failed.Err.Error()
	assert.Contains(t, msg, `location is "": specify either a location`)
	assert.Contains(t, msg, "shared_image_gallery_destination.replication_regions[0] is \"\": a region name is required (made from {{env `PACKER_BUILD_LOCATION`}}")
	assert.Contains(t, msg, `pass env = {"PACKER_BUILD_LOCATION": …}`)

	assert.Empty(t, fresh.cloud.Snapshot().ResourceGroups, "nothing is created")

	everything := []any{plan.Steps, res.Steps, res.Outputs, failed.Steps, msg, planned, f.rep.text(), fresh.rep.text()}
	data, err := json.Marshal(everything)
	require.NoError(t, err)
	assert.NotContains(t, string(data), secretValue)
	assertNoSecretInDir(t, f.journals)
	assertNoSecretInDir(t, fresh.journals)
}
