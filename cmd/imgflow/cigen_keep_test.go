package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// Each build job keeps what its run wrote, its artifact() files
// (vhd-publishing-info.json, release notes, scan reports) and a copy of
// its journal, as an artifact of its own, however it ended; the summary
// gathers them all with its report into one artifact.
func TestGitHubJobsKeepTheirArtifactsAndJournalForTheSummary(t *testing.T) {
	var w map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(generated(t, "github", filepath.Join(repoRoot(t), "releases", "flatcar.star"))), &w))
	jobs := asMap(w["jobs"])
	build, summary := asMap(jobs["build"]), asMap(jobs["summary"])
	run := stepRunning(t, build, "imgflow run ")
	assert.Contains(t, run, `--artifacts "imgflow-out/${{ matrix.job }}/artifacts" --journal-copy "imgflow-out/${{ matrix.job }}/journal"`)
	keep := stepUsing(t, build, "actions/upload-artifact@v4")
	assert.Equal(t, "${{ always() }}", keep["if"], "a failed job's journal is kept too")
	assert.Equal(t, map[string]any{"name": "job-${{ matrix.job }}", "path": "imgflow-out/${{ matrix.job }}", "if-no-files-found": "warn", "overwrite": "true"}, keep["with"],
		"a name per job; a re-run attempt replaces its upload")

	gather := stepUsing(t, summary, "actions/download-artifact@v4")
	assert.Equal(t, map[string]any{"pattern": "job-*", "path": "release-flatcar/jobs"}, gather["with"])
	assert.Equal(t, true, gather["continue-on-error"], "the summary reports when no job uploaded anything")
	assert.Contains(t, stepRunning(t, summary, "imgflow runs "), "--junit release-flatcar/junit.xml")
	var kept map[string]any
	for _, st := range asList(summary["steps"]) {
		if asMap(st)["uses"] == "actions/upload-artifact@v4" {
			kept = asMap(asMap(st)["with"])
		}
	}
	assert.Equal(t, "release-flatcar", kept["name"])
	assert.Equal(t, "release-flatcar", kept["path"], "the jobs' artifacts and the JUnit report, in one artifact")
}

func TestAzurePipelineJobsKeepTheirArtifactsAndJournalForTheSummary(t *testing.T) {
	var p map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(generated(t, "azure-pipelines", filepath.Join(repoRoot(t), "releases", "flatcar.star"))), &p))
	stages := asList(p["stages"])
	build := asMap(asList(asMap(stages[1])["jobs"])[0])
	steps := asList(build["steps"])
	run := asMap(asMap(steps[len(steps)-2])["inputs"])["inlineScript"]
	assert.Contains(t, run, `--artifacts "$(Build.ArtifactStagingDirectory)/$(JOB_ID)/artifacts" --journal-copy "$(Build.ArtifactStagingDirectory)/$(JOB_ID)/journal"`)
	keep := asMap(steps[len(steps)-1])
	assert.Equal(t, "PublishPipelineArtifact@1", keep["task"])
	assert.Equal(t, "always()", keep["condition"])
	assert.Equal(t, map[string]any{"targetPath": "$(Build.ArtifactStagingDirectory)/$(JOB_ID)", "artifact": "job-$(JOB_ID)-attempt$(System.JobAttempt)"}, keep["inputs"],
		"a name per job and attempt: a pipeline artifact's name is taken once per run")

	summary := asMap(asList(asMap(stages[2])["jobs"])[0])
	var tasks []string
	var gather, kept map[string]any
	for _, st := range asList(summary["steps"]) {
		task, _ := asMap(st)["task"].(string)
		tasks = append(tasks, task)
		switch task {
		case "DownloadPipelineArtifact@2":
			gather = asMap(st)
		case "PublishPipelineArtifact@1":
			kept = asMap(asMap(st)["inputs"])
		}
	}
	assert.Equal(t, "GoTool@0,,DownloadPipelineArtifact@2,AzureCLI@2,PublishTestResults@2,PublishPipelineArtifact@1", strings.Join(tasks[1:], ","))
	require.NotNil(t, gather)
	assert.Equal(t, map[string]any{"buildType": "current", "itemPattern": "job-*/**", "targetPath": "$(Build.ArtifactStagingDirectory)/release-flatcar/jobs"}, gather["inputs"])
	assert.Equal(t, true, gather["continueOnError"])
	assert.Equal(t, "$(Build.ArtifactStagingDirectory)/release-flatcar", kept["targetPath"])
	assert.Empty(t, checkAzurePipeline(p))
}

// The jobs install the imgflow that generated the file: its release, or
// for a build from a clone its commit's pseudo-version; a build that knows
// no version falls back to latest, and says so.
func TestCIPinsTheVersionThatGeneratedIt(t *testing.T) {
	var stderr strings.Builder
	e := &env{stderr: &stderr}
	assert.Equal(t, "v1.4.0", pinnedVersion(e, "v1.4.0"))
	assert.Equal(t, "v0.0.0-20261206023749-04e1500abcde", pinnedVersion(e, "v0.0.0-20261206023749-04e1500abcde"))
	assert.Empty(t, stderr.String())
	assert.Equal(t, "v0.0.0-20261206023749-04e1500abcde", pinnedVersion(e, "v0.0.0-20261206023749-04e1500abcde+dirty"))
	assert.Contains(t, stderr.String(), "built from a tree with changes: the jobs install its commit, v0.0.0-20261206023749-04e1500abcde, without them")
	stderr.Reset()
	assert.Equal(t, "latest", pinnedVersion(e, "dev"))
	assert.Contains(t, stderr.String(), "does not know its version")

	// The test binary knows none: the default goes through pinnedVersion.
	aks := filepath.Join(repoRoot(t), "releases", "aks.star")
	res := imgflow(t, "ci", "--root", repoRoot(t), "github", aks)
	require.Equal(t, 0, res.code, res.String())
	assert.Contains(t, res.stdout, "go install github.com/imgflow/imgflow/cmd/imgflow@latest")
	assert.Contains(t, res.stderr, "pin one with --imgflow-version")
	res = imgflow(t, "ci", "--root", repoRoot(t), "--imgflow-version", "v1.4.0", "github", aks)
	require.Equal(t, 0, res.code, res.String())
	assert.Contains(t, res.stdout, "go install github.com/imgflow/imgflow/cmd/imgflow@v1.4.0")
	assert.NotContains(t, res.stdout, "@latest")
	assert.Empty(t, res.stderr)
	res = imgflow(t, "ci", "--root", repoRoot(t), "--imgflow-version", "checkout", "azure-pipelines", aks)
	require.Equal(t, 0, res.code, res.String())
	assert.Contains(t, res.stdout, "go install ./cmd/imgflow\n", "imgflow's own repository builds the commit it runs on")
}
