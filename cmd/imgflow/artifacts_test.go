package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runArtifacts runs testdata/cli/artifacts.star on state with extra flags.
func runArtifacts(t *testing.T, state string, extra ...string) cliResult {
	t.Helper()
	root := repoRoot(t)
	return imgflow(t, append([]string{"run", "--root", root, "--state", state, filepath.Join(root, "testdata", "cli", "artifacts.star")}, extra...)...)
}

func TestRunWritesArtifactsAndRunsListsThem(t *testing.T) {
	state, out := t.TempDir(), filepath.Join(t.TempDir(), "artifacts")
	res := runArtifacts(t, state, "--artifacts", out, "--var", "name=abc")
	require.Equal(t, 0, res.code, res.String())
	assert.Regexp(t, `(?m)^Artifacts:\n  info\.json  `+regexp.QuoteMeta(filepath.Join(out, "info.json"))+`\n  notes\.txt  `+regexp.QuoteMeta(filepath.Join(out, "notes.txt"))+`\n`, res.stdout)
	data, err := os.ReadFile(filepath.Join(out, "info.json"))
	require.NoError(t, err)
	assert.Equal(t, "{\n    \"name\": \"abc\",\n    \"kind\": \"test\"\n}\n", string(data))

	runs := imgflow(t, "runs", "--state", state, "--output", "json")
	require.Equal(t, 0, runs.code, runs.String())
	var report struct {
		Runs []struct {
			Status    string         `json:"status"`
			Outputs   map[string]any `json:"outputs"`
			Artifacts []struct {
				Name, Path, SHA256 string
				Size               int
			} `json:"artifacts"`
		} `json:"runs"`
	}
	require.NoError(t, json.Unmarshal([]byte(runs.stdout), &report))
	list := report.Runs
	require.Len(t, list, 1)
	assert.Equal(t, "succeeded", list[0].Status)
	assert.Equal(t, map[string]any{"name": "abc"}, list[0].Outputs)
	require.Len(t, list[0].Artifacts, 2)
	assert.Equal(t, "info.json", list[0].Artifacts[0].Name)
	assert.Equal(t, filepath.Join(out, "info.json"), list[0].Artifacts[0].Path)
	assert.Equal(t, len(data), list[0].Artifacts[0].Size)
	assert.Len(t, list[0].Artifacts[0].SHA256, 64)

	// Without --artifacts the files go to the run's own directory.
	res = runArtifacts(t, state, "--output", "json")
	require.Equal(t, 0, res.code, res.String())
	doc := decodeJSON(t, res).(map[string]any)
	arts := doc["artifacts"].([]any)
	require.Len(t, arts, 2)
	assertDocumented(t, docTables(t)["run"][3], arts[0], "run artifact")
	want := filepath.Join(state, "artifacts", doc["run_id"].(string), "info.json")
	assert.Equal(t, want, arts[0].(map[string]any)["path"])
	assert.FileExists(t, want)
}

func TestRunNeverOverwritesAnArtifactItDidNotWrite(t *testing.T) {
	out := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(out, "notes.txt"), []byte("mine\n"), 0o644))
	res := runArtifacts(t, t.TempDir(), "--artifacts", out)
	require.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stderr, "testdata/cli/artifacts.star:6:")
	assert.Contains(t, res.stderr, "already exists with other content and is not overwritten")
	data, err := os.ReadFile(filepath.Join(out, "notes.txt"))
	require.NoError(t, err)
	assert.Equal(t, "mine\n", string(data))

	file := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	res = runArtifacts(t, t.TempDir(), "--artifacts", file)
	require.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stderr, "is a file: pass a directory")
}

// Several workflows run side by side each write into their run's own
// directory.
func TestSeveralWorkflowsWriteArtifactsIntoTheirRunsDirectories(t *testing.T) {
	root, state := repoRoot(t), t.TempDir()
	res := imgflow(t, "run", "--root", root, "--state", state, "-j", "2",
		filepath.Join(root, "testdata", "cli", "artifacts.star"), filepath.Join(root, "testdata", "interp", "parallel_ok.star"))
	require.Equal(t, 0, res.code, res.String())
	m := regexp.MustCompile(`\[artifacts\] artifact info\.json (\S+)`).FindStringSubmatch(res.stdout)
	require.NotNil(t, m, res.stdout)
	assert.Equal(t, filepath.Join(state, "artifacts"), filepath.Dir(filepath.Dir(m[1])))
	assert.FileExists(t, m[1])

	res = imgflow(t, "run", "--root", root, "--state", state, "--artifacts", t.TempDir(),
		filepath.Join(root, "testdata", "cli", "artifacts.star"), filepath.Join(root, "testdata", "interp", "parallel_ok.star"))
	require.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stderr, "--artifacts, --journal-copy and --export-outputs take one workflow")
}

// A CI job keeps its run's journal with its artifacts: the copy is the
// journal, written however the run ended, and `imgflow runs` reads it.
func TestRunWritesACopyOfItsJournalHoweverItEnds(t *testing.T) {
	for _, tc := range []struct {
		name, src, status string
		code              int
	}{
		{"succeeded", `artifact("notes.txt", content = "ok\n")`, "succeeded", 0},
		{"failed", `fail("broken on purpose")`, "invalid", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, file := workspaceWith(t, tc.src)
			state, copies := t.TempDir(), filepath.Join(t.TempDir(), "job", "journal")
			res := imgflow(t, "run", "--root", root, "--state", state, "--journal-copy", copies, file)
			require.Equal(t, tc.code, res.code, res.String())
			journals, err := filepath.Glob(filepath.Join(state, "runs", "*.jsonl"))
			require.NoError(t, err)
			require.Len(t, journals, 1)
			want, err := os.ReadFile(journals[0])
			require.NoError(t, err)
			got, err := os.ReadFile(filepath.Join(copies, filepath.Base(journals[0])))
			require.NoError(t, err, "the copy is named as the journal: RUN_ID.jsonl")
			assert.Equal(t, string(want), string(got))

			runs := imgflow(t, "runs", "--journal", copies)
			require.Equal(t, 0, runs.code, runs.String())
			assert.Contains(t, runs.stdout, tc.status)
		})
	}
	res := imgflow(t, "run", "--root", repoRoot(t), "--journal-copy", t.TempDir(), filepath.Join(repoRoot(t), "releases", "flatcar.star"))
	assert.Equal(t, 1, res.code)
	assert.Contains(t, res.stderr, "--journal-copy")
}
