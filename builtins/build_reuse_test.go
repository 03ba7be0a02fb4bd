package builtins_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
)

// On the Azure target too, a build whose destination version exists is
// reused, not run again: packer would build a VM and then fail on the
// existing version, and the plan (which reuses it) would be wrong.
func TestPackerBuildReusesAnExistingDestinationOnTheAzureTarget(t *testing.T) {
	t.Setenv("IMGFLOW_SECRET_UA_TOKEN", secretValue)
	f := newBuildFixtureIn(t, fakeBuildSubscription) // the subscription fakeBuild publishes to
	require.NoError(t, publishFakeVersion(t, f))
	packer := &failingBuilder{}
	globals, run, err := directRun(t, f, packer, fakeBuild)
	require.NoError(t, err)
	assert.False(t, packer.called, "packer ran although its destination version exists")
	steps := run.Steps()
	last := steps[len(steps)-1]
	assert.Equal(t, "packer_build", last.Builtin)
	assert.Equal(t, cloud.Exists, last.Outcome)
	assert.Contains(t, last.Summary, "(built earlier)")
	assert.Contains(t, globals["build"].String(), "versions/2021.01.01")
}

// failedReplication reports every gallery image version as failed to
// replicate to its first region.
type failedReplication struct{ cloud.Provider }

func (p failedReplication) GetImageVersion(ctx context.Context, rg, gallery, def, version string) (*cloud.ImageVersion, error) {
	v, err := p.Provider.GetImageVersion(ctx, rg, gallery, def, version)
	if err == nil && len(v.Replication) > 0 {
		v.Replication[0].State, v.Replication[0].Details = cloud.ReplicationFailed, "disk copy error"
	}
	return v, err
}

// A destination version that exists but did not replicate is neither
// reused nor rebuilt: the error says how to get rid of it.
func TestPackerBuildRefusesADestinationThatFailedToReplicate(t *testing.T) {
	t.Setenv("IMGFLOW_SECRET_UA_TOKEN", secretValue)
	f := newBuildFixtureIn(t, fakeBuildSubscription) // the subscription fakeBuild publishes to
	require.NoError(t, publishFakeVersion(t, f))
	packer := &failingBuilder{}
	_, _, err := directRunOn(t, f, failedReplication{f.cloud}, packer, fakeBuild)
	require.Error(t, err)
	assert.False(t, packer.called)
	assert.Contains(t, err.Error(), "gallery image version 2021.01.01 of aksgallery/ubuntu2204, exists from an earlier build but is not usable (failed in: westus2 (disk copy error); not complete in: none)")
	assert.Contains(t, err.Error(), "az sig image-version delete -g aks-galleries -r aksgallery -i ubuntu2204 -e 2021.01.01")
}

// fakeBuildSubscription is the subscription fakeBuild's template and the
// fake packer's artifact name.
const fakeBuildSubscription = "00000000-0000-0000-0000-000000000000"
