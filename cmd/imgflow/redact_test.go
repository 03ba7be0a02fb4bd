package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/interp/startest"
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
		if info, err := d.Info(); err != nil || info.Size() > 64<<20 {
			return err // a disk's data (sparse, GiBs): not a record
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

// A test's failure quoting a SAS, a URL password or a secret()'s value
// (a check's output it compared) is redacted in the JUnit report.
func TestJUnitReportIsRedacted(t *testing.T) {
	const secretValue = "planted-junit-secret"
	t.Setenv("IMGFLOW_SECRET_PLANTED", secretValue)
	failure := "check cis printed: fetched " + plantedSAS + " from https://u:PLANTEDPW@mirror.example.org/x with " + secretValue
	data, err := junitXML([]string{"workflows/x_test.star"}, []startest.Result{
		{File: "workflows/x_test.star", Name: "test_scan", Failures: []string{failure}},
	}, time.Now())
	require.NoError(t, err)
	out := string(data)
	assert.Contains(t, out, "disk.vhd?&lt;redacted&gt;")
	for _, s := range []string{"PLANTEDSIGNATURE", "PLANTEDPW", secretValue} {
		assert.NotContains(t, out, s)
	}
}
