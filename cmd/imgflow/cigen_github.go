package main

import (
	"fmt"

	"github.com/imgflow/imgflow/cloud/azure"
	"github.com/imgflow/imgflow/release"
)

// The GitHub Actions workflow of a release: a plan job, one matrix job per
// release job, and a summary job that runs whatever happened. Azure
// credentials come from azure/login with OpenID Connect (federated
// credentials of an app or a managed identity: no secret), its ids from
// repository variables; workflow secrets from repository secrets.

type ghWorkflow struct {
	Name        string            `yaml:"name"`
	On          map[string]any    `yaml:"on"`
	Permissions map[string]string `yaml:"permissions"`
	Concurrency ghConcurrency     `yaml:"concurrency"`
	Env         map[string]string `yaml:"env"`
	Jobs        ghJobs            `yaml:"jobs"`
}

type ghConcurrency struct {
	Group            string `yaml:"group"`
	CancelInProgress bool   `yaml:"cancel-in-progress"`
}

type ghJobs struct {
	Plan    ghJob  `yaml:"plan"`
	Approve *ghJob `yaml:"approve,omitempty"`
	Build   ghJob  `yaml:"build"`
	Promote *ghJob `yaml:"promote,omitempty"`
	Summary ghJob  `yaml:"summary"`
}

type ghJob struct {
	Name           string            `yaml:"name"`
	Needs          string            `yaml:"needs,omitempty"`
	If             string            `yaml:"if,omitempty"`
	RunsOn         string            `yaml:"runs-on"`
	Environment    string            `yaml:"environment,omitempty"`
	TimeoutMinutes int               `yaml:"timeout-minutes"`
	Strategy       *ghStrategy       `yaml:"strategy,omitempty"`
	Env            map[string]string `yaml:"env,omitempty"`
	Steps          []ghStep          `yaml:"steps"`
}

type ghStrategy struct {
	FailFast    bool `yaml:"fail-fast"`
	MaxParallel int  `yaml:"max-parallel,omitempty"`
	Matrix      struct {
		Include []ghMatrixEntry `yaml:"include"`
	} `yaml:"matrix"`
}

type ghMatrixEntry struct {
	Job  string `yaml:"job"`
	Args string `yaml:"args"`
}

type ghStep struct {
	Name string `yaml:"name"`
	If   string `yaml:"if,omitempty"`
	// ContinueOnError: a job whose run wrote no artifact uploaded none.
	ContinueOnError bool              `yaml:"continue-on-error,omitempty"`
	Uses            string            `yaml:"uses,omitempty"`
	With            map[string]string `yaml:"with,omitempty"`
	Run             string            `yaml:"run,omitempty"`
}

// githubWorkflow renders the release's GitHub Actions workflow.
func githubWorkflow(rel *release.Release, o ciOptions) ([]byte, error) {
	journal := "$" + o.journalVar
	secrets := map[string]string{}
	for _, s := range rel.Secrets() {
		secrets[secretEnv(s)] = fmt.Sprintf("${{ secrets.%s }}", secretEnv(s))
	}
	w := ghWorkflow{
		Name: "release " + rel.Name,
		On:   map[string]any{"workflow_dispatch": map[string]any{}},
		// id-token: write lets azure/login and imgflow's github-oidc
		// credential ask for the job's OIDC token: imgflow asks anew
		// whenever its Azure token expires, which the CLI login cannot.
		Permissions: map[string]string{"contents": "read", "id-token": "write"},
		Concurrency: ghConcurrency{Group: "imgflow-release-" + rel.Name},
		Env: map[string]string{
			o.journalVar:            fmt.Sprintf("${{ vars.%s }}", o.journalVar),
			"AZURE_SUBSCRIPTION_ID": "${{ vars.AZURE_SUBSCRIPTION_ID }}",
			"AZURE_CLIENT_ID":       "${{ vars.AZURE_CLIENT_ID }}",
			"AZURE_TENANT_ID":       "${{ vars.AZURE_TENANT_ID }}",
			envCredential:           string(azure.CredentialGitHubOIDC),
		},
	}
	w.Jobs.Plan = ghJob{Name: "plan", RunsOn: "ubuntu-latest", TimeoutMinutes: 30, Env: secrets,
		Steps: append(githubSetup(o, true, rel.Checkouts), ghStep{Name: "imgflow plan", Run: planCommand(rel, o.target)})}
	out := jobOutputs("imgflow-out/${{ matrix.job }}")
	build := ghJob{Name: "${{ matrix.job }}", Needs: "plan", RunsOn: "ubuntu-latest", TimeoutMinutes: 360, Env: secrets,
		Strategy: &ghStrategy{MaxParallel: o.maxParallel},
		Steps: append(githubSetup(o, true, rel.Checkouts),
			ghStep{Name: "imgflow run", Run: runCommand(rel, o.target, "${{ matrix.args }}", "${{ matrix.job }}", journal) + out.flags()},
			githubKeep("keep the job's artifacts and journal", "job-${{ matrix.job }}", out.dir()))}
	for _, j := range rel.Jobs {
		build.Strategy.Matrix.Include = append(build.Strategy.Matrix.Include, ghMatrixEntry{Job: j.ID, Args: jobCommandArgs(j)})
	}
	last := "build"
	switch {
	case rel.Approval != "" && rel.ApprovalGate != "":
		w.Jobs.Promote = githubPromote(rel, o, &build, journal, secrets)
		last = "promote"
	case rel.Approval != "":
		w.Jobs.Approve = githubApproval(rel.Approval)
		build.Needs = "approve"
	}
	w.Jobs.Build = build
	// The summary gathers every job's artifacts and journal copy, and its
	// report, into one artifact the release's next steps take.
	gathered := "release-" + rel.Name
	pattern := "job-*"
	if w.Jobs.Promote != nil {
		pattern = "published-*"
	}
	junit := gathered + "/junit.xml"
	w.Jobs.Summary = ghJob{Name: "summary", Needs: last, If: "${{ always() }}", RunsOn: "ubuntu-latest", TimeoutMinutes: 15,
		Steps: append(githubSetup(o, false, nil),
			ghStep{Name: "gather the jobs' artifacts and journals", Uses: "actions/download-artifact@v4", ContinueOnError: true,
				With: map[string]string{"pattern": pattern, "path": gathered + "/jobs"}},
			ghStep{Name: "imgflow runs --release", Run: "mkdir -p " + gathered + "\n" + summaryCommand(rel, journal, junit)},
			githubKeep("keep the release's report, artifacts and journals", gathered, gathered),
		)}
	return marshalYAML(generatedHeader("github", rel), w)
}

// githubKeep uploads a job's directory as the artifact name, however
// the job ended (a failed job's journal matters most); a re-run attempt
// replaces its earlier upload.
func githubKeep(step, name, dir string) ghStep {
	return ghStep{Name: step, If: "${{ always() }}", Uses: "actions/upload-artifact@v4",
		With: map[string]string{"name": name, "path": dir, "if-no-files-found": "warn", "overwrite": "true"}}
}

// githubSetup are the steps every job starts with: the workspace and the
// release's checkouts, Go and imgflow, packer (for the jobs that plan or
// run workflows), and the Azure login.
func githubSetup(o ciOptions, packer bool, checkouts []release.Checkout) []ghStep {
	steps := []ghStep{{Name: "checkout", Uses: "actions/checkout@v4"}}
	for _, co := range checkouts {
		with := map[string]string{"repository": co.Repository, "path": co.Path}
		if co.Ref != "" {
			with["ref"] = co.Ref
		}
		steps = append(steps, ghStep{Name: "checkout " + co.Repository, Uses: "actions/checkout@v4", With: with})
	}
	steps = append(steps,
		ghStep{Name: "set up Go", Uses: "actions/setup-go@v5", With: map[string]string{"go-version": o.goVersion}},
		ghStep{Name: "install imgflow", Run: installCommand(o)},
	)
	if packer {
		steps = append(steps, ghStep{Name: "set up packer", Uses: "hashicorp/setup-packer@v3", With: map[string]string{"version": o.packerVersion}})
	}
	return append(steps, ghStep{Name: "azure login (OIDC)", Uses: "azure/login@v2", With: map[string]string{
		"client-id":       "${{ vars.AZURE_CLIENT_ID }}",
		"tenant-id":       "${{ vars.AZURE_TENANT_ID }}",
		"subscription-id": "${{ vars.AZURE_SUBSCRIPTION_ID }}",
	}})
}

// githubApproval is the job the release's jobs wait on when the release
// file asks for approval(): it runs in the environment, whose required
// reviewers approve it (as image-builder's approve_promotion job does)
// after the plan job showed what the release will publish.
func githubApproval(environment string) *ghJob {
	return &ghJob{Name: "approve", Needs: "plan", RunsOn: "ubuntu-latest", TimeoutMinutes: 5, Environment: environment,
		Steps: []ghStep{{Name: "approved", Run: "echo \"approved in environment " + environment + "\""}}}
}

// githubPromote splits each job at the release's approval gate, as
// image-builder's build, test, approve_promotion and promote jobs: the
// build job runs up to the workflow's gate (built and smoke-tested) and
// uploads its artifacts for the reviewers; the promote job, in the
// environment whose required reviewers approve it, continues the same run
// from its journal past the gate. It needs every build job: a release
// promotes when all its images passed.
func githubPromote(rel *release.Release, o ciOptions, build *ghJob, journal string, secrets map[string]string) *ghJob {
	out := jobOutputs("imgflow-out/${{ matrix.job }}")
	run := &build.Steps[len(build.Steps)-2]
	run.Run = runCommand(rel, o.target, "${{ matrix.args }}", "${{ matrix.job }}", journal) + " --stop-at " + rel.ApprovalGate + out.flags()
	build.Steps[len(build.Steps)-1] = githubKeep("keep what was tested, and the journal", "tested-${{ matrix.job }}", out.dir())
	steps := append(githubSetup(o, true, rel.Checkouts),
		ghStep{Name: "download what was tested", Uses: "actions/download-artifact@v4", ContinueOnError: true, With: map[string]string{"name": "tested-${{ matrix.job }}", "path": out.dir()}},
		ghStep{Name: "imgflow run --continue (" + rel.ApprovalGate + ")", Run: runCommand(rel, o.target, "${{ matrix.args }}", "${{ matrix.job }}", journal) + out.flags()},
		githubKeep("keep what was published, and the journal", "published-${{ matrix.job }}", out.dir()),
	)
	strategy := *build.Strategy
	return &ghJob{Name: rel.ApprovalGate + " ${{ matrix.job }}", Needs: "build", RunsOn: "ubuntu-latest", TimeoutMinutes: 360,
		Environment: rel.Approval, Env: secrets, Strategy: &strategy, Steps: steps}
}
