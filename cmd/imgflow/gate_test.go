package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/local"
	"github.com/imgflow/imgflow/journal"
)

// capzImages are the images capzLocal builds: two parallel() branches.
var capzImages = []struct{ staging, community string }{
	{"capi-ubuntu-2404-gen2", "capi-ubun2-2404-gen2"},
	{"capi-azurelinux-3-gen2", "capi-azurelinux-3-gen2"},
}

// capzLocal runs workflows/capz.star on the local target in state for
// two targets of the test checkout, with the extra flags.
func capzLocal(t *testing.T, state string, extra ...string) cliResult {
	t.Helper()
	root := repoRoot(t)
	args := append([]string{"run", "--root", root, "--state", state, filepath.Join(root, "workflows", "capz.star"),
		"--var", "image_builder=//testdata/image-builder", "--var", "targets=ubuntu-2404,azurelinux-3", "--var", "generations=gen2"}, extra...)
	return imgflow(t, args...)
}

// versionIn returns a version of the local target in state, nil when
// there is none.
func versionIn(t *testing.T, state, gallery, definition string) *cloud.ImageVersion {
	t.Helper()
	p, err := local.Open(state, local.Options{})
	require.NoError(t, err)
	defer p.Close()
	v, err := p.GetImageVersion(context.Background(), capzGroup, gallery, definition, capzVersion)
	if cloud.IsNotFound(err) {
		return nil
	}
	require.NoError(t, err)
	return v
}

// published is what a promoted version says, without what differs between
// two runs (their ids and creation times).
func published(v *cloud.ImageVersion, runID string) map[string]any {
	tags := cloud.Tags{}
	for k, val := range v.Tags {
		if val != runID && k != "createdAt" {
			tags[k] = val
		}
	}
	_, source, _ := strings.Cut(v.Source.ID, "/resourceGroups/") // each state has a subscription of its own
	return map[string]any{"source": source, "regions": v.TargetRegions, "end_of_life": v.EndOfLife.Format("2006-01-02"), "tags": tags, "exclude_from_latest": v.ExcludeFromLatest}
}

func onlyRun(t *testing.T, state string) journal.Summary {
	t.Helper()
	runs, err := journal.List(filepath.Join(state, "runs"))
	require.NoError(t, err)
	require.Len(t, runs, 1)
	return runs[0]
}

// The build part (--stop-at promote) builds and smoke-tests both images
// and promotes neither: the staging versions stay for the promotion and
// the run ends stopped. Continuing the same journal past the gate
// promotes them and deletes the temporaries, publishing what one run
// without a stop publishes.
func TestCapzStoppedAtPromoteThenContinuedPublishesAsOneRun(t *testing.T) {
	split := t.TempDir()
	build := capzLocal(t, split, "--stop-at", "promote")
	require.Equal(t, 0, build.code, build.String())
	assert.Contains(t, build.stdout, "stopped at gate promote")
	assert.Regexp(t, `test_vm\s+4 checks on VM testvm-\w+ from capi-ubuntu-2404-gen2-`, build.stdout, "tested before the gate")
	assert.NotContains(t, build.stdout, "community_gallery/capi-", "nothing promoted before the gate")
	for _, img := range capzImages {
		assert.Nil(t, versionIn(t, split, "community_gallery", img.community), "%s promoted before the approval", img.community)
		assert.NotNil(t, versionIn(t, split, "staging_gallery", img.staging), "the tested staging version %s stays for the promotion", img.staging)
	}
	stopped := onlyRun(t, split)
	assert.Equal(t, journal.StatusStopped, stopped.Status)
	assert.True(t, stopped.Resumable)

	promote := capzLocal(t, split, "--continue")
	require.Equal(t, 0, promote.code, promote.String())
	assert.NotRegexp(t, `(packer_build|test_vm) .* (created|passed) `, promote.stdout, "the build part and its tests are replayed, not redone")
	assert.Regexp(t, `image_version\s+community_gallery/capi-ubun2-2404-gen2/`+capzVersion+` in 12 regions, 1 replica each created`, promote.stdout)
	continued := onlyRun(t, split)
	assert.Equal(t, stopped.RunID, continued.RunID, "the promotion continues the build's run")
	assert.Equal(t, journal.StatusSucceeded, continued.Status)

	whole := t.TempDir()
	one := capzLocal(t, whole)
	require.Equal(t, 0, one.code, one.String())
	oneRun := onlyRun(t, whole)
	for _, img := range capzImages {
		got, want := versionIn(t, split, "community_gallery", img.community), versionIn(t, whole, "community_gallery", img.community)
		require.NotNil(t, got, "%s promoted after the gate", img.community)
		require.NotNil(t, want)
		assert.Equal(t, published(want, oneRun.RunID), published(got, stopped.RunID), img.community)
		assert.Nil(t, versionIn(t, split, "staging_gallery", img.staging), "the staging version %s is deleted after the promotion", img.staging)
	}
	assert.Equal(t, len(capzImages), len(continued.Outputs["capz_images"].([]any)))
}

// --stop-at a gate the workflow does not reach is refused by the
// validation pass: else the run would publish what the gate was to hold.
func TestStopAtAGateTheWorkflowLacksIsRefusedBeforeAnyChange(t *testing.T) {
	state := t.TempDir()
	res := capzLocal(t, state, "--stop-at", "publish")
	assert.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stderr, `--stop-at publish: //workflows/capz.star reaches no gate(name = "publish") (gates reached: promote)`)
	assert.Contains(t, res.stderr, "nothing was changed")
	assert.Nil(t, versionIn(t, state, "staging_gallery", capzImages[0].staging))
}

// A continuation past the gate replays what was tested; a call before the
// gate that the stopped attempt did not make (here another packer
// variable, as a moved checkout would make) is refused in validation
// rather than built anew and promoted untested.
func TestContinuingPastTheGateRefusesAChangedBuild(t *testing.T) {
	state := t.TempDir()
	build := capzLocal(t, state, "--stop-at", "promote")
	require.Equal(t, 0, build.code, build.String())

	changed := capzLocal(t, state, "--continue", "--var", "packer_vars=os_disk_size_gb=40")
	assert.Equal(t, 1, changed.code, changed.String())
	assert.Contains(t, changed.stderr, "this call before the gate is not in its journal")
	assert.Contains(t, changed.stderr, "nothing was changed")
	for _, img := range capzImages {
		assert.Nil(t, versionIn(t, state, "community_gallery", img.community), "%s promoted from an untested build", img.community)
		assert.NotNil(t, versionIn(t, state, "staging_gallery", img.staging), "the tested staging version %s stays", img.staging)
	}
}

// A release whose approval waits at a gate its job's workflow does not
// reach fails its plan (the CI plan job), before any job builds.
func TestAReleasePlanRefusesAJobWithoutItsApprovalGate(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(text), 0o644))
	}
	write("workflows/gated.star", "gate(name = \"promote\")\noutput(\"done\", True)\n")
	write("workflows/ungated.star", "output(\"done\", True)\n")
	write("releases/r.star", "approval(\"image-promotion-approval\", gate = \"promote\")\njob(\"workflows/gated.star\", id = \"gated\")\njob(\"workflows/ungated.star\", id = \"ungated\")\n")
	res := imgflow(t, "plan", "--root", root, filepath.Join(root, "releases", "r.star"))
	assert.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stderr, `job ungated: workflows/ungated.star reaches no gate(name = "promote")`)
	assert.NotContains(t, res.stderr, "job gated:")
	assert.Contains(t, res.stdout+res.stderr, "2 jobs planned, 1 failed")
}
