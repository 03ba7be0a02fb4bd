package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/pageblob"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud/azure"
	"github.com/imgflow/imgflow/cloud/azure/azuritetest"
	"github.com/imgflow/imgflow/cloud/azure/fakearm"
	"github.com/imgflow/imgflow/cloud/transfer"
	"github.com/imgflow/imgflow/vhd"
)

// pageProxy is Azurite behind a reverse proxy that counts the bytes of
// the Put Page requests it passes and, once stopAt of them went through,
// holds every further one until its client dies: a process killed then
// has written exactly stopAt pieces.
type pageProxy struct {
	mu      sync.Mutex
	started int
	written int
	bytes   int64
	stopAt  int
	stopped chan struct{} // closed when stopAt Put Pages are written
}

func (p *pageProxy) handler(target *url.URL) http.Handler {
	rp := httputil.NewSingleHostReverseProxy(target)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPut || r.URL.Query().Get("comp") != "page" || r.Header.Get("x-ms-page-write") != "update" {
			rp.ServeHTTP(w, r)
			return
		}
		var first, last int64
		if _, err := fmt.Sscanf(r.Header.Get("x-ms-range"), "bytes=%d-%d", &first, &last); err != nil {
			http.Error(w, "no x-ms-range", http.StatusBadRequest)
			return
		}
		p.mu.Lock()
		hold := p.stopAt > 0 && p.started >= p.stopAt
		if !hold {
			p.started++
		}
		p.mu.Unlock()
		if hold {
			// The server notices a closed connection only once the body
			// is read.
			_, _ = io.Copy(io.Discard, r.Body)
			<-r.Context().Done() // the client died
			return
		}
		rec := &statusRecorder{ResponseWriter: w}
		rp.ServeHTTP(rec, r)
		if rec.status != http.StatusCreated {
			return
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		p.written++
		p.bytes += last - first + 1
		if p.written == p.stopAt {
			close(p.stopped)
		}
	})
}

// reset counts anew, holding nothing.
func (p *pageProxy) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.started, p.written, p.bytes, p.stopAt = 0, 0, 0, 0
}

func (p *pageProxy) sent() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.bytes
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// scatteredDisk writes a fixed VHD of size bytes with 1 MiB of random
// data every 2 MiB: one Put Page per MiB, size/2 bytes of data.
func scatteredDisk(t *testing.T, path string, size int64) {
	t.Helper()
	_, err := vhd.CreateFixed(path, size, false)
	require.NoError(t, err)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	buf := make([]byte, 1<<20)
	for off := int64(0); off < size; off += 2 << 20 {
		_, _ = rand.Read(buf)
		_, err := f.WriteAt(buf, off)
		require.NoError(t, err)
	}
}

// A VHD upload of `imgflow run --target azure` is SIGKILLed half-way: it
// leaves an incomplete blob, leased by the dead process. `imgflow run
// --resume` waits out the lease, then sends exactly the pieces the blob
// lacks, and the blob is byte-identical to the disk.
func TestAKilledVHDUploadResumesOnAzure(t *testing.T) {
	const (
		diskSize  = 64 << 20 // 32 MiB of data in 32 pieces, and the footer
		killAfter = 8        // pieces written when the process dies
	)
	az := azuritetest.Shared(t)
	target, err := url.Parse(az.URL)
	require.NoError(t, err)
	proxy := &pageProxy{}
	ps := httptest.NewServer(proxy.handler(target))
	t.Cleanup(ps.Close)
	endpoint := func(account string) string { return ps.URL + "/" + account }
	srv := fakearm.NewServer(t, fakearm.Options{Blob: &fakearm.BlobBackend{Endpoint: endpoint, Key: azuritetest.Key}})
	for k, v := range srv.Env() {
		t.Setenv(k, v)
	}
	t.Setenv("IMGFLOW_AZURE_BLOB_ENDPOINT", ps.URL+"/{account}")
	t.Setenv("IMGFLOW_AZURE_STORAGE_KEY", azuritetest.DevKey)
	seedStorage(t, "imgflow-resume", "westeurope", "imgflowtest") // Azurite serves it already

	root, state := t.TempDir(), t.TempDir()
	disk := filepath.Join(root, "disk.vhd")
	scatteredDisk(t, disk, diskSize)
	var suffix [4]byte
	_, _ = rand.Read(suffix[:])
	container := "resume" + hex.EncodeToString(suffix[:])
	wf := filepath.Join(root, "upload.star")
	require.NoError(t, os.WriteFile(wf, []byte(fmt.Sprintf(`rg = resource_group("imgflow-resume", location = "westeurope")
sa = storage_account("imgflowtest", resource_group = rg)
vhd_upload("//disk.vhd", dest = blob(sa, container = %q, name = "disk.vhd"))
`, container)), 0o644))
	args := []string{"run", "--root", root, "--state", state, "--target", "azure"}

	// The first run: a separate imgflow process, killed once killAfter
	// pieces are in (the proxy holds the rest).
	proxy.mu.Lock()
	proxy.stopAt, proxy.stopped = killAfter, make(chan struct{})
	stopped := proxy.stopped
	proxy.mu.Unlock()
	self, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(self, append(args, wf)...)
	cmd.Env = append(os.Environ(), "IMGFLOW_TEST_MAIN=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() }) // before the proxy closes: it waits for the requests it holds
	select {
	case <-stopped:
	case err := <-exited:
		t.Fatalf("imgflow ended before the upload was half-way: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	case <-time.After(60 * time.Second):
		require.NoError(t, cmd.Process.Kill())
		<-exited
		t.Fatalf("the upload never got %d pieces in\nstdout:\n%s\nstderr:\n%s", killAfter, stdout.String(), stderr.String())
	}
	pc := pageClient(t, az.Endpoint("imgflowtest")+"/"+container+"/disk.vhd")
	present := pageBytes(t, pc)
	require.Equal(t, int64(killAfter<<20), present, "the blob exists with the pieces written so far")
	require.NoError(t, cmd.Process.Kill()) // SIGKILL: no cleanup, the lease stays
	<-exited
	m := runIDRE.FindStringSubmatch(stdout.String())
	require.NotNil(t, m, stdout.String())
	props, err := pc.GetProperties(context.Background(), nil)
	require.NoError(t, err)
	assert.Equal(t, "leased", string(*props.LeaseState), "the dead process's lease has not ended yet")

	// The resume.
	proxy.reset()
	res := imgflow(t, append(args, "--resume", m[1])...)
	require.Equal(t, 0, res.code, res.String())
	assert.Contains(t, res.stderr, "another upload holds the blob's lease; waiting for it")
	assert.Contains(t, res.stderr, fmt.Sprintf("resuming an interrupted upload (%d bytes of pages already there)", present))
	data := int64(diskSize/2 + 512) // the extents and the footer
	assert.Equal(t, data-present, proxy.sent(), "the resume sends exactly what the blob lacked")

	// Byte-identical: the sparse digest of the blob, read from its page
	// ranges, is the disk's (equal digests: equal bytes), and so is the
	// digest the upload recorded.
	f, err := os.Open(disk)
	require.NoError(t, err)
	defer f.Close()
	st, err := f.Stat()
	require.NoError(t, err)
	want, err := transfer.SparseDigest(context.Background(), f, st.Size(), nil)
	require.NoError(t, err)
	props, err = pc.GetProperties(context.Background(), nil)
	require.NoError(t, err)
	require.Equal(t, st.Size(), *props.ContentLength)
	got, err := transfer.SparseDigest(context.Background(), blobReader{pc}, st.Size(), pageRanges(t, pc))
	require.NoError(t, err)
	assert.Equal(t, want, got, "the blob holds the disk's bytes")
	md := map[string]string{}
	for k, v := range props.Metadata {
		md[strings.ToLower(k)] = *v
	}
	assert.Equal(t, want, md[azure.DigestMetadataKey])
	assert.NotContains(t, md, azure.IncompleteMetadataKey, "complete")
	assert.Equal(t, "unlocked", string(*props.LeaseStatus), "the resume released its lease")
}

func pageClient(t *testing.T, u string) *pageblob.Client {
	t.Helper()
	cred, err := azblob.NewSharedKeyCredential("imgflowtest", azuritetest.DevKey)
	require.NoError(t, err)
	pc, err := pageblob.NewClientWithSharedKeyCredential(u, cred, nil)
	require.NoError(t, err)
	return pc
}

func pageRanges(t *testing.T, pc *pageblob.Client) []vhd.Range {
	t.Helper()
	var rs []vhd.Range
	pager := pc.NewGetPageRangesPager(nil)
	for pager.More() {
		page, err := pager.NextPage(context.Background())
		require.NoError(t, err)
		for _, r := range page.PageList.PageRange {
			rs = append(rs, vhd.Range{Offset: *r.Start, Length: *r.End - *r.Start + 1})
		}
	}
	return rs
}

func pageBytes(t *testing.T, pc *pageblob.Client) int64 {
	var n int64
	for _, r := range pageRanges(t, pc) {
		n += r.Length
	}
	return n
}

// blobReader reads a blob by ranged downloads.
type blobReader struct{ pc *pageblob.Client }

func (b blobReader) ReadAt(p []byte, off int64) (int, error) {
	res, err := b.pc.DownloadStream(context.Background(), &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: off, Count: int64(len(p))}})
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	return io.ReadFull(res.Body, p)
}
