package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/journal"
)

// releaseDocTables are the tables of the release sections of
// docs/output-schemas.md ("imgflow plan RELEASE", "imgflow runs --release
// RELEASE"), by command: the document, then a job.
func releaseDocTables(t *testing.T) map[string][][]docField {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "output-schemas.md"))
	require.NoError(t, err)
	doc := string(data)
	out := map[string][][]docField{}
	for _, m := range regexp.MustCompile("(?m)^## `imgflow (\\w+) (?:--release )?RELEASE --output json`$").FindAllStringSubmatchIndex(doc, -1) {
		section := doc[m[1]:]
		if end := strings.Index(section, "\n## "); end >= 0 {
			section = section[:end]
		}
		cmd := doc[m[2]:m[3]]
		for _, table := range strings.Split(section, "| field | type | meaning |")[1:] {
			var fields []docField
			for _, row := range docRowRE.FindAllStringSubmatch(table, -1) {
				fields = append(fields, docField{name: row[1], optional: strings.Contains(row[0], "*omitted when empty*")})
			}
			out[cmd] = append(out[cmd], fields)
		}
	}
	require.Len(t, out["plan"], 2, "imgflow plan RELEASE: the document and a job")
	require.Len(t, out["runs"], 2, "imgflow runs --release: the document and a job")
	return out
}

func TestPlanOfTheAKSReleaseChecksEveryJobInOneCommand(t *testing.T) {
	t.Setenv("IMGFLOW_SECRET_UA_TOKEN", "token")
	root := repoRoot(t)
	res := imgflow(t, "plan", "--root", root, "--state", t.TempDir(), "--no-packer-validate", "--output", "json", filepath.Join(root, "releases", "aks.star"), "--var", "agentbaker=//testdata/agentbaker")
	require.Equal(t, 0, res.code, res.String())
	tables := releaseDocTables(t)
	doc := decodeJSON(t, res).(map[string]any)
	assertDocumented(t, tables["plan"][0], doc, "release plan")
	jobs := doc["jobs"].([]any)
	require.Len(t, jobs, 32, "every job of the fixture checkout's pipeline")
	for _, j := range jobs {
		assertDocumented(t, tables["plan"][1], j, "job plan")
		plan := j.(map[string]any)["plan"].(map[string]any)
		assert.Nil(t, plan["error"])
		assert.NotEmpty(t, plan["steps"])
	}
	assert.Equal(t, float64(0), doc["failed"])
	first := jobs[0].(map[string]any)
	assert.Equal(t, "buildazurelinuxv3gen1", first["id"])
	assert.Equal(t, "aks/buildazurelinuxv3gen1", first["journal"])
	assert.Equal(t, "V3", first["plan"].(map[string]any)["outputs"].(map[string]any)["sku_name"], "the pipeline job's variables reached the workflow")
}

func TestABadJobStopsTheReleaseBeforeAnythingChanges(t *testing.T) {
	root := repoRoot(t)
	bad := filepath.Join(root, "testdata", "release", "bad_channel.star")
	const where = "testdata/release/bad_channel.star:4:4: job flatcar-nightly: workflows/flatcar.star:10:16: param \"channel\": \"nightly\" is not one of the choices"
	res := imgflow(t, "plan", "--root", root, "--state", t.TempDir(), bad)
	assert.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stderr, where)
	assert.Contains(t, res.stdout, "release bad_channel: 2 jobs planned, 1 failed")

	state := t.TempDir()
	res = imgflow(t, "run", "--root", root, "--state", state, bad)
	assert.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stderr, where)
	assert.Contains(t, res.stderr, "nothing was changed")
	assert.NoDirExists(t, filepath.Join(state, "runs"), "no job ran, not even the good one")
	st := imgflow(t, "state", "--state", state, "--output", "json")
	assert.NotContains(t, st.stdout, "resource_groups")
}

func TestAReleaseRunsLocallyWithTheCIJobsIDsAndJournals(t *testing.T) {
	root := repoRoot(t)
	rel := filepath.Join(root, "releases", "flatcar.star")
	state := t.TempDir()
	// The CAPI jobs build from an image-builder checkout: here the tests'
	// fixture tree, set on every job that takes one.
	checkout := "image_builder=//testdata/image-builder"
	res := imgflow(t, "run", "--root", root, "--state", state, "-j", "4", rel, "--var", checkout)
	require.Equal(t, 0, res.code, res.String())
	assert.Contains(t, res.stdout, "release flatcar (releases/flatcar.star): 3 succeeded, 0 failed, 0 not run")
	ids := []string{"flatcar-stable-415223", "flatcar-capi-stable-1347-415223", "flatcar-capi-stable-1361-415223"}
	for _, id := range ids {
		runs, err := journal.List(filepath.Join(state, "runs", "flatcar", id))
		require.NoError(t, err)
		require.Len(t, runs, 1, "job %s journals in runs/flatcar/%s", id, id)
		assert.Equal(t, journal.StatusSucceeded, runs[0].Status)
	}

	junit := filepath.Join(t.TempDir(), "release.xml")
	sum := imgflow(t, "runs", "--root", root, "--state", state, "--release", rel, "--output", "json", "--junit", junit)
	require.Equal(t, 0, sum.code, sum.String())
	tables := releaseDocTables(t)
	doc := decodeJSON(t, sum).(map[string]any)
	assertDocumented(t, tables["runs"][0], doc, "release summary")
	assert.Equal(t, float64(3), doc["succeeded"])
	for i, j := range doc["jobs"].([]any) {
		job := j.(map[string]any)
		assertDocumented(t, tables["runs"][1], job, "job summary")
		assert.Equal(t, ids[i], job["id"])
		assert.Equal(t, "succeeded", job["status"])
		assert.Equal(t, float64(1), job["attempts"])
		assert.Greater(t, job["duration_ms"], float64(0))
	}
	flatcar := doc["jobs"].([]any)[0].(map[string]any)["outputs"].(map[string]any)
	assert.Contains(t, flatcar["community_image_id"], "/CommunityGalleries/flatcar-")
	capi := doc["jobs"].([]any)[2].(map[string]any)["outputs"].(map[string]any)["capz_images"].([]any)
	assert.Equal(t, "flatcar-stable-amd64-capi-v1.36.1", capi[0].(map[string]any)["name"])
	xml, err := os.ReadFile(junit)
	require.NoError(t, err)
	require.NoError(t, junitSchema(t).validate(bytes.NewReader(xml)))
	assert.Contains(t, string(xml), `<testcase name="flatcar-capi-stable-1347-415223" classname="releases.flatcar"`)

	// Again: every job continues its run, and every step replays.
	again := imgflow(t, "run", "--root", root, "--state", state, "-j", "4", rel, "--var", checkout)
	require.Equal(t, 0, again.code, again.String())
	assert.Equal(t, 3, strings.Count(again.stdout, "imgflow run --continue"))
	replayed := regexp.MustCompile(`from the journal`).FindAllString(again.stdout, -1)
	assert.Len(t, replayed, 12+2*17, "every step of the three jobs replays, none is redone:\n%s", again.stdout)
	assert.NotRegexp(t, `(?m)^\[[^]]+\]\s+\d+ \w+ .* created `, again.stdout, "nothing is created again")
	sum = imgflow(t, "runs", "--root", root, "--state", state, "--release", rel, "--output", "json")
	require.Equal(t, 0, sum.code, sum.String())
	for _, j := range decodeJSON(t, sum).(map[string]any)["jobs"].([]any) {
		assert.Equal(t, float64(2), j.(map[string]any)["attempts"])
	}
}

func TestReleaseSummaryShowsFailuresAndJobsNotRun(t *testing.T) {
	root := repoRoot(t)
	rel := filepath.Join(root, "releases", "flatcar.star")
	state := t.TempDir()
	j, err := journal.Create(filepath.Join(state, "runs", "flatcar", "flatcar-capi-stable-1347-415223"), journal.Record{RunID: "r1", Workflow: "workflows/flatcar_capi.star", Target: "local"})
	require.NoError(t, err)
	require.NoError(t, j.Append(journal.Record{Type: journal.TypeEnd, Status: journal.StatusFailed, Pass: "apply",
		Error: "workflows/flatcar_capi.star:36:25: packer_build: the build VM did not boot"}))
	require.NoError(t, j.Close())
	junit := filepath.Join(t.TempDir(), "release.xml")
	res := imgflow(t, "runs", "--root", root, "--state", state, "--release", rel, "--junit", junit)
	assert.Equal(t, 1, res.code, "a job failed: %s", res.String())
	assert.Contains(t, res.stdout, "release flatcar (releases/flatcar.star): 0 succeeded, 1 failed, 2 not run")
	assert.Regexp(t, `flatcar-capi-stable-1347-415223\s+failed\s+1\s+`, res.stdout)
	assert.Contains(t, res.stdout, "flatcar-capi-stable-1347-415223 failed (job at releases/flatcar.star:29:8): workflows/flatcar_capi.star:36:25: packer_build: the build VM did not boot")
	assert.Regexp(t, `flatcar-stable-415223\s+not run\s+0\s+-`, res.stdout)
	xml, err := os.ReadFile(junit)
	require.NoError(t, err)
	require.NoError(t, junitSchema(t).validate(bytes.NewReader(xml)))
	assert.Contains(t, string(xml), `<failure message="workflows/flatcar_capi.star:36:25: packer_build: the build VM did not boot" type="failed">`)
	assert.Contains(t, string(xml), `<failure message="job not run" type="not run">`)
	assert.Contains(t, string(xml), `tests="3" failures="3"`)

	// Without --release, runs lists the runs outside the releases' folders
	// and says which releases have runs and how to see them.
	res = imgflow(t, "runs", "--root", root, "--state", state)
	require.Equal(t, 0, res.code, res.String())
	assert.Equal(t, "no runs yet\nrelease flatcar: runs of 1 job, summarised by: imgflow runs --release releases/flatcar.star\n", res.stdout)
}

func TestContinueTakesTheLatestRunOfTheJournalOrStartsOne(t *testing.T) {
	root := repoRoot(t)
	state, journalDir := t.TempDir(), filepath.Join(t.TempDir(), "job")
	first := runFlatcar(t, state, "--journal", journalDir, "--continue")
	require.Equal(t, 0, first.code, first.String())
	assert.Contains(t, first.stdout, "imgflow run workflows/flatcar.star", "an empty journal: a new run")
	second := runFlatcar(t, state, "--journal", journalDir, "--continue")
	require.Equal(t, 0, second.code, second.String())
	assert.Contains(t, second.stdout, "imgflow run --continue workflows/flatcar.star")
	assert.Equal(t, runIDRE.FindStringSubmatch(first.stdout)[1], runIDRE.FindStringSubmatch(second.stdout)[1], "the same run")
	runs, err := journal.List(journalDir)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	assert.Equal(t, 2, runs[0].Attempts)

	other := imgflow(t, "run", "--root", root, "--state", state, "--journal", journalDir, "--continue", filepath.Join(root, "workflows", "flatcar_capi.star"))
	assert.Equal(t, 1, other.code)
	assert.Contains(t, other.stderr, "holds runs of workflows/flatcar.star, not workflows/flatcar_capi.star")
	both := runFlatcar(t, state, "--journal", journalDir, "--continue", "--resume", "x")
	assert.Equal(t, 1, both.code)
	assert.Contains(t, both.stderr, "--resume RUN_ID and --continue: give one")
}
