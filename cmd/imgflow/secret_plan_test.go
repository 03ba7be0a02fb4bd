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
