package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunOutputJSON(t *testing.T) {
	state := t.TempDir()
	res := runFlatcar(t, state, "--output", "json")
	require.Equal(t, 0, res.code, res.String())
	var report map[string]any
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &report), "stdout is one JSON document:\n%s", res.stdout)
	assert.Equal(t, "workflows/flatcar.star", report["workflow"])
	assert.Equal(t, "local", report["target"])
	assert.Equal(t, "succeeded", report["status"])
	assert.Equal(t, "apply", report["pass"])
	assert.NotEmpty(t, report["run_id"])
	assert.Nil(t, report["error"])
	assert.Equal(t, []any{}, report["errors"])
	outputs := report["outputs"].(map[string]any)
	assert.Contains(t, outputs, "community_image_id")
	steps := report["steps"].([]any)
	require.NotEmpty(t, steps)
	first := steps[0].(map[string]any)
	for _, field := range []string{"step", "index", "builtin", "outcome", "summary", "pos", "args", "result", "duration_ms"} {
		assert.Contains(t, first, field)
	}
	assert.Equal(t, "created", first["outcome"])
	assert.Regexp(t, `^workflows/flatcar\.star:\d+:\d+`, first["pos"])

	// The same run again: every step exists.
	res = runFlatcar(t, state, "--output", "json")
	require.Equal(t, 0, res.code, res.String())
	var again RunReport
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &again))
	for _, s := range again.Steps {
		assert.Equal(t, "exists", s.Outcome, s.Summary)
	}
}

func TestRunOutputJSONOfAFailure(t *testing.T) {
	root := repoRoot(t)
	res := imgflow(t, "run", "--root", root, "--state", t.TempDir(), "--output", "json", filepath.Join(root, "testdata", "cli", "bad_gallery_name.star"))
	require.Equal(t, 1, res.code, res.String())
	var report RunReport
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &report), res.stdout)
	assert.Equal(t, "failed", report.Status)
	assert.Equal(t, "validate", report.Pass)
	require.NotNil(t, report.Error)
	assert.Equal(t, "testdata/cli/bad_gallery_name.star:4:12", report.Error.Pos)
	assert.Equal(t, "testdata/cli/bad_gallery_name.star", report.Error.File)
	assert.Equal(t, 4, report.Error.Line)
	assert.Equal(t, 12, report.Error.Col)
	assert.Contains(t, report.Error.Message, "invalid gallery name")
	assert.Contains(t, report.Error.Backtrace, "Traceback (most recent call last):")
	assert.Contains(t, report.Error.Source, `gallery("flatcar-staging"`)
	assert.Len(t, report.Errors, 1)
	assert.Contains(t, res.stderr, "error: testdata/cli/bad_gallery_name.star:4:", "the error is on stderr too")

	res = imgflow(t, "run", "--output", "yaml", "x.star")
	assert.Equal(t, 1, res.code)
	assert.Contains(t, res.stderr, `--output "yaml": use text or json`)
}

func TestPlanOutputJSONOfAFailure(t *testing.T) {
	root := repoRoot(t)
	res := imgflow(t, "plan", "--root", root, "--state", t.TempDir(), "--output", "json", filepath.Join(root, "testdata", "cli", "bad_gallery_name.star"))
	require.Equal(t, 1, res.code, res.String())
	var plan Plan
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &plan), res.stdout)
	require.NotNil(t, plan.Error)
	assert.Equal(t, "testdata/cli/bad_gallery_name.star:4:12", plan.Error.Pos)
	require.Len(t, plan.Steps, 2, "the resource group, then the failing gallery")
	assert.Equal(t, "resource_group", plan.Steps[0].Builtin)
	assert.Equal(t, "created", plan.Steps[0].Outcome)
	assert.Equal(t, "create", plan.Steps[0].Action, "the deprecated action stays")
	assert.Equal(t, 1, plan.Steps[0].Step)
	assert.Equal(t, "gallery", plan.Steps[1].Builtin)
	assert.Equal(t, "failed", plan.Steps[1].Outcome)
	assert.Equal(t, "failed", plan.Steps[1].Action)
	assert.Equal(t, 2, plan.Steps[1].Step)

	res = imgflow(t, "plan", "--root", root, "--state", t.TempDir(), "--output", "json", filepath.Join(root, "testdata", "cli", "params.star"), "--var", "name=x")
	require.Equal(t, 0, res.code, res.String())
	var ok map[string]any
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &ok), res.stdout)
	assert.Contains(t, ok, "error")
	assert.Nil(t, ok["error"])
}

func TestStateAndRunsOutputJSON(t *testing.T) {
	state := t.TempDir()
	require.Equal(t, 0, runFlatcar(t, state).code)
	for _, cmd := range []string{"state", "runs"} {
		a := imgflow(t, cmd, "--state", state, "--json")
		b := imgflow(t, cmd, "--state", state, "--output", "json")
		require.Equal(t, 0, a.code, a.String())
		require.Equal(t, 0, b.code, b.String())
		assert.Equal(t, a.stdout, b.stdout, cmd)
		assert.True(t, json.Valid([]byte(b.stdout)), cmd)
		bad := imgflow(t, cmd, "--state", state, "--output", "xml")
		assert.Equal(t, 1, bad.code, cmd)
	}
}

func TestTestOutputJSON(t *testing.T) {
	root := repoRoot(t)
	res := imgflow(t, "test", "--root", root, "--output", "json", filepath.Join(root, "testdata", "cli", "failing_test.star"))
	require.Equal(t, 1, res.code, res.String())
	var report TestReport
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &report), res.stdout)
	assert.Equal(t, 1, report.Passed)
	assert.Equal(t, 1, report.Failed)
	require.Len(t, report.Tests, 2)
	assert.Equal(t, TestResult{File: "testdata/cli/failing_test.star", Name: "test_passes", Passed: true, Failures: []string{}, DurationMS: report.Tests[1].DurationMS}, report.Tests[1])
	assert.False(t, report.Tests[0].Passed)
	require.Len(t, report.Tests[0].Failures, 1)
	assert.Contains(t, report.Tests[0].Failures[0], `"stable" != "beta"`)
}

// A plan words every step as an intention, a delete() too: the text
// shows "delete", never the past "deleted" next to "create".
func TestPlanTextWordsADeleteAsAnIntention(t *testing.T) {
	root := repoRoot(t)
	res := imgflow(t, "plan", "--root", root, "--no-packer-validate", filepath.Join(root, "workflows", "sig.star"))
	require.Equal(t, 0, res.code, res.String())
	require.Regexp(t, `(?m)^\s+\d+ delete\s+\S+ delete `, res.stdout)
	assert.NotContains(t, res.stdout, " deleted ")
	assert.Contains(t, res.stdout, " create ")
}
