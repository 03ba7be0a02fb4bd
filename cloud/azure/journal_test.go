package azure_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azure"
	"github.com/imgflow/imgflow/cloud/ensure"
	"github.com/imgflow/imgflow/journal"
)

func journalHeader(id string) journal.Record {
	t := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	return journal.Record{RunID: id, RunTime: &t, Workflow: "workflows/flatcar.star", Target: "azure"}
}

func listKeysCalls(w *world) int {
	n := 0
	for _, req := range w.f.Requests() {
		if req.API == "AccountsClient.ListKeys" {
			n++
		}
	}
	return n
}

// TestJournalHonoursStorageAuthKey: a journal in Azure (--journal URL)
// authenticates as the target's blob calls do; with --storage-auth key it
// uses the account key from ListKeys and never sends a token.
func TestJournalHonoursStorageAuthKey(t *testing.T) {
	w, proxy := tokenOnlyWorld(t, azure.StorageAuthKey)
	sa, _ := w.base("imgflowtest")
	keysBefore := listKeysCalls(w)
	s, err := journal.NewAzureStore(proxy.endpoint(sa.Name)+"/journals", &journal.AzureOptions{Clients: w.p})
	require.NoError(t, err)

	j, err := s.Create(w.ctx, journalHeader("r1"))
	require.NoError(t, err)
	require.NoError(t, j.Append(journal.Record{Type: journal.TypeStep, Step: &journal.Step{Key: "a", Builtin: "gallery", Result: json.RawMessage(`{}`)}}))
	require.NoError(t, j.Close())
	j, err = s.Open(w.ctx, "r1")
	require.NoError(t, err)
	assert.Len(t, j.Records(), 2)
	require.NoError(t, j.Close())

	bearer, other := proxy.counts()
	assert.Zero(t, bearer, "--storage-auth key: no token reaches the blob service, the journal's calls included")
	assert.Positive(t, other)
	assert.Equal(t, keysBefore, listKeysCalls(w), "the account's key is listed once, for the target and the journal alike")
	assert.Positive(t, listKeysCalls(w))
}

// TestJournalHonoursStorageAuthAAD: with --storage-auth aad and no blob
// data role, the journal fails as the target's blob calls do, naming the
// role and the account's resource id, and never reads the key.
func TestJournalHonoursStorageAuthAAD(t *testing.T) {
	w, proxy := tokenOnlyWorld(t, azure.StorageAuthAAD)
	_, _, err := ensure.EnsureResourceGroup(w.ctx, w.p, cloud.ResourceGroup{Name: "rg", Location: loc})
	require.NoError(t, err)
	sa, _, err := ensure.EnsureStorageAccount(w.ctx, w.p, cloud.StorageAccount{Name: "imgflowtest", ResourceGroup: "rg", Location: loc})
	require.NoError(t, err)
	s, err := journal.NewAzureStore(proxy.endpoint(sa.Name)+"/journals", &journal.AzureOptions{Clients: w.p})
	require.NoError(t, err)
	_, err = s.Create(w.ctx, journalHeader("r1"))
	require.Error(t, err)
	assert.True(t, cloud.HasCode(err, cloud.CodeAuthorizationPermissionMismatch), err)
	assert.Contains(t, err.Error(), azure.RoleBlobDataContributor)
	assert.Contains(t, err.Error(), sa.ID)
	assert.Zero(t, listKeysCalls(w), "aad never reads keys")
}

// TestContainerClientRefusesWhatIsNotAContainerURL: the URL is checked
// before any request, and a SAS in it is never shown.
func TestContainerClientRefusesWhatIsNotAContainerURL(t *testing.T) {
	p, err := azure.New(context.Background(), azure.Options{SubscriptionID: "00000000-0000-0000-0000-000000000000", Credential: azure.StaticToken("t")})
	require.NoError(t, err)
	for _, bad := range []string{
		"https://acct.blob.core.windows.net",
		"https://acct.blob.core.windows.net/c/r1.jsonl?sv=2024&sig=SECRET",
		"https://acct.blob.core.windows.net/c?foo=bar",
		"ftp://acct/c",
	} {
		_, err := p.ContainerClient(context.Background(), bad)
		require.Error(t, err, bad)
		assert.NotContains(t, err.Error(), "SECRET")
	}
	cc, err := p.ContainerClient(context.Background(), "https://acct.blob.core.windows.net/c?sv=2024&sig=SECRET")
	require.NoError(t, err, "a SAS URL needs no credential and no request")
	assert.Equal(t, "https://acct.blob.core.windows.net/c?sv=2024&sig=SECRET", cc.URL())
}
