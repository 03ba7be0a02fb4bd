package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// plantedSAS is a made-up SAS URL whose signature must never leave imgflow.
const plantedSAS = "https://acct.blob.core.windows.net/vhds/disk.vhd?sv=2022-11-02&sp=r&sig=PLANTEDSIGNATURE"

// assertNoPlantedSecret fails when any file under dir holds the planted
// signature or secret value.
func assertNoPlantedSecret(t *testing.T, dir string, secrets ...string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, s := range secrets {
			assert.NotContains(t, string(data), s, "%s holds a secret", strings.TrimPrefix(path, dir))
		}
		return nil
	}))
}

// A SAS or a secret() value quoted by an error (here a --var that is not an
// integer, and a failing workflow test) reaches neither the output, nor the
// JSON, nor the run's journal and state, nor a JUnit report.
func TestErrorsNeverEchoAPlantedSASOrSecret(t *testing.T) {
	const secretValue = "planted-secret-value"
	t.Setenv("IMGFLOW_SECRET_PLANTED", secretValue)
	for _, value := range []string{plantedSAS, secretValue} {
		state := t.TempDir()
		for _, args := range [][]string{{"--var", "name=x", "--var", "count=" + value}, {"--var", "name=x", "--var", "count=" + value, "--output", "json"}} {
			res := runParams(t, state, args...)
			require.Equal(t, 1, res.code, res.String())
			assert.Contains(t, res.String(), "is not an integer")
			assert.NotContains(t, res.String(), "PLANTEDSIGNATURE")
			assert.NotContains(t, res.String(), secretValue)
		}
		runs := imgflow(t, "runs", "--state", state)
		assert.NotContains(t, runs.String(), "PLANTEDSIGNATURE")
		assertNoPlantedSecret(t, state, "PLANTEDSIGNATURE", secretValue)
	}

	ws := workspace(t, map[string]string{"workflows/leaks_test.star": "def test_quotes_a_sas():\n    fail(\"cannot copy " + plantedSAS + "\")\n"})
	out := filepath.Join(t.TempDir(), "junit.xml")
	res := imgflow(t, "test", "--root", ws, "--junit", out, filepath.Join(ws, "workflows"))
	require.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.String(), "cannot copy https://acct.blob.core.windows.net/vhds/disk.vhd?<redacted>")
	assert.NotContains(t, res.String(), "PLANTEDSIGNATURE")
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Contains(t, string(data), "test_quotes_a_sas")
	assert.NotContains(t, string(data), "PLANTEDSIGNATURE")
}
