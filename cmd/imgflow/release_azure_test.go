package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud/azure/azuritetest"
	"github.com/imgflow/imgflow/internal/localpacker"
	"github.com/imgflow/imgflow/release"
)

// Two jobs of a release run on Azure as CI matrix jobs do, each on its own
// agent with its journal under the release's folder of one container.
// The agent of the second job dies in the middle of its published image
// version; the job is re-queued on another agent (a state dir of its
// own), which runs the same command: it continues the run, replaying what
// the dead agent finished. The fan-in summary shows both jobs succeeded.
func TestAReleaseJobKilledOnOneAgentContinuesOnAnother(t *testing.T) {
	var mu sync.Mutex
	var betaVersionPuts int
	f, stalled := stallingARM(t, func(r *http.Request) bool {
		path := strings.ToLower(r.URL.Path)
		if r.Method != http.MethodPut || !strings.Contains(path, "/versions/") || !strings.Contains(path, "beta") {
			return false
		}
		mu.Lock()
		defer mu.Unlock()
		betaVersionPuts++
		return betaVersionPuts == 2 // the staging version, then the published one hangs
	})
	az := azuritetest.Shared(t)
	var b [4]byte
	_, _ = rand.Read(b[:])
	journalURL := az.Endpoint(azuritetest.DevAccount) + "/releases-" + hex.EncodeToString(b[:])
	root := repoRoot(t)
	relFile := filepath.Join(root, "testdata", "release", "two_channels.star")
	ws, err := localpacker.NewWorkspace(root)
	require.NoError(t, err)
	rel, err := release.Load(context.Background(), ws, "//testdata/release/two_channels.star")
	require.NoError(t, err)
	require.Len(t, rel.Jobs, 2)
	stable, beta := rel.Jobs[0], rel.Jobs[1]
	require.Equal(t, []string{"flatcar-stable", "flatcar-beta"}, []string{stable.ID, beta.ID})

	// What a matrix job runs (imgflow ci): the job's workflow and vars,
	// its journal folder, --continue; only the agent's state dir differs.
	jobArgs := func(j *release.Job, state string) []string {
		args := []string{"run", "--root", root, "--state", state, "--target", "azure",
			"--journal", journalURL + "/" + rel.Name + "/" + j.ID, "--continue"}
		jobArgs := j.Args()
		jobArgs[0] = filepath.Join(root, jobArgs[0]) // the tests' working directory is not the checkout's root
		return append(args, jobArgs...)
	}

	// Agent 1 runs the first job to the end.
	agent1 := t.TempDir()
	res := imgflow(t, jobArgs(stable, agent1)...)
	require.Equal(t, 0, res.code, res.String())

	// Agent 2, a separate process, dies in the second job's published version.
	agent2 := t.TempDir()
	stdout := killAtStall(t, "agent 2", root, jobArgs(beta, agent2), stalled) // no end record, the lease is not released
	m := runIDRE.FindStringSubmatch(stdout)
	require.NotNil(t, m, stdout)
	runID := m[1]
	finished := stepLines(t, stdout)
	require.NotEmpty(t, finished)

	fanIn := func() cliResult {
		return imgflow(t, "runs", "--root", root, "--journal", journalURL, "--release", relFile, "--output", "json")
	}
	mid := fanIn()
	assert.Equal(t, 1, mid.code, "a job has not succeeded yet: %s", mid.String())
	assert.Contains(t, mid.stdout, `"status": "running"`, "the dead agent's lease has not expired yet")

	// The lease expires (broken here rather than waited for); the job is
	// re-queued on agent 3 and runs the same command.
	cc, err := container.NewClientWithSharedKeyCredential(journalURL, devKey(t), &container.ClientOptions{})
	require.NoError(t, err)
	lc, err := lease.NewBlobClient(cc.NewAppendBlobClient(rel.Name+"/"+beta.ID+"/"+runID+".jsonl"), nil)
	require.NoError(t, err)
	_, err = lc.BreakLease(context.Background(), &lease.BlobBreakOptions{BreakPeriod: to(int32(0))})
	require.NoError(t, err)
	requestsBefore := len(f.Requests())
	agent3 := t.TempDir()
	res = imgflow(t, jobArgs(beta, agent3)...)
	require.Equal(t, 0, res.code, res.String())
	assert.Contains(t, res.stdout, "imgflow run --continue workflows/flatcar.star")
	assert.Contains(t, res.stdout, "run "+runID+")", "the dead agent's run, not a new one")
	replayed := regexp.MustCompile(`(?m)^\s*\d+ \w+\s+from the journal .* replayed `).FindAllString(res.stdout, -1)
	assert.Len(t, replayed, len(finished), "every step agent 2 finished is replayed, none redone:\n%s", res.stdout)
	var puts []string
	for _, r := range f.Requests()[requestsBefore:] {
		if r.Method == http.MethodPut {
			puts = append(puts, r.Path)
		}
	}
	require.NotEmpty(t, puts)
	for _, p := range puts {
		assert.Contains(t, strings.ToLower(p), "/versions/", "agent 3 only made the version agent 2 died in: %v", puts)
	}
	mu.Lock()
	assert.Equal(t, 3, betaVersionPuts, "the staging version once, the published one where agent 2 died and once more: nothing twice")
	mu.Unlock()
	for _, agent := range []string{agent1, agent2, agent3} {
		assert.NoDirExists(t, filepath.Join(agent, "runs"), "journals are in the container, not on the agents")
	}

	// The fan-in, on any agent.
	sum := fanIn()
	require.Equal(t, 0, sum.code, sum.String())
	doc := decodeJSON(t, sum).(map[string]any)
	assert.Equal(t, float64(2), doc["succeeded"])
	jobs := doc["jobs"].([]any)
	byID := map[string]map[string]any{}
	for _, j := range jobs {
		byID[j.(map[string]any)["id"].(string)] = j.(map[string]any)
	}
	assert.Equal(t, "succeeded", byID["flatcar-stable"]["status"])
	assert.Equal(t, float64(1), byID["flatcar-stable"]["attempts"])
	assert.Equal(t, "succeeded", byID["flatcar-beta"]["status"])
	assert.Equal(t, float64(2), byID["flatcar-beta"]["attempts"], "the killed attempt and the re-queued one")
	assert.Equal(t, runID, byID["flatcar-beta"]["run_id"])
	assert.Contains(t, byID["flatcar-beta"]["outputs"].(map[string]any)["community_image_id"], "/Images/flatcar-beta-amd64/Versions/4152.2.3")
	assert.Equal(t, journalURL+"/two_channels/flatcar-beta", byID["flatcar-beta"]["journal"])
	text := imgflow(t, "runs", "--root", root, "--journal", journalURL, "--release", relFile)
	require.Equal(t, 0, text.code, text.String())
	assert.Contains(t, text.stdout, "release two_channels (testdata/release/two_channels.star): 2 succeeded, 0 failed, 0 not run")
	assert.NotContains(t, sum.stdout+text.stdout+res.stdout+res.stderr, azuritetest.DevKey)
}
