package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A workflow without a <name>_test.star beside it is a warning on stderr
// from imgflow test and imgflow lint, never a failure.
func TestTestAndLintWarnAboutAWorkflowWithoutTests(t *testing.T) {
	dir := workspace(t, map[string]string{
		"workflows/tested.star":      "\"\"\"Tested.\"\"\"\n\noutput(\"name\", \"x\")\n",
		"workflows/tested_test.star": "\"\"\"Its test.\"\"\"\n\nEXPECTED_OUTPUTS = [\"name\"]\n\ndef test_runs():\n    assert.eq(run(\"tested.star\").outputs, {\"name\": \"x\"})\n",
		"workflows/fresh.star":       "\"\"\"A new variant, no test yet.\"\"\"\n\noutput(\"name\", \"y\")\n",
	})
	const warning = "warning: workflows/fresh.star has no test: add workflows/fresh_test.star with EXPECTED_OUTPUTS and test_* functions"

	res := imgflow(t, "test", "--root", dir)
	require.Equal(t, 0, res.code, res.String())
	assert.Contains(t, res.stdout, "1 passed, 0 failed")
	assert.Contains(t, res.stderr, warning)
	assert.NotContains(t, res.stderr, "tested.star has no test")

	res = imgflow(t, "test", "--root", dir, "--output", "json")
	require.Equal(t, 0, res.code, res.String())
	assert.Contains(t, res.stderr, warning, "the warning stays off the JSON document")

	// Only the workflows the paths cover.
	res = imgflow(t, "test", "--root", dir, dir+"/workflows/tested_test.star")
	require.Equal(t, 0, res.code, res.String())
	assert.NotContains(t, res.stderr, "has no test")

	inDir(t, dir)
	res = imgflow(t, "lint", "workflows")
	require.Equal(t, 0, res.code, res.String())
	assert.Empty(t, res.stdout, "a warning, not a finding")
	assert.Contains(t, res.stderr, warning)

	res = imgflow(t, "lint", "workflows/tested.star")
	require.Equal(t, 0, res.code, res.String())
	assert.NotContains(t, res.stderr, "has no test")
}

// Every workflow of the repository has its tests.
func TestRepositoryWorkflowsAllHaveTests(t *testing.T) {
	inDir(t, repoRoot(t))
	res := imgflow(t, "lint", "workflows")
	require.Equal(t, 0, res.code, res.String())
	assert.NotContains(t, res.stderr, "has no test")
}
