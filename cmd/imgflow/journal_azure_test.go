package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud/azure"
	"github.com/imgflow/imgflow/cloud/azure/azuritetest"
	"github.com/imgflow/imgflow/cloud/azure/fakearm"
	"github.com/imgflow/imgflow/journal"
)

// stallingARM serves a fake ARM (Azurite behind its storage accounts) that
// holds the request stall picks forever: the process that sent it is
// killed there, in the middle of the step that sent it. hit is closed when
// the request arrives.
func stallingARM(t *testing.T, stall func(*http.Request) bool) (f *fakearm.Fake, hit <-chan struct{}) {
	t.Helper()
	az := azuritetest.Shared(t)
	f = fakearm.New(fakearm.Options{Blob: &fakearm.BlobBackend{Endpoint: az.Endpoint, Key: azuritetest.Key}})
	arrived := make(chan struct{})
	var once sync.Once
	release := make(chan struct{})
	next := f.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if stall(r) {
			once.Do(func() { close(arrived) })
			select {
			case <-r.Context().Done(): // the client died
			case <-release:
			}
			return
		}
		next.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // before srv.Close
	t.Setenv("IMGFLOW_AZURE_ARM_ENDPOINT", srv.URL)
	t.Setenv("AZURE_SUBSCRIPTION_ID", f.SubscriptionID())
	t.Setenv("IMGFLOW_AZURE_BLOB_ENDPOINT", az.URL+"/{account}")
	t.Setenv("IMGFLOW_AZURE_STORAGE_KEY", azuritetest.DevKey)
	seedFlatcarStorage(t)
	return f, arrived
}

// runIDRE finds the run id in the first line of `imgflow run`.
var runIDRE = regexp.MustCompile(`\(target \w+, run (\S+)\)`)

// A CI job runs the Flatcar workflow on Azure with its journal in a blob
// container; its agent dies in the middle of the published image version.
// Another agent, with a state dir of its own, resumes the run from the
// remote journal: the journaled steps are replayed, not redone.
func TestARunJournaledInAzureResumesOnAnotherAgent(t *testing.T) {
	var versionPuts int
	var mu sync.Mutex
	// The second image version made is the published one (the first is
	// the staging version).
	f, stalled := stallingARM(t, func(r *http.Request) bool {
		if r.Method != http.MethodPut || !strings.Contains(strings.ToLower(r.URL.Path), "/versions/") {
			return false
		}
		mu.Lock()
		defer mu.Unlock()
		versionPuts++
		return versionPuts == 2
	})
	az := azuritetest.Shared(t)
	var b [4]byte
	_, _ = rand.Read(b[:])
	journalURL := az.Endpoint(azuritetest.DevAccount) + "/ci-journals-" + hex.EncodeToString(b[:])
	root := repoRoot(t)
	args := func(state string, extra ...string) []string {
		return append([]string{"run", "--root", root, "--state", state, "--target", "azure", "--journal", journalURL,
			"--var", "version=4152.2.3", "--var", "vhd=//testdata/flatcar/flatcar-linux-test-amd64.vhd"}, extra...)
	}

	// Agent 1: a separate imgflow process, killed while the step hangs.
	agent1 := t.TempDir()
	stdout := killAtStall(t, "agent 1", "", args(agent1, filepath.Join(root, "workflows", "flatcar.star")), stalled) // no end record, the lease is not released
	m := runIDRE.FindStringSubmatch(stdout)
	require.NotNil(t, m, stdout)
	runID := m[1]
	before := stepLines(t, stdout)
	require.NotEmpty(t, before)
	requestsBefore := len(f.Requests())

	// The journal is in the container, not in the agent's state dir.
	assert.NoDirExists(t, filepath.Join(agent1, "runs"))
	runs := imgflow(t, "runs", "--journal", journalURL, "--output", "json")
	require.Equal(t, 0, runs.code, runs.String())
	assert.Contains(t, runs.stdout, `"status": "running"`, "the dead agent's lease has not expired yet")

	// Agent 2 may not take the run while the lease holds…
	agent2 := t.TempDir()
	res := imgflow(t, args(agent2, "--resume", runID)...)
	require.NotEqual(t, 0, res.code, res.String())
	assert.Contains(t, res.stderr, "run "+runID+" is in use by another imgflow process")
	for _, r := range f.Requests()[requestsBefore:] {
		assert.Equal(t, http.MethodGet, r.Method, "a refused resume changes nothing: %s %s", r.Method, r.Path)
	}

	// …which expires (broken here rather than waited for).
	cc, err := container.NewClientWithSharedKeyCredential(journalURL, devKey(t), &container.ClientOptions{})
	require.NoError(t, err)
	lc, err := lease.NewBlobClient(cc.NewAppendBlobClient(runID+".jsonl"), nil)
	require.NoError(t, err)
	_, err = lc.BreakLease(context.Background(), &lease.BlobBreakOptions{BreakPeriod: to(int32(0))})
	require.NoError(t, err)
	runs = imgflow(t, "runs", "--journal", journalURL)
	require.Equal(t, 0, runs.code, runs.String())
	assert.Contains(t, runs.stdout, "interrupted (resumable)")

	res = imgflow(t, args(agent2, "--resume", runID)...)
	require.Equal(t, 0, res.code, res.String())
	replayed := regexp.MustCompile(`(?m)^\s*\d+ \w+\s+from the journal .* replayed `).FindAllString(res.stdout, -1)
	assert.Len(t, replayed, len(before), "every step agent 1 finished is replayed, none redone:\n%s", res.stdout)
	assert.Regexp(t, `(?m)^\s*\d+ image_version .* created `, res.stdout, "the step agent 1 died in runs live")
	mu.Lock()
	assert.Equal(t, 3, versionPuts, "the staging version, the one agent 1 died in, and the resumed one: nothing twice")
	mu.Unlock()
	assert.NoDirExists(t, filepath.Join(agent2, "runs"))

	runs = imgflow(t, "runs", "--journal", journalURL, "--output", "json")
	require.Equal(t, 0, runs.code, runs.String())
	assert.Contains(t, runs.stdout, `"run_id": "`+runID+`"`)
	assert.Contains(t, runs.stdout, `"status": "succeeded"`)
	assert.NotContains(t, runs.stdout+res.stdout+res.stderr, azuritetest.DevKey)
	p, err := azure.FromEnvironment(context.Background(), "", nil) // the emulator's environment, as imgflow's
	require.NoError(t, err)
	s, err := journal.NewAzureStore(journalURL, &journal.AzureOptions{Clients: p})
	require.NoError(t, err)
	list, err := s.List(context.Background())
	require.NoError(t, err)
	require.Len(t, list, 1)
	assert.Equal(t, journal.StatusSucceeded, list[0].Status)
}

func devKey(t *testing.T) *container.SharedKeyCredential {
	t.Helper()
	cred, err := container.NewSharedKeyCredential(azuritetest.DevAccount, azuritetest.DevKey)
	require.NoError(t, err)
	return cred
}

func to[T any](v T) *T { return &v }

// killAtStall runs an imgflow agent (this test binary as imgflow, in dir,
// with args) until it reaches the step stalled reports, then SIGKILLs it:
// an agent that dies mid-step, leaving no end record and its journal's
// lease held. It returns what the agent printed.
func killAtStall(t *testing.T, name, dir string, args []string, stalled <-chan struct{}) (stdout string) {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(self, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "IMGFLOW_TEST_MAIN=1")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-stalled:
	case err := <-exited:
		t.Fatalf("%s ended before the stalled step: %v\nstdout:\n%s\nstderr:\n%s", name, err, out.String(), errOut.String())
	case <-time.After(2 * time.Minute):
		require.NoError(t, cmd.Process.Kill())
		<-exited
		t.Fatalf("%s never reached the stalled step\nstdout:\n%s\nstderr:\n%s", name, out.String(), errOut.String())
	}
	require.NoError(t, cmd.Process.Kill())
	<-exited
	return out.String()
}
