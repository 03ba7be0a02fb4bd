package release

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/internal/localpacker"
)

// repo is the repository's workspace.
func repo(t *testing.T) *builtins.Workspace {
	t.Helper()
	ws, err := localpacker.NewWorkspace("..")
	require.NoError(t, err)
	return ws
}

// scratch is a workspace holding a copy of linux.star's params and the
// given release file, releases/r.star.
func scratch(t *testing.T, release string) *builtins.Workspace {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "workflows"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "releases"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "workflows", "w.star"), []byte(
		"os = param(\"os\", default = \"Ubuntu\")\nv = param(\"os_version\", default = \"22.04\")\nf = param(\"features\", default = [])\nsecret(\"ua_token\")\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "releases", "r.star"), []byte(release), 0o644))
	ws, err := localpacker.NewWorkspace(dir)
	require.NoError(t, err)
	return ws
}

func TestAKSReleaseListsAgentBakersJobsUnderTheirNames(t *testing.T) {
	r, err := Load(context.Background(), repo(t), "releases/aks.star")
	require.NoError(t, err)
	assert.Equal(t, "aks", r.Name)
	require.Len(t, r.Jobs, 32, "the 32 jobs of AgentBaker's release pipeline")
	ids := map[string]bool{}
	for _, j := range r.Jobs {
		assert.False(t, ids[j.ID], "id %s twice", j.ID)
		ids[j.ID] = true
		assert.Equal(t, "workflows/linux.star", j.Workflow)
		assert.Regexp(t, `^releases/aks.star:\d+:8$`, j.Pos)
		assert.Equal(t, []string{"ua_token"}, j.Secrets)
	}
	j, ok := r.Job("build2204fipsgen2containerd")
	require.True(t, ok, "ids: %v", ids)
	assert.Equal(t, map[string]string{"agentbaker": "//third_party/AgentBaker", "job": "build2204fipsgen2containerd"}, j.Vars)
	assert.Equal(t, []string{"workflows/linux.star", "--var", "agentbaker=//third_party/AgentBaker", "--var", "job=build2204fipsgen2containerd"}, j.Args())

	// Where the checkout is differs between machines: --var agentbaker= overrides it, ids stay.
	require.NoError(t, r.Override(map[string]string{"agentbaker": "//testdata/agentbaker"}))
	assert.Equal(t, "//testdata/agentbaker", j.Vars["agentbaker"])
	assert.Equal(t, "build2204fipsgen2containerd", j.ID)
}

func TestIDsDoNotDependOnTheOrderVarsAreWritten(t *testing.T) {
	a, err := Load(context.Background(), scratch(t, `job("workflows/w.star", os = "Ubuntu", os_version = "24.04", features = ["cvm"])`), "releases/r.star")
	require.NoError(t, err)
	b, err := Load(context.Background(), scratch(t, `job("//workflows/w.star", features = ["cvm"], os_version = "24.04", os = "Ubuntu")`), "releases/r.star")
	require.NoError(t, err)
	assert.Equal(t, "w-cvm-ubuntu-2404", a.Jobs[0].ID)
	assert.Equal(t, a.Jobs[0].ID, b.Jobs[0].ID)
}

func TestIDsThatMeetGetAHashOfWhatTheJobRuns(t *testing.T) {
	r, err := Load(context.Background(), scratch(t, "job(\"workflows/w.star\", os_version = \"2.4\")\njob(\"workflows/w.star\", os_version = \"24\")\n"), "releases/r.star")
	require.NoError(t, err)
	assert.Regexp(t, `^w-24-[0-9a-f]{6}$`, r.Jobs[0].ID)
	assert.Regexp(t, `^w-24-[0-9a-f]{6}$`, r.Jobs[1].ID)
	assert.NotEqual(t, r.Jobs[0].ID, r.Jobs[1].ID)
}

func TestAnExplicitIDWins(t *testing.T) {
	r, err := Load(context.Background(), scratch(t, `job("workflows/w.star", id = "ubuntu-lts", os = "Ubuntu")`), "releases/r.star")
	require.NoError(t, err)
	assert.Equal(t, "ubuntu-lts", r.Jobs[0].ID)
	assert.Equal(t, map[string]string{"os": "Ubuntu"}, r.Jobs[0].Vars)
}

func TestBadReleasesAreRefusedWithTheJobsPosition(t *testing.T) {
	cases := map[string]struct{ src, want string }{
		"the same job twice": {"job(\"workflows/w.star\", os = \"Ubuntu\")\njob(\"workflows/w.star\", os = \"Ubuntu\")\n",
			"releases/r.star:2:4: job runs workflows/w.star with the same vars as the job at releases/r.star:1:4: remove one of them"},
		"an id twice": {"job(\"workflows/w.star\", id = \"a\")\njob(\"workflows/w.star\", id = \"a\", os = \"x\")\n",
			"releases/r.star:2:4: job id a is the id of the job at releases/r.star:1:4 too"},
		"a var the workflow does not declare": {"\njob(\"workflows/w.star\", generation = \"V2\")\n",
			"releases/r.star:2:4: job: workflows/w.star declares no param \"generation\": its params are features, os, os_version"},
		"a missing workflow":     {`job("workflows/nope.star")`, "releases/r.star:1:4: job: workflow workflows/nope.star"},
		"a comma in a list item": {`job("workflows/w.star", features = ["a,b"])`, "var features: list item \"a,b\" holds a comma"},
		"a bad id":               {`job("workflows/w.star", id = "Bad_ID")`, "id \"Bad_ID\": want lowercase letters"},
		"no job":                 {`X = 1`, "releases/r.star: the release lists no job"},
		"a workflow outside":     {`job("../w.star")`, "outside the workspace"},
		"a SAS in a var": {"\njob(\"workflows/w.star\", os = \"https://a.blob.core.windows.net/c/x.vhd?sv=1&sig=SASSECRET\")\n",
			"releases/r.star:2:4: job: var os: holds a credential (a SAS signature or a URL password)"},
		"a URL password in a list var": {`job("workflows/w.star", features = ["https://u:PASSW0RD@h.example/x"])`,
			"job: var features: holds a credential"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Load(context.Background(), scratch(t, c.src), "releases/r.star")
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func TestIsReleaseTellsReleasesFromWorkflows(t *testing.T) {
	assert.True(t, IsReleaseFile("../releases/aks.star"))
	assert.True(t, IsReleaseFile("../releases/flatcar.star"))
	assert.False(t, IsReleaseFile("../workflows/linux.star"))
	assert.False(t, IsReleaseFile("../workflows/flatcar.star"))
	assert.False(t, IsReleaseFile("../releases/none.star"))
}

// Every plan and run asks whether its file is a release: a workflow
// without the word job is answered without parsing it.
func TestIsReleaseDoesNotParseAWorkflowWithoutJob(t *testing.T) {
	src, err := os.ReadFile("../workflows/gen2.star")
	require.NoError(t, err)
	require.NotContains(t, string(src), "job")
	assert.Zero(t, testing.AllocsPerRun(10, func() { IsRelease("gen2.star", src) }))
	assert.False(t, IsRelease("w.star", []byte("load(\"//lib/x.star\", \"jobs\")\njobs()\n")), "a name containing job is no job() call")
}

func TestOverrideSetsAVarOnEveryJobThatTakesItAndKeepsTheIDs(t *testing.T) {
	ws, err := localpacker.NewWorkspace("..")
	require.NoError(t, err)
	rel, err := Load(context.Background(), ws, "//releases/flatcar.star")
	require.NoError(t, err)
	var ids []string
	for _, j := range rel.Jobs {
		ids = append(ids, j.ID)
	}
	require.NoError(t, rel.Override(map[string]string{"image_builder": "//testdata/image-builder"}))
	for i, j := range rel.Jobs {
		assert.Equal(t, ids[i], j.ID, "an override never moves a job to another journal")
		if j.Workflow == "workflows/flatcar_capi.star" {
			assert.Equal(t, "//testdata/image-builder", j.Vars["image_builder"])
			assert.Contains(t, j.Args(), "image_builder=//testdata/image-builder")
		} else {
			assert.NotContains(t, j.Vars, "image_builder", "%s has no such param", j.Workflow)
		}
	}
	err = rel.Override(map[string]string{"imagebuilder": "x"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `no job of releases/flatcar.star runs a workflow with a param "imagebuilder"`)
}

// A --var override holding a credential is refused as a job's var is, and
// the message does not repeat it.
func TestOverrideRefusesACredential(t *testing.T) {
	r, err := Load(context.Background(), scratch(t, `job("workflows/w.star")`), "releases/r.star")
	require.NoError(t, err)
	err = r.Override(map[string]string{"os": "https://a.blob.core.windows.net/c/x?sig=SASSECRET"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--var os: holds a credential")
	assert.NotContains(t, err.Error(), "SASSECRET")
	assert.Empty(t, r.Jobs[0].Vars)
}
