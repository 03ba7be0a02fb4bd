package main

import (
	"fmt"
	"strings"

	"github.com/imgflow/imgflow/cloud/azure"
	"github.com/imgflow/imgflow/release"
)

// The Azure Pipelines pipeline of a release: a plan stage, a build stage
// whose job has a matrix entry per release job, and a summary stage that
// runs whatever happened and publishes the JUnit report. Azure
// credentials come from a service connection (workload identity
// federation) through AzureCLI@2; the journal URL and the workflow
// secrets from pipeline variables (secret ones for the secrets).

type azPipeline struct {
	Trigger    string        `yaml:"trigger"`
	PR         string        `yaml:"pr"`
	Parameters []azParameter `yaml:"parameters"`
	Stages     []azStage     `yaml:"stages"`
}

type azParameter struct {
	Name        string `yaml:"name"`
	DisplayName string `yaml:"displayName"`
	Type        string `yaml:"type"`
	Default     string `yaml:"default"`
}

type azStage struct {
	Stage       string `yaml:"stage"`
	DisplayName string `yaml:"displayName"`
	DependsOn   string `yaml:"dependsOn,omitempty"`
	Condition   string `yaml:"condition,omitempty"`
	Jobs        []any  `yaml:"jobs"` // azJob or azDeployment
}

// azDeployment is a deployment job: its environment's approvals and
// checks run before it starts.
type azDeployment struct {
	Deployment       string `yaml:"deployment"`
	DisplayName      string `yaml:"displayName"`
	Environment      string `yaml:"environment"`
	TimeoutInMinutes int    `yaml:"timeoutInMinutes"`
	Pool             azPool `yaml:"pool"`
	Strategy         struct {
		RunOnce struct {
			Deploy struct {
				Steps []azStep `yaml:"steps"`
			} `yaml:"deploy"`
		} `yaml:"runOnce"`
	} `yaml:"strategy"`
}

type azJob struct {
	Job              string      `yaml:"job"`
	DisplayName      string      `yaml:"displayName"`
	TimeoutInMinutes int         `yaml:"timeoutInMinutes"`
	Pool             azPool      `yaml:"pool"`
	Strategy         *azStrategy `yaml:"strategy,omitempty"`
	Steps            []azStep    `yaml:"steps"`
}

type azPool struct {
	VMImage string `yaml:"vmImage"`
}

type azStrategy struct {
	MaxParallel int                          `yaml:"maxParallel,omitempty"`
	Matrix      map[string]map[string]string `yaml:"matrix"`
}

type azStep struct {
	Checkout string `yaml:"checkout,omitempty"`
	// Download and Artifact: a pipeline artifact of this run
	// (download: current).
	Download    string `yaml:"download,omitempty"`
	Artifact    string `yaml:"artifact,omitempty"`
	Task        string `yaml:"task,omitempty"`
	Script      string `yaml:"script,omitempty"`
	DisplayName string `yaml:"displayName"`
	Condition   string `yaml:"condition,omitempty"`
	// ContinueOnError: a summary with no job artifact to gather still reports.
	ContinueOnError bool              `yaml:"continueOnError,omitempty"`
	Inputs          map[string]string `yaml:"inputs,omitempty"`
	Env             map[string]string `yaml:"env,omitempty"`
}

// azureMatrixKey is a job id as a matrix entry name, which takes letters,
// digits and underscores only.
func azureMatrixKey(id string) string { return strings.ReplaceAll(id, "-", "_") }

// azurePipeline renders the release's Azure Pipelines YAML.
func azurePipeline(rel *release.Release, o ciOptions) ([]byte, error) {
	journal := "$" + o.journalVar // non-secret pipeline variables are in the environment
	env := map[string]string{}
	for _, s := range rel.Secrets() {
		env[secretEnv(s)] = fmt.Sprintf("$(%s)", secretEnv(s)) // secret variables must be mapped
	}
	// imgflow's azure-pipelines credential asks the service connection
	// for a new OIDC token whenever its Azure token expires (the CLI
	// login cannot): it needs the System.AccessToken mapped, and the
	// connection's ids, which AzureCLI@2 sets (AZURESUBSCRIPTION_*).
	env[envCredential] = string(azure.CredentialAzurePipelines)
	env["SYSTEM_ACCESSTOKEN"] = "$(System.AccessToken)"
	cli := func(name, script string) azStep {
		return azStep{Task: "AzureCLI@2", DisplayName: name, Env: env, Inputs: map[string]string{
			"azureSubscription": "${{ parameters.serviceConnection }}",
			"scriptType":        "bash",
			"scriptLocation":    "inlineScript",
			// The service connection's subscription, unless a pipeline variable names one.
			"inlineScript": "export AZURE_SUBSCRIPTION_ID=\"${AZURE_SUBSCRIPTION_ID:-$(az account show --query id -o tsv)}\"\n" + script,
		}}
	}
	pool := azPool{VMImage: "ubuntu-latest"}
	p := azPipeline{
		Trigger: "none",
		PR:      "none",
		Parameters: []azParameter{{Name: "serviceConnection", DisplayName: "Azure service connection (workload identity federation)",
			Type: "string", Default: o.serviceConnection}},
	}
	p.Stages = append(p.Stages, azStage{Stage: "plan", DisplayName: "plan " + rel.File, Jobs: []any{azJob{
		Job: "plan", DisplayName: "imgflow plan", TimeoutInMinutes: 30, Pool: pool,
		Steps: append(azureSetup(o, true, rel.Checkouts), cli("imgflow plan", planCommand(rel, o.target))),
	}}})
	matrix := map[string]map[string]string{}
	for _, j := range rel.Jobs {
		matrix[azureMatrixKey(j.ID)] = map[string]string{"JOB_ID": j.ID, "JOB_ARGS": jobCommandArgs(j)}
	}
	buildAfter := "plan"
	gated := rel.Approval != "" && rel.ApprovalGate != ""
	if rel.Approval != "" && !gated {
		d := azDeployment{Deployment: "approve", DisplayName: "approval in " + rel.Approval, Environment: rel.Approval, TimeoutInMinutes: 5, Pool: pool}
		d.Strategy.RunOnce.Deploy.Steps = []azStep{{Script: "echo \"approved in environment " + rel.Approval + "\"", DisplayName: "approved"}}
		p.Stages = append(p.Stages, azStage{Stage: "approve", DisplayName: "approve the release in " + rel.Approval, DependsOn: "plan", Jobs: []any{d}})
		buildAfter = "approve"
	}
	// $(JOB_ARGS) is replaced in the script's text, so its quoting holds.
	// Each job keeps its artifacts and journal copy as a pipeline
	// artifact, however it ended; a retried job's attempt has its own
	// (an artifact's name is taken once per run).
	out := jobOutputs("$(Build.ArtifactStagingDirectory)/$(JOB_ID)")
	buildSteps := append(azureSetup(o, true, rel.Checkouts),
		cli("imgflow run $(JOB_ID)", runCommand(rel, o.target, "$(JOB_ARGS)", "$JOB_ID", journal)+out.flags()),
		azureKeep("keep the job's artifacts and journal", "job-$(JOB_ID)-attempt$(System.JobAttempt)", out.dir()))
	last := "build"
	gathered := "job-*"
	var promoteStage *azStage
	if gated {
		// As image-builder's build, test, approve_promotion and promote
		// jobs: each job runs up to the workflow's gate (built and
		// smoke-tested) and publishes its artifacts for the reviewers; the
		// promote stage's deployment jobs, one per job, wait for the
		// environment's approval (checked once for the stage), then
		// continue each job's run from its journal past the gate.
		buildSteps[len(buildSteps)-2] = cli("imgflow run $(JOB_ID)", runCommand(rel, o.target, "$(JOB_ARGS)", "$JOB_ID", journal)+" --stop-at "+rel.ApprovalGate+out.flags())
		buildSteps[len(buildSteps)-1] = azureKeep("keep what was tested, and the journal", "tested-$(JOB_ID)", out.dir())
		var promote []any
		for _, j := range rel.Jobs {
			d := azDeployment{Deployment: rel.ApprovalGate + "_" + azureMatrixKey(j.ID), DisplayName: rel.ApprovalGate + " " + j.ID, Environment: rel.Approval, TimeoutInMinutes: 360, Pool: pool}
			downloaded := jobOutputs("$(Pipeline.Workspace)/tested-" + j.ID)
			d.Strategy.RunOnce.Deploy.Steps = append(azureSetup(o, true, rel.Checkouts),
				azStep{Download: "current", Artifact: "tested-" + j.ID, DisplayName: "download what was tested"},
				cli("imgflow run --continue "+j.ID, runCommand(rel, o.target, jobCommandArgs(j), j.ID, journal)+downloaded.flags()),
				azureKeep("keep what was published, and the journal", "published-"+j.ID+"-attempt$(System.JobAttempt)", downloaded.dir()))
			promote = append(promote, d)
		}
		promoteStage = &azStage{Stage: rel.ApprovalGate, DisplayName: rel.ApprovalGate + " after the approval in " + rel.Approval, DependsOn: "build", Jobs: promote}
		last = rel.ApprovalGate
		gathered = "published-*"
	}
	p.Stages = append(p.Stages, azStage{Stage: "build", DisplayName: "build the jobs of " + rel.File, DependsOn: buildAfter, Jobs: []any{azJob{
		Job: "build", DisplayName: "imgflow run", TimeoutInMinutes: 360, Pool: pool,
		Strategy: &azStrategy{MaxParallel: o.maxParallel, Matrix: matrix},
		Steps:    buildSteps,
	}}})
	if promoteStage != nil {
		p.Stages = append(p.Stages, *promoteStage)
	}
	// The summary gathers every job's artifacts and journal copy, and its
	// report, into one artifact the release's next steps take.
	report := "$(Build.ArtifactStagingDirectory)/release-" + rel.Name
	junit := report + "/junit.xml"
	p.Stages = append(p.Stages, azStage{Stage: "summary", DisplayName: "summary of " + rel.File, DependsOn: last, Condition: "always()", Jobs: []any{azJob{
		Job: "summary", DisplayName: "imgflow runs --release", TimeoutInMinutes: 15, Pool: pool,
		Steps: append(azureSetup(o, false, nil),
			azStep{Task: "DownloadPipelineArtifact@2", DisplayName: "gather the jobs' artifacts and journals", ContinueOnError: true, Inputs: map[string]string{
				"buildType":   "current",
				"itemPattern": gathered + "/**",
				"targetPath":  report + "/jobs",
			}},
			cli("imgflow runs --release", "mkdir -p \""+report+"\"\n"+summaryCommand(rel, journal, "\""+junit+"\"")),
			azStep{Task: "PublishTestResults@2", DisplayName: "publish the jobs as tests", Condition: "always()", Inputs: map[string]string{
				"testResultsFormat":            "JUnit",
				"testResultsFiles":             junit,
				"testRunTitle":                 "release " + rel.Name,
				"failTaskOnMissingResultsFile": "false",
			}},
			azureKeep("keep the release's report, artifacts and journals", "release-"+rel.Name+"-attempt$(System.JobAttempt)", report),
		),
	}}})
	return marshalYAML(generatedHeader("azure-pipelines", rel), p)
}

// azureKeep publishes a job's directory as the pipeline artifact name,
// however the job ended (a failed job's journal matters most).
func azureKeep(step, name, dir string) azStep {
	return azStep{Task: "PublishPipelineArtifact@1", DisplayName: step, Condition: "always()",
		Inputs: map[string]string{"targetPath": dir, "artifact": name}}
}

// azureSetup are the steps every job starts with: the workspace and the
// release's checkouts (cloned: a checkout step of another repository
// needs a service connection), Go and imgflow, and packer for the jobs
// that plan or run workflows.
func azureSetup(o ciOptions, withPacker bool, checkouts []release.Checkout) []azStep {
	packer := fmt.Sprintf("curl -fsSLo packer.zip https://releases.hashicorp.com/packer/%[1]s/packer_%[1]s_linux_amd64.zip\nunzip -o packer.zip packer -d \"$(Agent.ToolsDirectory)/packer\"\nrm packer.zip\necho \"##vso[task.prependpath]$(Agent.ToolsDirectory)/packer\"", o.packerVersion)
	steps := []azStep{
		{Checkout: "self", DisplayName: "checkout"},
	}
	for _, co := range checkouts {
		steps = append(steps, azStep{Script: cloneCommand(co), DisplayName: "checkout " + co.Repository})
	}
	steps = append(steps, []azStep{
		{Task: "GoTool@0", DisplayName: "set up Go", Inputs: map[string]string{"version": o.goVersion}},
		{Script: installCommand(o) + "\necho \"##vso[task.prependpath]$(go env GOPATH)/bin\"", DisplayName: "install imgflow"},
	}...)
	if withPacker {
		steps = append(steps, azStep{Script: packer, DisplayName: "set up packer"})
	}
	return steps
}

// cloneCommand clones a release's checkout into the workspace: the
// repository's default branch, or its ref (a branch, tag or commit).
func cloneCommand(co release.Checkout) string {
	url := shellQuote("https://github.com/" + co.Repository)
	if co.Ref == "" {
		return fmt.Sprintf("git clone --depth 1 %s %s", url, shellQuote(co.Path))
	}
	return fmt.Sprintf("git init -q %[1]s\ngit -C %[1]s fetch -q --depth 1 %[2]s %[3]s\ngit -C %[1]s checkout -q FETCH_HEAD", shellQuote(co.Path), url, shellQuote(co.Ref))
}
