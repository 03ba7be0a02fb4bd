package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A password in the userinfo of a URL a check gets through secret_env
// (linux.star's cis_assessor) is in no step line, journal, state or
// artifact of the run.
func TestSecretEnvURLPasswordIsRecordedNowhere(t *testing.T) {
	const password = "PLANTEDPASSWORD"
	root := repoRoot(t)
	state, artifacts := t.TempDir(), t.TempDir()
	res := imgflow(t, "run", "--root", root, "--state", state, "--artifacts", artifacts, filepath.Join(root, "workflows", "linux.star"),
		"--var", "cis_assessor=https://builder:"+password+"@mirror.example.org/cis/assessor.tar.gz")
	require.Equal(t, 0, res.code, res.String())
	assert.Contains(t, res.stdout, "checks on VM", "the checks ran")
	assert.NotContains(t, res.String(), password)
	runs := imgflow(t, "runs", "--state", state, "--output", "json")
	assert.NotContains(t, runs.String(), password)
	st := imgflow(t, "state", "--state", state, "--output", "json")
	assert.NotContains(t, st.String(), password)
	assertNoPlantedSecret(t, state, password)
	assertNoPlantedSecret(t, artifacts, password)
}

// `imgflow state --output json` shows no secret rendered into azure_tags:
// a secret(), or a SAS URL given as a plain var, there is refused before
// anything is created.
func TestStateShowsNoSecretRenderedIntoTags(t *testing.T) {
	const secretValue = "planted-tag-secret"
	t.Setenv("IMGFLOW_SECRET_UA_TOKEN", secretValue)
	root := repoRoot(t)
	file := filepath.Join(root, "testdata", "build", "secret_in_name.star")

	state := t.TempDir()
	res := imgflow(t, "run", "--root", root, "--state", state, file, "--var", "into=tags")
	require.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stderr, `azure_tags is made from secret("ua_token")`)
	st := imgflow(t, "state", "--state", state, "--output", "json")
	require.Equal(t, 0, st.code, st.String())
	assert.NotContains(t, st.stdout, secretValue)
	assertNoPlantedSecret(t, state, secretValue)

	// A SAS URL (a var, not a secret()) is a credential too: refused.
	state = t.TempDir()
	res = imgflow(t, "run", "--root", root, "--state", state, file, "--var", "into=sas", "--var", "sas_url="+plantedSAS)
	require.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stderr, ".azure_tags carries a SAS signature or a URL password")
	assert.Contains(t, res.stderr, "testdata/build/secret_in_name.star:")
	assert.NotContains(t, res.String(), "PLANTEDSIGNATURE")
	st = imgflow(t, "state", "--state", state, "--output", "json")
	require.Equal(t, 0, st.code, st.String())
	assert.NotContains(t, st.stdout, "PLANTEDSIGNATURE")
	assert.NotContains(t, st.stdout, "2026.1.2", "no image was created")
	assertNoPlantedSecret(t, state, "PLANTEDSIGNATURE")
}
