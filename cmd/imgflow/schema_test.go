package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docField is a row of a table of docs/output-schemas.md.
type docField struct {
	name string
	// optional fields are "omitted when empty".
	optional bool
}

var (
	docSectionRE = regexp.MustCompile("(?m)^## `imgflow (\\w+) --output json`$")
	docRowRE     = regexp.MustCompile("(?m)^\\| `(\\w+)` \\|.*$")
)

// docSections are the sections of docs/output-schemas.md on each
// command's JSON, by command.
func docSections(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "output-schemas.md"))
	require.NoError(t, err)
	doc := string(data)
	out := map[string]string{}
	locs := docSectionRE.FindAllStringSubmatchIndex(doc, -1)
	for i, loc := range locs {
		end := len(doc)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		if next := strings.Index(doc[loc[1]:end], "\n## "); next >= 0 {
			end = loc[1] + next
		}
		out[doc[loc[2]:loc[3]]] = doc[loc[1]:end]
	}
	return out
}

// docExample is the first JSON example of a command's section.
func docExample(t *testing.T, cmd string) map[string]any {
	t.Helper()
	section := docSections(t)[cmd]
	_, rest, ok := strings.Cut(section, "```json\n")
	require.True(t, ok, "the section on imgflow %s --output json has an example", cmd)
	block, _, _ := strings.Cut(rest, "```")
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(block), &v), "the example of imgflow %s --output json is JSON", cmd)
	return v
}

// assertLikeExample checks that got agrees with an abridged example: each
// field the example shows is there with the example's value, where "…"
// in a string stands for any text; duration_ms varies.
func assertLikeExample(t *testing.T, example, got any, what string) {
	t.Helper()
	switch ex := example.(type) {
	case map[string]any:
		m, ok := got.(map[string]any)
		require.True(t, ok, "%s: want an object like %v, got %v", what, example, got)
		for k, v := range ex {
			if k == "duration_ms" {
				continue
			}
			require.Contains(t, m, k, "%s", what)
			assertLikeExample(t, v, m[k], what+"."+k)
		}
	case string:
		s, ok := got.(string)
		require.True(t, ok, "%s: want a string like %q, got %v", what, ex, got)
		pattern := "^" + strings.ReplaceAll(regexp.QuoteMeta(ex), "…", ".*") + "$"
		assert.Regexp(t, pattern, s, "%s: docs/output-schemas.md's example shows %q", what, ex)
	default:
		assert.Equal(t, example, got, "%s: docs/output-schemas.md's example", what)
	}
}

// docTables are the field tables of each command's section of
// docs/output-schemas.md, in order: for run the report, a step and an
// error.
func docTables(t *testing.T) map[string][][]docField {
	t.Helper()
	out := map[string][][]docField{}
	for cmd, section := range docSections(t) {
		for _, table := range strings.Split(section, "| field | type | meaning |")[1:] {
			var fields []docField
			for _, m := range docRowRE.FindAllStringSubmatch(table, -1) {
				fields = append(fields, docField{name: m[1], optional: strings.Contains(m[0], "*omitted when empty*")})
			}
			out[cmd] = append(out[cmd], fields)
		}
	}
	return out
}

// assertDocumented checks that obj has every field the table lists (but
// those omitted when empty) and no field it does not list.
func assertDocumented(t *testing.T, table []docField, obj any, what string) {
	t.Helper()
	m, ok := obj.(map[string]any)
	require.True(t, ok, "%s is not a JSON object: %v", what, obj)
	documented := map[string]bool{}
	for _, f := range table {
		documented[f.name] = true
		if !f.optional {
			assert.Contains(t, m, f.name, "%s lacks the documented field %q", what, f.name)
		}
	}
	for name := range m {
		assert.True(t, documented[name], "%s has the field %q that docs/output-schemas.md does not document", what, name)
	}
}

func decodeJSON(t *testing.T, res cliResult) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &v), "stdout is one JSON document:\n%s", res.String())
	return v
}

func TestDocumentedSchemasCoverEveryJSONCommand(t *testing.T) {
	tables := docTables(t)
	want := map[string]int{"run": 4, "plan": 2, "test": 2, "state": 1, "runs": 2}
	for cmd, n := range want {
		require.Len(t, tables[cmd], n, "tables of imgflow %s --output json", cmd)
		for _, table := range tables[cmd] {
			assert.NotEmpty(t, table, cmd)
		}
	}
}

func TestRunAndPlanJSONMatchTheDoc(t *testing.T) {
	tables := docTables(t)
	root := repoRoot(t)
	flatcar := []string{"--root", root, filepath.Join(root, "workflows", "flatcar.star"),
		"--var", "version=" + flatcarVersion, "--var", "vhd=//testdata/flatcar/flatcar-linux-test-amd64.vhd"}

	plan := imgflow(t, append([]string{"plan", "--state", t.TempDir(), "--output", "json"}, flatcar...)...)
	require.Equal(t, 0, plan.code, plan.String())
	planDoc := decodeJSON(t, plan).(map[string]any)
	assertDocumented(t, tables["plan"][0], planDoc, "plan")
	planSteps := planDoc["steps"].([]any)
	require.NotEmpty(t, planSteps)
	planExample := docExample(t, "plan")
	assertLikeExample(t, planExample["steps"].([]any)[0], planSteps[0], "plan example step")
	assertLikeExample(t, planExample["outputs"], planDoc["outputs"], "plan example outputs")
	for i, s := range planSteps {
		assertDocumented(t, tables["plan"][1], s, "plan step")
		step := s.(map[string]any)
		assert.EqualValues(t, i+1, step["step"])
		assert.Equal(t, "created", step["outcome"], "plan and run share the outcome vocabulary")
		assert.Equal(t, "create", step["action"], "the deprecated action stays")
	}

	run := imgflow(t, append([]string{"run", "--state", t.TempDir(), "--output", "json"}, flatcar...)...)
	require.Equal(t, 0, run.code, run.String())
	runDoc := decodeJSON(t, run).(map[string]any)
	assertDocumented(t, tables["run"][0], runDoc, "run")
	runSteps := runDoc["steps"].([]any)
	require.Len(t, runSteps, len(planSteps), "run does what plan said")
	runExample := docExample(t, "run")
	assertLikeExample(t, runExample["steps"].([]any)[0], runSteps[0], "run example step")
	assertLikeExample(t, runExample["outputs"], runDoc["outputs"], "run example outputs")
	for i, s := range runSteps {
		assertDocumented(t, tables["run"][1], s, "run step")
		step, planned := s.(map[string]any), planSteps[i].(map[string]any)
		assert.Equal(t, planned["builtin"], step["builtin"])
		assert.Equal(t, planned["outcome"], step["outcome"])
	}

	// Step numbers count as the text report's do.
	text := imgflow(t, append([]string{"run", "--state", t.TempDir()}, flatcar...)...)
	require.Equal(t, 0, text.code, text.String())
	textSteps := regexp.MustCompile(`(?m)^\s*(\d+) (\w+) `).FindAllStringSubmatch(text.stdout, -1)
	require.Len(t, textSteps, len(runSteps), text.stdout)
	for i, m := range textSteps {
		step := runSteps[i].(map[string]any)
		assert.Equal(t, m[1], jsonText(step["step"]), "step %d", i)
		assert.Equal(t, m[2], step["builtin"], "step %d", i)
	}

	failed := imgflow(t, "run", "--root", root, "--state", t.TempDir(), "--output", "json", filepath.Join(root, "testdata", "cli", "bad_gallery_name.star"))
	require.Equal(t, 1, failed.code, failed.String())
	failedDoc := decodeJSON(t, failed).(map[string]any)
	assertDocumented(t, tables["run"][0], failedDoc, "failed run")
	assertDocumented(t, tables["run"][2], failedDoc["error"], "run error")
	for _, s := range failedDoc["steps"].([]any) {
		assertDocumented(t, tables["run"][1], s, "step of a failed run")
	}

	failedPlan := imgflow(t, "plan", "--root", root, "--state", t.TempDir(), "--output", "json", filepath.Join(root, "testdata", "cli", "bad_gallery_name.star"))
	require.Equal(t, 1, failedPlan.code, failedPlan.String())
	failedPlanDoc := decodeJSON(t, failedPlan).(map[string]any)
	assertDocumented(t, tables["run"][2], failedPlanDoc["error"], "plan error")
}

func TestTestStateAndRunsJSONMatchTheDoc(t *testing.T) {
	tables := docTables(t)
	root := repoRoot(t)
	res := imgflow(t, "test", "--root", root, "--output", "json", filepath.Join(root, "testdata", "cli", "failing_test.star"))
	require.Equal(t, 1, res.code, res.String())
	report := decodeJSON(t, res).(map[string]any)
	assertDocumented(t, tables["test"][0], report, "test report")
	for _, tc := range report["tests"].([]any) {
		assertDocumented(t, tables["test"][1], tc, "test")
	}

	state := t.TempDir()
	require.Equal(t, 0, runFlatcar(t, state).code)
	st := imgflow(t, "state", "--state", state, "--output", "json")
	require.Equal(t, 0, st.code, st.String())
	assertDocumented(t, tables["state"][0], decodeJSON(t, st), "state")

	runs := imgflow(t, "runs", "--state", state, "--output", "json")
	require.Equal(t, 0, runs.code, runs.String())
	doc := decodeJSON(t, runs)
	assertDocumented(t, tables["runs"][0], doc, "runs report")
	assert.Equal(t, filepath.Join(state, "runs"), doc.(map[string]any)["journal"])
	list := doc.(map[string]any)["runs"].([]any)
	require.Len(t, list, 1)
	assertDocumented(t, tables["runs"][1], list[0], "run summary")
}

// TestEveryOutcomeIsDocumented reads the outcomes builtins report
// (cloud.Outcome("…") in builtins' source) and checks that the Outcomes
// table of docs/output-schemas.md explains each, and nothing else.
func TestEveryOutcomeIsDocumented(t *testing.T) {
	root := repoRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "output-schemas.md"))
	require.NoError(t, err)
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\| \*\*(\w+)\*\* \|`).FindAllStringSubmatch(string(doc), -1) {
		documented[m[1]] = true
	}
	require.NotEmpty(t, documented, "docs/output-schemas.md has an Outcomes table with | **outcome** | rows")

	files, err := filepath.Glob(filepath.Join(root, "builtins", "*.go"))
	require.NoError(t, err)
	reported := map[string]string{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range regexp.MustCompile(`cloud\.Outcome\("(\w+)"\)`).FindAllStringSubmatch(string(src), -1) {
			reported[m[1]] = filepath.Base(f)
		}
	}
	require.NotEmpty(t, reported)
	for o, file := range reported {
		assert.True(t, documented[o], "builtins/%s reports the outcome %q that docs/output-schemas.md's Outcomes table does not explain", file, o)
	}
	for o := range documented {
		_, ok := reported[o]
		assert.True(t, ok, "docs/output-schemas.md explains the outcome %q that no builtin reports", o)
	}
}
