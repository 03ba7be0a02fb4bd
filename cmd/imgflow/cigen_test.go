package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/imgflow/imgflow/internal/testtool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// shippedReleases are the release files of the repository.
func shippedReleases(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot(t), "releases", "*.star"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	return files
}

// generated runs imgflow ci on a release file of the repository.
func generated(t *testing.T, engine, release string) string {
	t.Helper()
	res := imgflow(t, "ci", "--root", repoRoot(t), engine, release)
	require.Equal(t, 0, res.code, res.String())
	return res.stdout
}

// makeCIFlags are the flags `make ci-files` generates ci/ with.
func makeCIFlags(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "Makefile"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^CI_FLAGS := (.*)$`).FindStringSubmatch(string(data))
	require.NotNil(t, m, "the Makefile's CI_FLAGS")
	return strings.Fields(m[1])
}

func TestCommittedCIDefinitionsAreUpToDate(t *testing.T) {
	flags := makeCIFlags(t)
	for _, rel := range shippedReleases(t) {
		name := strings.TrimSuffix(filepath.Base(rel), ".star")
		for _, engine := range ciEngines {
			committed := filepath.Join(repoRoot(t), "ci", engine, "release-"+name+".yml")
			want, err := os.ReadFile(committed)
			require.NoError(t, err, "ci/%s/release-%s.yml is missing: run make ci-files", engine, name)
			res := imgflow(t, append(append([]string{"ci", "--root", repoRoot(t)}, flags...), engine, rel)...)
			require.Equal(t, 0, res.code, res.String())
			assert.Equal(t, string(want), res.stdout,
				"ci/%s/release-%s.yml is out of date: run make ci-files (imgflow ci %s releases/%s.star -o ci/%s/release-%s.yml)", engine, name, engine, name, engine, name)
		}
	}
}

// requireActionlint returns the actionlint on PATH (make deps installs
// v1.7.12 into .tools/bin). Without it the test is skipped, or fails
// under CI=true: CI must lint the generated workflows.
func requireActionlint(t *testing.T) string {
	t.Helper()
	return testtool.Require(t, "actionlint", "run `make deps` (go install github.com/rhysd/actionlint/cmd/actionlint@v1.7.12 into .tools/bin)")
}

func actionlint(t *testing.T, bin, file string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-no-color", "-shellcheck=", "-pyflakes=", file)
	cmd.Dir = filepath.Dir(file)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestGeneratedGitHubWorkflowsPassActionlint(t *testing.T) {
	bin := requireActionlint(t)
	files, err := filepath.Glob(filepath.Join(repoRoot(t), "ci", "github", "*.yml"))
	require.NoError(t, err)
	require.Len(t, files, len(shippedReleases(t)))
	for _, f := range files {
		out, err := actionlint(t, bin, f)
		assert.NoError(t, err, "actionlint %s:\n%s", f, out)
	}

	// The check can fail: a matrix job without runs-on is refused.
	data, err := os.ReadFile(files[0])
	require.NoError(t, err)
	broken := filepath.Join(t.TempDir(), "broken.yml")
	require.NoError(t, os.WriteFile(broken, []byte(strings.Replace(string(data), "    runs-on: ubuntu-latest\n", "", 1)), 0o644))
	out, err := actionlint(t, bin, broken)
	require.Error(t, err)
	assert.Contains(t, out, `"runs-on" section is missing`)
}

func TestGitHubWorkflowRunsEachJobWithItsJournalAndNoSecret(t *testing.T) {
	root := repoRoot(t)
	text := generated(t, "github", filepath.Join(root, "releases", "aks.star"))
	var w map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(text), &w))
	assert.Equal(t, map[string]any{"contents": "read", "id-token": "write"}, w["permissions"], "OIDC for azure/login")
	jobs := w["jobs"].(map[string]any)
	build := jobs["build"].(map[string]any)
	assert.Equal(t, "plan", build["needs"], "the plan job runs first")
	include := build["strategy"].(map[string]any)["matrix"].(map[string]any)["include"].([]any)
	require.Len(t, include, 32, "one job per job of AgentBaker's release pipeline")
	first := include[0].(map[string]any)
	assert.Equal(t, "buildazurelinuxv3gen1", first["job"])
	assert.Equal(t, "workflows/linux.star --var agentbaker=//third_party/AgentBaker --var job=buildAzureLinuxV3gen1", first["args"])
	steps := build["steps"].([]any)
	assert.Equal(t, `imgflow run ${{ matrix.args }} --target azure --journal "$IMGFLOW_JOURNAL_URL/aks/${{ matrix.job }}" --continue --artifacts "imgflow-out/${{ matrix.job }}/artifacts" --journal-copy "imgflow-out/${{ matrix.job }}/journal"`,
		stepRunning(t, build, "imgflow run "))
	assert.Equal(t, "${{ secrets.IMGFLOW_SECRET_UA_TOKEN }}", build["env"].(map[string]any)["IMGFLOW_SECRET_UA_TOKEN"], "the FIPS jobs' Ubuntu Pro token, from the repository's secrets")
	var login map[string]any
	for _, s := range steps {
		if s.(map[string]any)["uses"] == "azure/login@v2" {
			login = s.(map[string]any)["with"].(map[string]any)
		}
	}
	assert.Equal(t, map[string]any{"client-id": "${{ vars.AZURE_CLIENT_ID }}", "tenant-id": "${{ vars.AZURE_TENANT_ID }}", "subscription-id": "${{ vars.AZURE_SUBSCRIPTION_ID }}"}, login)
	summary := jobs["summary"].(map[string]any)
	assert.Equal(t, "build", summary["needs"])
	assert.Equal(t, "${{ always() }}", summary["if"], "the fan-in runs when jobs failed too")
	assert.Contains(t, text, `imgflow runs --release releases/aks.star --journal "$IMGFLOW_JOURNAL_URL" --junit release-aks/junit.xml`)
	assert.NotContains(t, text, "client-secret")
	assert.NotRegexp(t, `sig=|AccountKey|password`, text)
	var clone map[string]any
	for _, s := range steps {
		if s.(map[string]any)["name"] == "checkout Azure/AgentBaker" {
			clone = s.(map[string]any)
		}
	}
	require.NotNil(t, clone, "the jobs build from AgentBaker's checkout: the job clones it")
	assert.Equal(t, map[string]any{"repository": "Azure/AgentBaker", "path": "third_party/AgentBaker"}, clone["with"])
}

// azureIdentifier is what Azure Pipelines accepts as a stage or job name
// and a matrix entry name.
var azureIdentifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// The Azure Pipelines YAML schema's shape (learn.microsoft.com's YAML
// schema reference): the keys each level takes, and the tasks' inputs.
var (
	azPipelineKeys = set("trigger", "pr", "parameters", "variables", "stages", "name", "resources", "schedules")
	azParamKeys    = set("name", "displayName", "type", "default", "values")
	azStageKeys    = set("stage", "displayName", "dependsOn", "condition", "variables", "jobs", "pool", "lockBehavior", "templateContext")
	azJobKeys      = set("job", "displayName", "dependsOn", "condition", "continueOnError", "timeoutInMinutes", "cancelTimeoutInMinutes", "variables", "strategy", "pool", "container", "services", "workspace", "uses", "steps", "templateContext")
	azStrategyKeys = set("matrix", "maxParallel")
	// A deployment job (an environment's approvals and checks run first),
	// its runOnce strategy.
	azDeploymentKeys = set("deployment", "displayName", "dependsOn", "condition", "continueOnError", "timeoutInMinutes", "cancelTimeoutInMinutes", "variables", "pool", "environment", "strategy", "workspace", "container", "services", "templateContext")
	azRunOnceKeys    = set("preDeploy", "deploy", "routeTraffic", "postRouteTraffic", "on")
	azStepKinds      = set("task", "script", "bash", "pwsh", "powershell", "checkout", "download", "downloadBuild", "getPackage", "publish", "template", "reviewApp")
	azStepKeys       = set("task", "script", "bash", "pwsh", "powershell", "checkout", "download", "artifact", "patterns", "inputs", "displayName", "name", "condition", "continueOnError", "enabled", "env", "timeoutInMinutes", "retryCountOnTaskFailure", "target", "workingDirectory", "failOnStderr")
	// azTaskInputs are the inputs each task takes, the required ones first
	// (the tasks' task.json).
	azTaskInputs = map[string]struct{ required, optional []string }{
		"AzureCLI@2":           {[]string{"azureSubscription", "scriptType", "scriptLocation"}, []string{"inlineScript", "scriptPath", "arguments", "addSpnToEnvironment", "useGlobalConfig", "workingDirectory", "failOnStandardError", "powerShellErrorActionPreference", "visibleAzLogin"}},
		"PublishTestResults@2": {[]string{"testResultsFiles"}, []string{"testResultsFormat", "searchFolder", "mergeTestResults", "failTaskOnFailedTests", "failTaskOnMissingResultsFile", "testRunTitle", "buildPlatform", "buildConfiguration", "publishRunAttachments"}},
		"GoTool@0":             {[]string{"version"}, []string{"goPath", "goBin", "goDownloadUrl"}},
		// targetPath's alias is path, artifact's artifactName.
		"PublishPipelineArtifact@1": {[]string{"targetPath"}, []string{"artifact", "publishLocation", "fileSharePath", "parallel", "parallelCount", "properties"}},
		// Each input under its name, not its alias (source, artifact, patterns, path).
		"DownloadPipelineArtifact@2": {nil, []string{"buildType", "project", "definition", "specificBuildWithTriggering", "buildVersionToDownload", "allowFailedBuilds", "allowPartiallySucceededBuilds", "branchName", "pipelineId", "tags", "artifactName", "itemPattern", "targetPath"}},
	}
)

func set(keys ...string) map[string]bool {
	m := map[string]bool{}
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// checkAzurePipeline checks a pipeline against the schema's shape and
// returns what does not fit.
func checkAzurePipeline(p map[string]any) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	keysIn := func(where string, m map[string]any, allowed map[string]bool) {
		for k := range m {
			if !allowed[k] {
				bad("%s: unknown key %q", where, k)
			}
		}
	}
	keysIn("pipeline", p, azPipelineKeys)
	for i, param := range asList(p["parameters"]) {
		keysIn(fmt.Sprintf("parameters[%d]", i), asMap(param), azParamKeys)
	}
	stages := asList(p["stages"])
	if len(stages) == 0 {
		bad("pipeline: no stages")
	}
	seen := map[string]bool{}
	for _, s := range stages {
		stage := asMap(s)
		name, _ := stage["stage"].(string)
		where := "stage " + name
		keysIn(where, stage, azStageKeys)
		if !azureIdentifier.MatchString(name) {
			bad("%s: the name is not an identifier", where)
		}
		if dep, ok := stage["dependsOn"].(string); ok && !seen[dep] {
			bad("%s: dependsOn %q is not an earlier stage", where, dep)
		}
		seen[name] = true
		jobs := asList(stage["jobs"])
		if len(jobs) == 0 {
			bad("%s: no jobs", where)
		}
		for _, j := range jobs {
			job := asMap(j)
			if dname, ok := job["deployment"].(string); ok {
				problems = append(problems, checkAzureDeployment(where+" deployment "+dname, job)...)
				continue
			}
			jname, _ := job["job"].(string)
			jwhere := where + " job " + jname
			keysIn(jwhere, job, azJobKeys)
			if !azureIdentifier.MatchString(jname) {
				bad("%s: the name is not an identifier", jwhere)
			}
			if _, ok := asMap(job["pool"])["vmImage"].(string); !ok {
				bad("%s: pool.vmImage is not a string", jwhere)
			}
			if st, ok := job["strategy"]; ok {
				keysIn(jwhere+" strategy", asMap(st), azStrategyKeys)
				for entry, vars := range asMap(asMap(st)["matrix"]) {
					if !azureIdentifier.MatchString(entry) {
						bad("%s: matrix entry %q is not an identifier", jwhere, entry)
					}
					for k, v := range asMap(vars) {
						if _, ok := v.(string); !ok {
							bad("%s: matrix %s.%s is not a string", jwhere, entry, k)
						}
					}
				}
			}
			steps := asList(job["steps"])
			if len(steps) == 0 {
				bad("%s: no steps", jwhere)
			}
			for i, st := range steps {
				problems = append(problems, checkAzureStep(fmt.Sprintf("%s step %d", jwhere, i), asMap(st))...)
			}
		}
	}
	return problems
}

func checkAzureDeployment(where string, job map[string]any) []string {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	for k := range job {
		if !azDeploymentKeys[k] {
			bad("%s: unknown key %q", where, k)
		}
	}
	if name, _ := job["deployment"].(string); !azureIdentifier.MatchString(name) {
		bad("%s: the name is not an identifier", where)
	}
	if env, _ := job["environment"].(string); env == "" {
		bad("%s: no environment", where)
	}
	if _, ok := asMap(job["pool"])["vmImage"].(string); !ok {
		bad("%s: pool.vmImage is not a string", where)
	}
	runOnce := asMap(asMap(job["strategy"])["runOnce"])
	for k := range runOnce {
		if !azRunOnceKeys[k] {
			bad("%s: runOnce: unknown key %q", where, k)
		}
	}
	steps := asList(asMap(runOnce["deploy"])["steps"])
	if len(steps) == 0 {
		bad("%s: no strategy.runOnce.deploy.steps", where)
	}
	for i, st := range steps {
		problems = append(problems, checkAzureStep(fmt.Sprintf("%s step %d", where, i), asMap(st))...)
	}
	return problems
}

func checkAzureStep(where string, step map[string]any) []string {
	var problems []string
	kinds := 0
	for k := range step {
		if azStepKinds[k] {
			kinds++
		}
		if !azStepKeys[k] {
			problems = append(problems, fmt.Sprintf("%s: unknown key %q", where, k))
		}
	}
	if kinds != 1 {
		problems = append(problems, fmt.Sprintf("%s: want exactly one of task, script, checkout…, got %d", where, kinds))
	}
	task, ok := step["task"].(string)
	if !ok {
		return problems
	}
	spec, known := azTaskInputs[task]
	if !known {
		return append(problems, fmt.Sprintf("%s: task %s is not one the generator uses", where, task))
	}
	inputs := asMap(step["inputs"])
	allowed := set(append(spec.required, spec.optional...)...)
	for _, r := range spec.required {
		if _, ok := inputs[r].(string); !ok {
			problems = append(problems, fmt.Sprintf("%s: %s lacks the input %s", where, task, r))
		}
	}
	for k := range inputs {
		if !allowed[k] {
			problems = append(problems, fmt.Sprintf("%s: %s has no input %s", where, task, k))
		}
	}
	if task == "AzureCLI@2" && inputs["scriptLocation"] == "inlineScript" && inputs["inlineScript"] == nil {
		problems = append(problems, fmt.Sprintf("%s: scriptLocation inlineScript without inlineScript", where))
	}
	return problems
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func TestGeneratedAzurePipelinesFitTheSchema(t *testing.T) {
	for _, rel := range shippedReleases(t) {
		var p map[string]any
		require.NoError(t, yaml.Unmarshal([]byte(generated(t, "azure-pipelines", rel)), &p))
		assert.Empty(t, checkAzurePipeline(p), rel)
	}

	// The check can fail.
	var p map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(`
stages:
  - stage: build-it
    dependsOn: plan
    jobs:
      - job: b
        pool: {vmImage: ubuntu-latest}
        strategy: {matrix: {"a-b": {X: "1"}}, parallel: 2}
        steps:
          - task: AzureCLI@2
            script: echo
            inputs: {scriptType: bash, scriptLocation: inlineScript, inlineScript: x}
`), &p))
	problems := strings.Join(checkAzurePipeline(p), "\n")
	for _, want := range []string{
		"stage build-it: the name is not an identifier",
		`dependsOn "plan" is not an earlier stage`,
		`matrix entry "a-b" is not an identifier`,
		`strategy: unknown key "parallel"`,
		"want exactly one of task, script, checkout…, got 2",
		"AzureCLI@2 lacks the input azureSubscription",
	} {
		assert.Contains(t, problems, want)
	}
}

func TestAzurePipelineRunsEachJobWithItsJournalThroughTheServiceConnection(t *testing.T) {
	text := generated(t, "azure-pipelines", filepath.Join(repoRoot(t), "releases", "aks.star"))
	var p map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(text), &p))
	stages := asList(p["stages"])
	require.Len(t, stages, 3)
	assert.Equal(t, []any{"plan", "build", "summary"}, []any{asMap(stages[0])["stage"], asMap(stages[1])["stage"], asMap(stages[2])["stage"]})
	assert.Equal(t, "always()", asMap(stages[2])["condition"])
	build := asMap(asList(asMap(stages[1])["jobs"])[0])
	matrix := asMap(asMap(build["strategy"])["matrix"])
	require.Len(t, matrix, 32, "one job per job of AgentBaker's release pipeline")
	assert.Equal(t, map[string]any{"JOB_ID": "build2204fipstlgen2containerd", "JOB_ARGS": "workflows/linux.star --var agentbaker=//third_party/AgentBaker --var job=build2204fipstlgen2containerd"}, matrix["build2204fipstlgen2containerd"])
	steps := asList(build["steps"])
	last := asMap(steps[len(steps)-2])
	assert.Equal(t, "AzureCLI@2", last["task"])
	assert.Equal(t, "git clone --depth 1 https://github.com/Azure/AgentBaker third_party/AgentBaker", asMap(steps[1])["script"], "the jobs build from AgentBaker's checkout: the job clones it")
	inputs := asMap(last["inputs"])
	assert.Equal(t, "${{ parameters.serviceConnection }}", inputs["azureSubscription"])
	assert.Contains(t, inputs["inlineScript"], `imgflow run $(JOB_ARGS) --target azure --journal "$IMGFLOW_JOURNAL_URL/aks/$JOB_ID" --continue`)
	assert.Equal(t, "$(IMGFLOW_SECRET_UA_TOKEN)", asMap(last["env"])["IMGFLOW_SECRET_UA_TOKEN"], "a secret variable reaches the script only when mapped")
	assert.Equal(t, "imgflow-release", asMap(asList(p["parameters"])[0])["default"])
	assert.NotRegexp(t, `sig=|AccountKey|password|clientSecret`, text)
}

func TestCIRefusesWhatIsNotARelease(t *testing.T) {
	root := repoRoot(t)
	res := imgflow(t, "ci", "--root", root, "github", filepath.Join(root, "workflows", "linux.star"))
	assert.Equal(t, 1, res.code)
	assert.Contains(t, res.stderr, "is not a release file")
	res = imgflow(t, "ci", "--root", root, "jenkins", filepath.Join(root, "releases", "aks.star"))
	assert.Equal(t, 1, res.code)
	assert.Contains(t, res.stderr, "ci takes an engine (github or azure-pipelines)")
}

// releases/capz.star asks for approval("image-promotion-approval", gate =
// "promote"): as image-builder's workflow, each job builds and tests up to
// the workflow's gate in the build job, which waits on no one; the promote
// job, which needs the build job, runs in the environment whose reviewers
// approve it and continues the same journal past the gate.
func TestCIGatesThePromotionOnTheReleasesApproval(t *testing.T) {
	capz := filepath.Join(repoRoot(t), "releases", "capz.star")
	gh := generated(t, "github", capz)
	var w map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(gh), &w))
	jobs := asMap(w["jobs"])
	assert.NotContains(t, jobs, "approve", "no approval before the build")
	build, promote := asMap(jobs["build"]), asMap(jobs["promote"])
	require.NotNil(t, promote, "a promote job")
	assert.Equal(t, "plan", build["needs"])
	assert.NotContains(t, build, "environment", "the build job waits on no approval")
	assert.Equal(t, "build", promote["needs"], "the promote job runs after every build job")
	assert.Equal(t, "image-promotion-approval", promote["environment"], "the promote job waits on the environment's reviewers")
	assert.Equal(t, "promote", asMap(jobs["summary"])["needs"])
	assert.Equal(t, asMap(build["strategy"])["matrix"], asMap(promote["strategy"])["matrix"], "a promote job per build job")
	buildRun, promoteRun := stepRunning(t, build, "imgflow run "), stepRunning(t, promote, "imgflow run ")
	journalOf := regexp.MustCompile(`--journal "[^"]+"`)
	assert.Contains(t, buildRun, "--continue --stop-at promote")
	assert.NotContains(t, promoteRun, "--stop-at")
	assert.Contains(t, promoteRun, "--continue")
	assert.Equal(t, journalOf.FindString(buildRun), journalOf.FindString(promoteRun), "the promote job continues the build job's run")
	assert.Equal(t, "tested-${{ matrix.job }}", stepUsing(t, build, "actions/upload-artifact@v4")["with"].(map[string]any)["name"])
	assert.Equal(t, "tested-${{ matrix.job }}", stepUsing(t, promote, "actions/download-artifact@v4")["with"].(map[string]any)["name"])
	assert.Equal(t, "published-${{ matrix.job }}", stepUsing(t, promote, "actions/upload-artifact@v4")["with"].(map[string]any)["name"])
	assert.Equal(t, "published-*", stepUsing(t, asMap(jobs["summary"]), "actions/download-artifact@v4")["with"].(map[string]any)["pattern"],
		"the summary gathers what the promote jobs published")

	az := generated(t, "azure-pipelines", capz)
	var p map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(az), &p))
	var order []string
	var deployments []any
	for _, s := range asList(p["stages"]) {
		stage := asMap(s)
		order = append(order, fmt.Sprintf("%v<-%v", stage["stage"], stage["dependsOn"]))
		if stage["stage"] == "promote" {
			deployments = asList(stage["jobs"])
		}
	}
	assert.Equal(t, []string{"plan<-<nil>", "build<-plan", "promote<-build", "summary<-promote"}, order)
	require.Len(t, deployments, 13, "a deployment job per release job")
	for _, d := range deployments {
		assert.Equal(t, "image-promotion-approval", asMap(d)["environment"], "a deployment job: the environment's approval check runs first")
	}
	assert.Contains(t, az, "--continue --stop-at promote")
	assert.Contains(t, az, "download: current")
	assert.Empty(t, checkAzurePipeline(p))

	// A release without approval() has neither.
	flatcar := generated(t, "github", filepath.Join(repoRoot(t), "releases", "flatcar.star"))
	assert.NotContains(t, flatcar, "approve:")
	assert.NotContains(t, flatcar, "promote:")
	assert.NotContains(t, flatcar, "--stop-at")
}

// stepRunning returns the run script of job's step whose script contains s.
func stepRunning(t *testing.T, job map[string]any, s string) string {
	t.Helper()
	for _, st := range asList(job["steps"]) {
		if run, _ := asMap(st)["run"].(string); strings.Contains(run, s) {
			return run
		}
	}
	t.Fatalf("no step runs %q", s)
	return ""
}

// stepUsing returns job's step that uses action.
func stepUsing(t *testing.T, job map[string]any, action string) map[string]any {
	t.Helper()
	for _, st := range asList(job["steps"]) {
		if asMap(st)["uses"] == action {
			return asMap(st)
		}
	}
	t.Fatalf("no step uses %s", action)
	return nil
}
