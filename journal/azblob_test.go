package journal

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/lease"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud/azure"
	"github.com/imgflow/imgflow/cloud/azure/azuritetest"
)

func TestMain(m *testing.M) { azuritetest.Main(m) }

// containerURL is a new, not yet created container of Azurite's
// development account.
func containerURL(t *testing.T) string {
	t.Helper()
	az := azuritetest.Shared(t)
	var b [6]byte
	_, _ = rand.Read(b[:])
	return az.Endpoint(azuritetest.DevAccount) + "/journals-" + hex.EncodeToString(b[:])
}

// azureStore is a store on a new container whose client the Azure
// target makes, with Azurite's shared key.
func azureStore(t *testing.T, opts *AzureOptions) *AzureStore {
	t.Helper()
	var o AzureOptions
	if opts != nil {
		o = *opts
	}
	o.Clients = azureClients(t)
	s, err := NewAzureStore(containerURL(t), &o)
	require.NoError(t, err)
	return s
}

// azureClients makes container clients as the Azure target does, with
// Azurite's shared key.
func azureClients(t *testing.T) ContainerClients {
	t.Helper()
	p, err := azure.New(context.Background(), azure.Options{SubscriptionID: "00000000-0000-0000-0000-000000000000",
		Credential: azure.StaticToken("imgflow-test-token"), StorageKey: azuritetest.KeyFunc})
	require.NoError(t, err)
	return p
}

func TestAzureAppendedRecordsSurviveReopen(t *testing.T) {
	ctx := context.Background()
	s := azureStore(t, nil)
	j, err := s.Create(ctx, header("r1")) // the container is made on demand
	require.NoError(t, err)
	require.NoError(t, j.Append(step("a")))
	assert.Equal(t, s.String()+"/r1.jsonl", j.Path())
	require.NoError(t, j.Close())

	j, err = s.Open(ctx, "r1")
	require.NoError(t, err)
	recs := j.Records()
	require.Len(t, recs, 2)
	assert.Equal(t, TypeRun, recs[0].Type)
	assert.Equal(t, "4152.2.3", recs[0].Vars["version"])
	assert.Equal(t, "a", recs[1].Step.Key)
	require.NoError(t, j.Append(step("b")))
	require.NoError(t, j.Close())

	j, err = s.Open(ctx, "r1")
	require.NoError(t, err)
	defer j.Close()
	assert.Len(t, j.Records(), 3)

	_, err = s.Create(ctx, header("r1"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "exists already")
}

// TestAzureARecordLongerThanABlockTakesSeveral: a record over the 4 MiB
// an append block takes (a test_vm step with whole scan reports) is
// written in several blocks and read back whole. (A crash between its
// blocks leaves a torn line: TestAzureATornLastRecordIsIgnoredAndTerminated.)
func TestAzureARecordLongerThanABlockTakesSeveral(t *testing.T) {
	ctx := context.Background()
	s := azureStore(t, nil)
	j, err := s.Create(ctx, header("r1"))
	require.NoError(t, err)
	report := strings.Repeat("CVE-2026-0001 bcc 0.29.0 CRITICAL\n", (9<<20)/34)
	big := step("reports")
	big.Step.Result, err = json.Marshal(map[string]string{"report": report})
	require.NoError(t, err)
	require.Greater(t, len(big.Step.Result), 2*MaxBlockSize)
	require.NoError(t, j.Append(big))
	require.NoError(t, j.Append(step("after")))
	require.NoError(t, j.Close())

	props, err := s.cc.NewAppendBlobClient("r1.jsonl").GetProperties(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, int32(5), *props.BlobCommittedBlockCount, "the header, three blocks of the long record, the next record")

	j, err = s.Open(ctx, "r1")
	require.NoError(t, err)
	recs := j.Records()
	require.Len(t, recs, 3)
	var got map[string]string
	require.NoError(t, json.Unmarshal(recs[1].Step.Result, &got))
	assert.Equal(t, report, got["report"], "read back whole")
	assert.Equal(t, "after", recs[2].Step.Key)

	require.NoError(t, j.Close())
}

func TestAzureATornLastRecordIsIgnoredAndTerminated(t *testing.T) {
	ctx := context.Background()
	s := azureStore(t, nil)
	j, err := s.Create(ctx, header("r1"))
	require.NoError(t, err)
	require.NoError(t, j.Append(step("a")))
	require.NoError(t, j.Close())
	// A block is atomic, but something else may have written half a line.
	_, err = s.cc.NewAppendBlobClient("r1.jsonl").AppendBlock(ctx, streaming.NopCloser(bytes.NewReader([]byte(`{"type":"step","step":{"key":"b","buil`))), nil)
	require.NoError(t, err)

	j, err = s.Open(ctx, "r1")
	require.NoError(t, err)
	assert.Len(t, j.Records(), 2, "the torn record is not read")
	require.NoError(t, j.Append(step("c")))
	require.NoError(t, j.Close())

	j, err = s.Open(ctx, "r1")
	require.NoError(t, err)
	defer j.Close()
	recs := j.Records()
	require.Len(t, recs, 3)
	assert.Equal(t, "c", recs[2].Step.Key, "the next record starts on a clean line")
}

func TestAzureASecondOpenIsRefusedUntilTheLeaseIsReleased(t *testing.T) {
	ctx := context.Background()
	s := azureStore(t, nil)
	j, err := s.Create(ctx, header("r1"))
	require.NoError(t, err)

	_, err = s.Open(ctx, "r1")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "run r1 is in use by another imgflow process")
	runs, err := s.List(ctx)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	assert.Equal(t, StatusRunning, runs[0].Status)
	assert.False(t, runs[0].Resumable)

	require.NoError(t, j.Close())
	runs, err = s.List(ctx)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	assert.Equal(t, StatusInterrupted, runs[0].Status, "Close released the lease")
	j, err = s.Open(ctx, "r1")
	require.NoError(t, err)
	require.NoError(t, j.Close())
}

func TestAzureAProcessThatLostItsLeaseCannotAppend(t *testing.T) {
	ctx := context.Background()
	s := azureStore(t, nil)
	first, err := s.Create(ctx, header("r1"))
	require.NoError(t, err)
	defer first.Close()
	first.w.(*blobWriter).abandon() // it stalls and stops renewing…
	lc, err := lease.NewBlobClient(s.cc.NewAppendBlobClient("r1.jsonl"), nil)
	require.NoError(t, err)
	_, err = lc.BreakLease(ctx, &lease.BlobBreakOptions{BreakPeriod: to(int32(0))}) // …until its lease expired
	require.NoError(t, err)

	second, err := s.Open(ctx, "r1") // another agent takes the run over
	require.NoError(t, err)
	defer second.Close()
	require.NoError(t, second.Append(step("b")))

	err = first.Append(step("a"))
	require.Error(t, err, "the stalled process may not interleave")
	assert.Contains(t, err.Error(), "lost the lease")

	j, err := s.Open(ctx, "r1")
	require.Error(t, err)
	require.NoError(t, second.Close())
	j, err = s.Open(ctx, "r1")
	require.NoError(t, err)
	defer j.Close()
	recs := j.Records()
	require.Len(t, recs, 2)
	assert.Equal(t, "b", recs[1].Step.Key)
}

func TestAzureLeaseIsRenewedWhileOpenAndExpiresAfterADeadProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a 15 s lease to expire")
	}
	t.Parallel()
	ctx := context.Background()
	s := azureStore(t, &AzureOptions{LeaseDuration: 15 * time.Second})
	alive, err := s.Create(ctx, header("alive"))
	require.NoError(t, err)
	defer alive.Close()
	dead, err := s.Create(ctx, header("dead"))
	require.NoError(t, err)
	dead.w.(*blobWriter).abandon() // the process died: nobody renews or releases

	time.Sleep(17 * time.Second)
	_, err = s.Open(ctx, "alive")
	require.Error(t, err, "the renewed lease still holds")
	assert.Contains(t, err.Error(), "in use by another imgflow process")
	require.NoError(t, alive.Append(step("a")))

	runs, err := s.List(ctx)
	require.NoError(t, err)
	status := map[string]string{}
	for _, r := range runs {
		status[r.RunID] = r.Status
	}
	assert.Equal(t, map[string]string{"alive": StatusRunning, "dead": StatusInterrupted}, status)
	j, err := s.Open(ctx, "dead")
	require.NoError(t, err, "the dead process's lease expired")
	require.NoError(t, j.Close())
}

func TestAzureListReportsStatusAndResumability(t *testing.T) {
	ctx := context.Background()
	s := azureStore(t, nil)
	runs, err := s.List(ctx)
	require.NoError(t, err)
	assert.Empty(t, runs, "no container yet: no runs")
	for _, c := range []struct {
		id  string
		end *Record
	}{
		{"ok", &Record{Type: TypeEnd, Status: StatusSucceeded}},
		{"bad", &Record{Type: TypeEnd, Status: StatusFailed, Error: "boom"}},
		{"died", nil},
	} {
		j, err := s.Create(ctx, header(c.id))
		require.NoError(t, err)
		require.NoError(t, j.Append(step("a")))
		if c.end != nil {
			require.NoError(t, j.Append(*c.end))
		}
		require.NoError(t, j.Close())
	}
	running, err := s.Create(ctx, header("running"))
	require.NoError(t, err)
	defer running.Close()
	cc, err := s.container(ctx)
	require.NoError(t, err)
	_, err = cc.NewBlockBlobClient("notes.txt").UploadBuffer(ctx, []byte("not a journal"), nil)
	require.NoError(t, err)

	_, err = List(s.String()) // the package function, by URL…
	require.ErrorContains(t, err, "--target azure", "…needs the Azure target's credential (or a SAS)")
	runs, err = s.List(ctx)
	require.NoError(t, err)
	byID := map[string]Summary{}
	for _, r := range runs {
		byID[r.RunID] = r
	}
	require.Len(t, byID, 4)
	assert.Equal(t, StatusSucceeded, byID["ok"].Status)
	assert.False(t, byID["ok"].Resumable)
	assert.Equal(t, 1, byID["ok"].Steps)
	assert.Equal(t, StatusFailed, byID["bad"].Status)
	assert.Equal(t, "boom", byID["bad"].Error)
	assert.True(t, byID["bad"].Resumable)
	assert.Equal(t, StatusInterrupted, byID["died"].Status)
	assert.True(t, byID["died"].Resumable)
	assert.Equal(t, StatusRunning, byID["running"].Status)
}

func TestAzureASASInTheURLIsACredentialNeverShown(t *testing.T) {
	ctx := context.Background()
	s := azureStore(t, nil)
	cc, err := s.container(ctx)
	require.NoError(t, err)
	_, err = cc.Create(ctx, nil)
	require.NoError(t, err)
	sasURL, err := cc.GetSASURL(sas.ContainerPermissions{Read: true, Add: true, Create: true, Write: true, List: true}, time.Now().Add(time.Hour), nil)
	require.NoError(t, err)
	require.Contains(t, sasURL, "sig=")

	viaSAS, err := NewAzureStore(sasURL, nil)
	require.NoError(t, err)
	assert.Equal(t, s.String(), viaSAS.String())
	j, err := viaSAS.Create(ctx, header("r1"))
	require.NoError(t, err)
	assert.NotContains(t, j.Path(), "sig=")
	require.NoError(t, j.Append(step("a")))
	_, err = viaSAS.Open(ctx, "r1")
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "sig=")
	require.NoError(t, j.Close())
	j, err = Open(sasURL, "r1")
	require.NoError(t, err)
	assert.Len(t, j.Records(), 2)
	require.NoError(t, j.Close())

	_, err = Open(sasURL, "nope")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no run nope")
	assert.Contains(t, err.Error(), "imgflow runs --journal")
	assert.NotContains(t, err.Error(), "sig=")

	forged := sasURL[:len(sasURL)-4] + "AAA%3D" // a wrong signature
	_, err = Open(forged, "r1")
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "sig=A")
	_, err = NewAzureStore(s.String()+"/r1.jsonl?"+sasURL[len(s.String())+1:], nil)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "sig=")
}

func TestAzureAFullBlobFailsClearly(t *testing.T) {
	ctx := context.Background()
	s := azureStore(t, nil)
	j, err := s.Create(ctx, header("r1"))
	require.NoError(t, err)
	defer j.Close()
	j.w.(*blobWriter).blocks = MaxBlocks
	err = j.Append(step("a"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "at most 50000 blocks")

	// A record needing more blocks than are left is refused whole, not torn.
	j.w.(*blobWriter).blocks = MaxBlocks - 1
	big := step("big")
	big.Step.Result, err = json.Marshal(strings.Repeat("x", MaxBlockSize+1))
	require.NoError(t, err)
	require.ErrorContains(t, j.Append(big), "at most 50000 blocks")
	props, err := s.cc.NewAppendBlobClient("r1.jsonl").GetProperties(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, int32(1), *props.BlobCommittedBlockCount, "only the header: nothing of the big record was written")
}

func TestAzureARetriedAppendIsNotDuplicated(t *testing.T) {
	ctx := context.Background()
	s := azureStore(t, nil)
	j, err := s.Create(ctx, header("r1"))
	require.NoError(t, err)
	defer j.Close()
	w := j.w.(*blobWriter)
	line := []byte(`{"type":"step","step":{"key":"a"}}` + "\n")
	require.NoError(t, w.write(line))
	w.size -= int64(len(line)) // as if the answer was lost and the SDK sent it again
	require.NoError(t, w.write(line), "the append is found in the blob")
	w.size -= 3
	err = w.write(line)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "another process appended")
}

func TestAzureStoreURLs(t *testing.T) {
	for _, bad := range []string{
		"https://acct.blob.core.windows.net",
		"https://acct.blob.core.windows.net/c/r1.jsonl",
		"https://acct.blob.core.windows.net/c?foo=bar",
		"ftp://acct/c",
		"http://127.0.0.1:1/devstoreaccount1/c", // no SAS, no Azure target
	} {
		_, err := NewAzureStore(bad, nil)
		assert.Error(t, err, bad)
	}
	_, err := NewAzureStore("https://acct.blob.core.windows.net/c", nil)
	assert.ErrorContains(t, err, "run with --target azure", "without a SAS the journal needs the Azure target's credential")
	_, err = NewAzureStore("https://acct.blob.core.windows.net/c?sv=2024&sig=secret", &AzureOptions{LeaseDuration: time.Hour})
	assert.ErrorContains(t, err, "between 15s and 60s")
	s, err := OpenStore("https://acct.blob.core.windows.net/c/?sv=2024&sig=secret")
	require.NoError(t, err)
	assert.Equal(t, "https://acct.blob.core.windows.net/c", s.String())
	s, err = OpenStore("/var/lib/imgflow/runs")
	require.NoError(t, err)
	assert.Equal(t, Dir("/var/lib/imgflow/runs"), s)
}

func TestReadSkipsATerminatedTornLine(t *testing.T) {
	data := `{"type":"run","run_id":"r"}` + "\n" + `{"type":"step","step":{"key":"b","buil` + tornMark + `{"type":"step","step":{"key":"c"}}` + "\n" + `{"type":"st`
	p, err := read(strings.NewReader(data), "r.jsonl", "r")
	require.NoError(t, err)
	require.Len(t, p.records, 2)
	assert.Equal(t, "c", p.records[1].Step.Key)
	assert.Equal(t, int64(len(data)-len(`{"type":"st`)), p.good)
}
