package azure_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azure"
	"github.com/imgflow/imgflow/cloud/azure/fakearm"
	"github.com/imgflow/imgflow/cloud/transfer"
	"github.com/imgflow/imgflow/progress"
)

func (img *image) digest(t *testing.T) string {
	t.Helper()
	d, err := transfer.SparseDigest(context.Background(), bytes.NewReader(img.content), int64(len(img.content)), nil)
	require.NoError(t, err)
	return d
}

// recorder is a progress.Reporter keeping what it was told.
type recorder struct {
	mu     sync.Mutex
	starts map[string]int64
	added  map[string]int64
	ends   map[string]error
}

func newRecorder() *recorder {
	return &recorder{starts: map[string]int64{}, added: map[string]int64{}, ends: map[string]error{}}
}

type recorded struct {
	r  *recorder
	op string
}

func (r *recorder) Start(op string, total int64) progress.Tracker {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.starts[op] = total
	return recorded{r, op}
}

func (t recorded) Add(n int64) {
	t.r.mu.Lock()
	defer t.r.mu.Unlock()
	t.r.added[t.op] += n
}

func (t recorded) End(err error) {
	t.r.mu.Lock()
	defer t.r.mu.Unlock()
	t.r.ends[t.op] = err
}

func TestUploadStoresTheDigest(t *testing.T) {
	rec := newRecorder()
	w := newWorld(t, fakearm.Options{}, func(o *azure.Options) { o.Transfers = rec })
	sa, c := w.base("imgflowtest")
	img := sparseVHD(t)
	r := ref(sa, c, "sparse.vhd")
	b := w.upload(img, r)
	assert.Equal(t, img.digest(t), b.Digest)
	assert.Empty(t, b.Metadata, "the digest is not user metadata")

	got, err := w.p.GetBlob(w.ctx, r)
	require.NoError(t, err)
	assert.Equal(t, img.digest(t), got.Digest)

	// Replacing the user metadata keeps the digest; it cannot be set.
	require.NoError(t, w.p.SetBlobMetadata(w.ctx, r, map[string]string{"imgflowsource": "v1", "ImgflowDigest": "forged"}))
	got, err = w.p.GetBlob(w.ctx, r)
	require.NoError(t, err)
	assert.Equal(t, img.digest(t), got.Digest)
	assert.Equal(t, map[string]string{"imgflowsource": "v1"}, got.Metadata)

	// Progress: the bytes read, from start to end.
	op := "upload " + r.URL()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	assert.Equal(t, int64(5<<20+4096+512), rec.starts[op], "the data ranges: 1 MiB, 4 MiB of written zeros (read, not sent), 4 KiB, the footer")
	assert.Equal(t, rec.starts[op], rec.added[op])
	assert.Contains(t, rec.ends, op)
	assert.NoError(t, rec.ends[op])
}

func TestUploadHasNoContentMD5ByDefault(t *testing.T) {
	w := newWorld(t, fakearm.Options{}, nil)
	sa, c := w.base("imgflowtest")
	img := sparseVHD(t)
	b := w.upload(img, ref(sa, c, "sparse.vhd"))
	assert.Empty(t, b.MD5)
	assert.Equal(t, img.digest(t), b.Digest)
	assert.True(t, equalBytes(img.content, w.read(ref(sa, c, "sparse.vhd"))))
}

func TestCopiesCarryTheDigest(t *testing.T) {
	for _, mode := range []azure.CopyMode{azure.CopyServer, azure.CopyRanges, azure.CopyStream} {
		t.Run(string(mode), func(t *testing.T) {
			w := newWorld(t, fakearm.Options{}, func(o *azure.Options) { o.CopyMode = mode })
			sa, c := w.base("imgflowtest")
			img := sparseVHD(t)
			src := ref(sa, c, "src.vhd")
			w.upload(img, src)
			b, err := w.p.CopyBlob(w.ctx, src.URL(), ref(sa, c, "dest.vhd"), false)
			require.NoError(t, err)
			assert.Equal(t, img.digest(t), b.Digest)
			assert.Empty(t, b.Metadata)
		})
	}
}

// faultPolicy fails the first n Put Page requests at offset off with err
// (outside the SDK's retry policy, as a failure it does not retry).
type faultPolicy struct {
	mu   sync.Mutex
	off  string
	n    int
	seen int
	err  error
}

func (f *faultPolicy) Do(req *policy.Request) (*http.Response, error) {
	raw := req.Raw()
	if raw.Method == http.MethodPut && raw.URL.Query().Get("comp") == "page" && strings.HasPrefix(strings.Join(raw.Header["x-ms-range"], ""), "bytes="+f.off+"-") {
		f.mu.Lock()
		f.seen++
		fail := f.seen <= f.n
		f.mu.Unlock()
		if fail {
			return nil, f.err
		}
	}
	return req.Next()
}

func TestUploadRetriesAChunk(t *testing.T) {
	fault := &faultPolicy{off: "4194304", n: 2, err: errors.New("injected: connection reset by peer")}
	w := newWorld(t, fakearm.Options{}, func(o *azure.Options) {
		o.Blob.PerCallPolicies = append(o.Blob.PerCallPolicies, fault)
	})
	sa, c := w.base("imgflowtest")
	img := makeVHD(t, 12<<20, 12<<20, 0)
	r := ref(sa, c, "retried.vhd")
	b := w.upload(img, r)
	assert.Equal(t, img.digest(t), b.Digest)
	assert.True(t, equalBytes(img.content, w.read(r)))
	assert.Equal(t, 3, fault.seen, "two failures, then the chunk went through")
	assert.Contains(t, strings.Join(w.logLines(), "\n"), "write at 4194304: attempt 1 of 4 failed, retrying")

	// A chunk that keeps failing fails the upload, which leaves nothing.
	fault.mu.Lock()
	fault.n, fault.seen = 100, 0
	fault.mu.Unlock()
	f, err := openFile(img.path)
	require.NoError(t, err)
	defer f.Close()
	_, err = w.p.UploadPageBlob(w.ctx, ref(sa, c, "failed.vhd"), cloud.PageSource{Reader: f, Size: int64(len(img.content)), Ranges: img.ranges}, false)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "injected")
	assert.Equal(t, 4, fault.seen)
	_, err = w.p.GetBlob(w.ctx, ref(sa, c, "failed.vhd"))
	assert.True(t, cloud.HasCode(err, cloud.CodeBlobNotFound), "%v", err)
}
