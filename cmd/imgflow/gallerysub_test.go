package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const gallerySubscription = "00000000-0000-0000-0000-00000000beef"

// TestGalleryInAnotherSubscriptionOnTheCLI: AgentBaker's
// GALLERY_SUBSCRIPTION_ID on the local target. The plan names the
// gallery's subscription where its steps go; the run makes them in a
// state of that subscription beside the target's, which imgflow state
// lists after the target's; a bad id is refused with the line to fix.
func TestGalleryInAnotherSubscriptionOnTheCLI(t *testing.T) {
	dir, root := t.TempDir(), repoRoot(t)
	vars := []string{"--root", root, "--var", "agentbaker=//testdata/agentbaker", "--var", "job=build2204gen2containerd", "--var", "gallery_subscription_id=" + gallerySubscription}

	plan := imgflow(t, append([]string{"plan", filepath.Join(root, "workflows", "linux.star"), "--state", dir, "--no-packer-validate"}, vars...)...)
	require.Equal(t, 0, plan.code, plan.String())
	for _, step := range []string{"gallery", "image_definition", "packer_build"} {
		line := planStepLine(plan.stdout, step)
		assert.Contains(t, line, "(subscription "+gallerySubscription+")", "the plan says where %s goes", step)
	}
	assert.NotContains(t, planStepLine(plan.stdout, "storage_account"), "(subscription ")
	assert.Contains(t, plan.stdout, "GALLERY_SUBSCRIPTION_ID="+gallerySubscription)

	run := imgflow(t, append([]string{"run", filepath.Join(root, "workflows", "linux.star"), "--state", dir}, vars...)...)
	require.Equal(t, 0, run.code, run.String())
	state := imgflow(t, "state", "--state", dir)
	require.Equal(t, 0, state.code, state.String())
	target := strings.Index(state.stdout, "subscription ")
	other := strings.Index(state.stdout, "subscription "+gallerySubscription)
	require.GreaterOrEqual(t, target, 0, state.stdout)
	require.Greater(t, other, target, "the target's subscription, then the gallery's:\n%s", state.stdout)
	assert.Contains(t, state.stdout[other:], "gallery PackerSigGalleryEastUS")
	assert.NotContains(t, state.stdout[:other], "gallery PackerSigGalleryEastUS")

	bad := imgflow(t, "plan", filepath.Join(root, "workflows", "linux.star"), "--root", root, "--state", t.TempDir(), "--no-packer-validate",
		"--var", "agentbaker=//testdata/agentbaker", "--var", "job=build2204gen2containerd", "--var", "gallery_subscription_id=beef")
	require.Equal(t, 1, bad.code, bad.String())
	assert.Contains(t, bad.stderr, "workflows/linux.star:")
	assert.Contains(t, bad.stderr, `invalid subscription id "beef": a subscription id is a GUID`)
}

// planStepLine is the line of a text plan's step of builtin ("  4 gallery
// …"), "" when there is none.
func planStepLine(out, builtin string) string {
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[1] == builtin {
			return line
		}
	}
	return ""
}
