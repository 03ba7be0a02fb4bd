package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A plan goes on without a secret's variable, showing the secret as
// unset (a pull request's CI gives no secrets); a run still refuses.
func TestPlanWithoutASecretPlansItAsUnset(t *testing.T) {
	t.Setenv("IMGFLOW_SECRET_PLAN_ONLY_TOKEN", "")
	dir := workspace(t, map[string]string{
		"workflows/s.star": "\"\"\"S.\"\"\"\n\ntok = secret(\"plan_only_token\")\nprint(tok)\n",
	})
	wf := filepath.Join(dir, "workflows", "s.star")
	res := imgflow(t, "plan", "--root", dir, "--state", t.TempDir(), wf)
	require.Equal(t, 0, res.code, res.String())
	assert.Contains(t, res.stdout+res.stderr, "<secret plan_only_token: unset>")

	res = imgflow(t, "run", "--root", dir, "--state", t.TempDir(), wf)
	assert.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stderr, `secret "plan_only_token" is not set: export IMGFLOW_SECRET_PLAN_ONLY_TOKEN=<value>`)
}

// The README's `imgflow plan releases/aks.star` plans every job on a
// fresh checkout, FIPS jobs (which need ua_token to run) included.
func TestPlanOfTheAKSReleaseNeedsNoSecret(t *testing.T) {
	t.Setenv("IMGFLOW_SECRET_UA_TOKEN", "")
	root := repoRoot(t)
	res := imgflow(t, "plan", "--root", root, "--state", t.TempDir(), "--no-packer-validate", filepath.Join(root, "releases", "aks.star"), "--var", "agentbaker=//testdata/agentbaker")
	require.Equal(t, 0, res.code, res.String())
	assert.Contains(t, res.stdout, "release aks: 32 jobs planned, 0 failed")
	assert.Regexp(t, `buildaclfipstlgen2 +9 steps \(6 create, 1 delete, 2 run\)`, res.stdout, "a plan's words: present tense")
	assert.Contains(t, res.stderr, "secrets not set, planned as <secret NAME: unset>: IMGFLOW_SECRET_UA_TOKEN; a run needs them")
}

// A secret() value too short to hide (every "x" of the output would
// become <secret>) is refused, naming its variable, before the workflow
// is read or the target touched.
func TestShortSecretIsRefusedBeforeAnyWork(t *testing.T) {
	t.Setenv("IMGFLOW_SECRET_UA_TOKEN", "x")
	dir := workspace(t, map[string]string{
		"workflows/s.star": "\"\"\"S.\"\"\"\n\nprint(\"workflow evaluated\")\nresource_group(name = \"rg\", location = \"westeurope\")\n",
	})
	wf := filepath.Join(dir, "workflows", "s.star")
	state := filepath.Join(t.TempDir(), "state")
	for _, args := range [][]string{{"run", "--state", state}, {"plan", "--state", state}, {"check"}} {
		cmd := args[0]
		res := imgflow(t, append(args, "--root", dir, wf)...)
		assert.Equal(t, 1, res.code, res.String())
		assert.Contains(t, res.stderr, "IMGFLOW_SECRET_UA_TOKEN holds fewer than 4 characters", cmd)
		assert.NotContains(t, res.stdout+res.stderr, "workflow evaluated", cmd)
		assert.NoDirExists(t, state, cmd)
	}
	res := imgflow(t, "fmt", "-check", wf)
	assert.Equal(t, 0, res.code, "fmt evaluates nothing: %s", res.String())
}
