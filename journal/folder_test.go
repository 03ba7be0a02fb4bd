package journal

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSplitPrefixKeepsTheSASOnTheContainer(t *testing.T) {
	for _, c := range []struct{ in, container, prefix string }{
		{"https://acct.blob.core.windows.net/c", "https://acct.blob.core.windows.net/c", ""},
		{"https://acct.blob.core.windows.net/c/aks/linux-fips", "https://acct.blob.core.windows.net/c", "aks/linux-fips/"},
		{"https://acct.blob.core.windows.net/c/aks/linux-fips/?sv=2024&sig=s", "https://acct.blob.core.windows.net/c?sv=2024&sig=s", "aks/linux-fips/"},
		{"http://127.0.0.1:10000/devstoreaccount1/c/flatcar/j", "http://127.0.0.1:10000/devstoreaccount1/c", "flatcar/j/"},
	} {
		container, prefix, err := splitPrefix(c.in)
		require.NoError(t, err, c.in)
		assert.Equal(t, c.container, container, c.in)
		assert.Equal(t, c.prefix, prefix, c.in)
	}
	for _, bad := range []string{
		"https://acct.blob.core.windows.net/c/r1.jsonl",
		"https://acct.blob.core.windows.net/c/aks/../x",
		"https://acct.blob.core.windows.net/c/aks//x",
	} {
		_, _, err := splitPrefix(bad)
		assert.ErrorContains(t, err, "or a folder in one", bad)
	}
	s, err := OpenStore("https://acct.blob.core.windows.net/c/aks/linux-fips?sv=2024&sig=secret")
	require.NoError(t, err)
	assert.Equal(t, "https://acct.blob.core.windows.net/c/aks/linux-fips", s.String(), "shown without the SAS")
}

func TestAzureFoldersOfOneContainerKeepTheirRunsApart(t *testing.T) {
	ctx := context.Background()
	base := containerURL(t)
	clients := azureClients(t)
	store := func(url string) *AzureStore {
		s, err := NewAzureStore(url, &AzureOptions{Clients: clients})
		require.NoError(t, err)
		return s
	}
	top, a, b := store(base), store(base+"/rel/a"), store(base+"/rel/b")
	for _, c := range []struct {
		s  *AzureStore
		id string
	}{{top, "t1"}, {a, "a1"}, {b, "b1"}, {b, "b2"}} {
		j, err := c.s.Create(ctx, header(c.id))
		require.NoError(t, err)
		require.NoError(t, j.Append(step("x")))
		require.NoError(t, j.Append(Record{Type: TypeEnd, Status: StatusSucceeded, Outputs: map[string]any{"vhd": "https://x/" + c.id + ".vhd"}}))
		require.NoError(t, j.Close())
	}
	ids := func(s *AzureStore) []string {
		runs, err := s.List(ctx)
		require.NoError(t, err)
		var out []string
		for _, r := range runs {
			out = append(out, r.RunID)
		}
		return out
	}
	assert.Equal(t, []string{"t1"}, ids(top), "the container's own runs, not its folders'")
	assert.Equal(t, []string{"a1"}, ids(a))
	assert.ElementsMatch(t, []string{"b1", "b2"}, ids(b))
	folders, err := top.JobFolders(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"rel/a", "rel/b"}, folders, "the release jobs' folders, once each")
	folders, err = a.JobFolders(ctx)
	require.NoError(t, err)
	assert.Empty(t, folders, "a job's folder has none below it")

	j, err := a.Open(ctx, "a1")
	require.NoError(t, err, "a run reopens in its folder")
	assert.Equal(t, "a1", j.Header().RunID)
	require.NoError(t, j.Append(Record{Type: TypeResume}))
	require.NoError(t, j.Close())
	runs, err := a.List(ctx)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	assert.Equal(t, 2, runs[0].Attempts)
	assert.Nil(t, runs[0].Outputs, "the resumed attempt has not ended")
	_, err = b.Open(ctx, "a1")
	assert.ErrorContains(t, err, "no run a1 in "+base+"/rel/b")
}

func TestSummaryKeepsTheOutputsOfTheLastAttempt(t *testing.T) {
	dir := t.TempDir()
	j, err := Create(dir, header("r"))
	require.NoError(t, err)
	require.NoError(t, j.Append(Record{Type: TypeEnd, Status: StatusSucceeded, Outputs: map[string]any{"id": "img"}}))
	require.NoError(t, j.Close())
	runs, err := List(dir)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	assert.Equal(t, map[string]any{"id": "img"}, runs[0].Outputs)
	assert.Equal(t, 1, runs[0].Attempts)
}

func TestDurationCountsTheAttemptsNotTheTimeBetweenThem(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	at := func(min int, r Record) Record { r.Time = t0.Add(time.Duration(min) * time.Minute); return r }
	s := summarize(parsed{records: []Record{
		at(0, Record{Type: TypeRun, RunID: "r"}),
		at(50, step("build")), // the agent died here
		at(90, Record{Type: TypeResume}),
		at(100, step("copy")),
		at(101, Record{Type: TypeEnd, Status: StatusSucceeded, Outputs: map[string]any{"vhd": "u"}}),
	}}, false)
	assert.Equal(t, int64(61*time.Minute/time.Millisecond), s.DurationMS, "50 min, then 11 min")
	assert.Equal(t, 2, s.Attempts)
	assert.Equal(t, t0.Add(101*time.Minute), s.Updated)
	assert.Equal(t, map[string]any{"vhd": "u"}, s.Outputs)
}

func TestDirJobFoldersAreTheReleaseJobsWithJournals(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, loc := range []string{dir, filepath.Join(dir, "aks", "gen2"), filepath.Join(dir, "aks", "fips"), filepath.Join(dir, "flatcar", "stable")} {
		j, err := Create(loc, header("r-"+filepath.Base(loc)))
		require.NoError(t, err)
		require.NoError(t, j.Close())
	}
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "aks", "empty"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "aks", "gen2", "deeper", "x"), 0o755))
	folders, err := Dir(dir).JobFolders(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"aks/fips", "aks/gen2", "flatcar/stable"}, folders, "only RELEASE/JOB folders holding a journal")
}
