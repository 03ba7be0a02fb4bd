package azure_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/pageblob"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azure"
	"github.com/imgflow/imgflow/cloud/azure/azuritetest"
	"github.com/imgflow/imgflow/cloud/azure/fakearm"
)

// putPages counts the Put Page requests that reached the service and
// their bytes; after stopAfter of them (when set) it calls stop, once.
type putPages struct {
	mu        sync.Mutex
	n         int
	bytes     int64
	stopAfter int
	stop      func()
}

func (c *putPages) Do(req *policy.Request) (*http.Response, error) {
	raw := req.Raw()
	if raw.Method != http.MethodPut || raw.URL.Query().Get("comp") != "page" || header(raw, "x-ms-page-write") != "update" {
		return req.Next()
	}
	var first, last int64
	if _, err := fmt.Sscanf(header(raw, "x-ms-range"), "bytes=%d-%d", &first, &last); err != nil {
		return nil, fmt.Errorf("put page without a range: %w", err)
	}
	resp, err := req.Next()
	if err != nil || resp.StatusCode != http.StatusCreated {
		return resp, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	c.bytes += last - first + 1
	if c.stop != nil && c.n == c.stopAfter {
		c.stop()
	}
	return resp, err
}

// header is a request header as the SDK set it (not canonicalised).
func header(raw *http.Request, name string) string {
	for k, v := range raw.Header {
		if strings.EqualFold(k, name) && len(v) > 0 {
			return v[0]
		}
	}
	return ""
}

func (c *putPages) reset(stopAfter int, stop func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n, c.bytes, c.stopAfter, c.stop = 0, 0, stopAfter, stop
}

func (c *putPages) sent() (int, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n, c.bytes
}

// scatterPiece is the size of each of scatteredVHD's data pieces.
const scatterPiece = 64 << 10

// scatteredVHD is a 4 MiB disk with a 64 KiB piece of data every
// 256 KiB: 16 pieces, one Put Page each (the gaps are wider than
// transfer.MergeGap), and the footer. Enough pieces to interrupt an
// upload after ten with some left; what the resume tests check is the
// count of pieces, so they are small: every byte is read, hashed and
// compared under the race detector in CI.
func scatteredVHD(t *testing.T) *image {
	var offs []int64
	for off := int64(0); off < 4<<20; off += 4 * scatterPiece {
		offs = append(offs, off)
	}
	return makeVHD(t, 4<<20, scatterPiece, offs...)
}

func (w *world) uploadErr(ctx context.Context, img *image, r cloud.BlobRef, overwrite bool) (*cloud.Blob, error) {
	f, err := os.Open(img.path)
	require.NoError(w.t, err)
	defer f.Close()
	return w.p.UploadPageBlob(ctx, r, cloud.PageSource{Reader: f, Size: int64(len(img.content)), Ranges: img.ranges}, overwrite)
}

// interrupt uploads img to r and cancels the upload once after pieces
// Put Pages went through.
func (w *world) interrupt(counter *putPages, img *image, r cloud.BlobRef, pieces int) {
	w.t.Helper()
	ctx, cancel := context.WithCancel(w.ctx)
	defer cancel()
	counter.reset(pieces, cancel)
	_, err := w.uploadErr(ctx, img, r, false)
	require.ErrorIs(w.t, err, context.Canceled)
}

// rawMetadata is the blob's metadata as the service holds it, markers
// included.
func (w *world) rawMetadata(r cloud.BlobRef) map[string]string {
	w.t.Helper()
	cred, err := azblob.NewSharedKeyCredential(r.Account, azuritetest.DevKey)
	require.NoError(w.t, err)
	pc, err := pageblob.NewClientWithSharedKeyCredential(r.URL(), cred, nil)
	require.NoError(w.t, err)
	props, err := pc.GetProperties(w.ctx, nil)
	require.NoError(w.t, err)
	md := map[string]string{}
	for k, v := range props.Metadata {
		md[strings.ToLower(k)] = *v // HTTP canonicalises the names
	}
	return md
}

func newCountingWorld(t *testing.T) (*world, *putPages) {
	counter := &putPages{}
	w := newWorld(t, fakearm.Options{}, func(o *azure.Options) {
		o.Parallel = 2
		o.Blob.PerCallPolicies = append(o.Blob.PerCallPolicies, counter)
	})
	return w, counter
}

func TestUploadResumesAnInterruptedUpload(t *testing.T) {
	w, counter := newCountingWorld(t)
	sa, c := w.base("imgflowtest")
	img := scatteredVHD(t)
	var data int64
	for _, r := range img.ranges {
		data += r.Length
	}

	// The reference: one uninterrupted upload.
	whole := ref(sa, c, "whole.vhd")
	counter.reset(0, nil)
	w.upload(img, whole)
	_, wholeBytes := counter.sent()
	require.Equal(t, data, wholeBytes, "an upload sends the data ranges")

	r := ref(sa, c, "resumed.vhd")
	w.interrupt(counter, img, r, 10)
	_, err := w.p.GetBlob(w.ctx, r)
	assert.True(t, cloud.HasCode(err, cloud.CodeBlobNotFound), "an incomplete blob holds no content yet: %v", err)
	assert.Contains(t, err.Error(), "interrupted upload")
	md := w.rawMetadata(r)
	assert.Equal(t, img.digest(t), md[azure.PendingDigestMetadataKey], "the blob says what it is meant to hold")
	assert.NotEmpty(t, md[azure.IncompleteMetadataKey])
	assert.NotContains(t, md, azure.DigestMetadataKey)

	counter.reset(0, nil)
	b := w.upload(img, r)
	n, resumed := counter.sent()
	assert.Less(t, resumed, wholeBytes, "the resumed upload sends only what is missing")
	assert.LessOrEqual(t, resumed, wholeBytes-10*scatterPiece, "the ten pieces in before the interruption are not sent again")
	assert.Positive(t, n)
	assert.Equal(t, img.digest(t), b.Digest)
	assert.Equal(t, w.read(whole), w.read(r), "byte-identical to the uninterrupted upload")
	assert.True(t, equalBytes(img.content, w.read(r)))
	md = w.rawMetadata(r)
	assert.Equal(t, img.digest(t), md[azure.DigestMetadataKey])
	assert.NotContains(t, md, azure.PendingDigestMetadataKey, "complete: the markers are gone")
	assert.NotContains(t, md, azure.IncompleteMetadataKey)
	// Ten pieces were in when the upload was cancelled; with two in
	// flight, the service may have taken an eleventh that the client no
	// longer waited for. The resume finds what is there and sends the rest.
	there := -1
	for _, l := range w.logLines() {
		if rest, ok := strings.CutPrefix(l, r.URL()+": resuming an interrupted upload ("); ok {
			there, _ = strconv.Atoi(strings.TrimSuffix(rest, " bytes of pages already there)"))
		}
	}
	assert.Contains(t, []int{10 * scatterPiece, 11 * scatterPiece}, there, "the resume said what it found: %q", w.logLines())
	assert.Equal(t, wholeBytes-int64(there), resumed, "it sends exactly what was missing")

	// Complete now: uploading it again is BlobAlreadyExists, as before.
	_, err = w.uploadErr(w.ctx, img, r, false)
	assert.True(t, cloud.HasCode(err, cloud.CodeBlobAlreadyExists), "%v", err)
}

func TestUploadRefusesAnInterruptedUploadOfOtherContent(t *testing.T) {
	w, counter := newCountingWorld(t)
	sa, c := w.base("imgflowtest")
	r := ref(sa, c, "disk.vhd")
	first, other := scatteredVHD(t), scatteredVHD(t) // same size, other random data
	w.interrupt(counter, first, r, 4)

	counter.reset(0, nil)
	_, err := w.uploadErr(w.ctx, other, r, false)
	require.Error(t, err)
	assert.True(t, cloud.HasCode(err, cloud.CodeBlobAlreadyExists), "%v", err)
	assert.Contains(t, err.Error(), r.URL()+" holds an interrupted upload of different content")
	assert.Contains(t, err.Error(), "pass overwrite = True to replace it, or delete the blob")
	n, _ := counter.sent()
	assert.Zero(t, n, "nothing was written")
	assert.Equal(t, first.digest(t), w.rawMetadata(r)[azure.PendingDigestMetadataKey], "the blob is left as it was")

	// With overwrite it is replaced, from scratch.
	b, err := w.uploadErr(w.ctx, other, r, true)
	require.NoError(t, err)
	assert.Equal(t, other.digest(t), b.Digest)
	assert.True(t, equalBytes(other.content, w.read(r)))
}

// The source changing between the interrupted upload and the resume is
// other content: its digest differs.
func TestUploadDetectsASourceChangedBeforeTheResume(t *testing.T) {
	w, counter := newCountingWorld(t)
	sa, c := w.base("imgflowtest")
	r := ref(sa, c, "disk.vhd")
	img := scatteredVHD(t)
	w.interrupt(counter, img, r, 4)
	f, err := os.OpenFile(img.path, os.O_RDWR, 0)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte("changed"), 0)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	_, err = w.uploadErr(w.ctx, img, r, false)
	assert.ErrorContains(t, err, "interrupted upload of different content")
}

// TestConcurrentUploadsOfOneBlob: two uploads of one blob at once; the
// lease holder's writes are held until the other has found the lease and
// waits (holdWrites), so the two always overlap however small the disk.
func TestConcurrentUploadsOfOneBlob(t *testing.T) {
	t.Run("same content", func(t *testing.T) {
		w, hold := newHeldWorld(t)
		sa, c := w.base("imgflowtest")
		r := ref(sa, c, "disk.vhd")
		img := scatteredVHD(t)
		errs := uploadTogether(w, r, false, img, img)
		hold.waited(t)
		for _, err := range errs {
			// The one that waited finds it complete: BlobAlreadyExists,
			// which vhd_upload takes as "exists" when the digest matches.
			if err != nil {
				assert.True(t, cloud.HasCode(err, cloud.CodeBlobAlreadyExists), "%v", err)
			}
		}
		assert.True(t, errs[0] == nil || errs[1] == nil, "one of them uploads: %v", errs)
		b, err := w.p.GetBlob(w.ctx, r)
		require.NoError(t, err)
		assert.Equal(t, img.digest(t), b.Digest)
		assert.True(t, equalBytes(img.content, w.read(r)))
	})
	t.Run("other content, overwrite", func(t *testing.T) {
		w, hold := newHeldWorld(t)
		sa, c := w.base("imgflowtest")
		r := ref(sa, c, "disk.vhd")
		a, b := scatteredVHD(t), scatteredVHD(t)
		errs := uploadTogether(w, r, true, a, b)
		hold.waited(t)
		require.NoError(t, errors.Join(errs...), "the second waits for the first, then replaces its blob")
		got, err := w.p.GetBlob(w.ctx, r)
		require.NoError(t, err)
		content := w.read(r)
		switch got.Digest {
		case a.digest(t):
			assert.True(t, equalBytes(a.content, content))
		case b.digest(t):
			assert.True(t, equalBytes(b.content, content))
		default:
			t.Fatalf("the blob is neither upload: digest %s", got.Digest)
		}
	})
}

// holdWrites holds every Put Page until an upload has logged that it
// waits for another's lease (or holdLimit passed): only the lease holder
// writes pages, so the other upload meets the lease every time.
type holdWrites struct {
	w       *world
	release chan struct{}
	seen    bool
}

const (
	leaseWaitLog = "another upload holds the blob's lease; waiting"
	holdLimit    = 30 * time.Second
)

func newHeldWorld(t *testing.T) (*world, *holdWrites) {
	h := &holdWrites{release: make(chan struct{})}
	h.w = newWorld(t, fakearm.Options{}, func(o *azure.Options) {
		o.Parallel = 2
		o.Blob.PerCallPolicies = append(o.Blob.PerCallPolicies, h)
	})
	go h.watch()
	return h.w, h
}

// watch releases the writes once the log shows a waiting upload.
func (h *holdWrites) watch() {
	deadline := time.Now().Add(holdLimit)
	for time.Now().Before(deadline) && h.w.ctx.Err() == nil {
		if slices.ContainsFunc(h.w.logLines(), func(l string) bool { return strings.Contains(l, leaseWaitLog) }) {
			h.seen = true
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(h.release)
}

func (h *holdWrites) Do(req *policy.Request) (*http.Response, error) {
	raw := req.Raw()
	if raw.Method == http.MethodPut && raw.URL.Query().Get("comp") == "page" {
		select {
		case <-h.release:
		case <-raw.Context().Done():
			return nil, raw.Context().Err()
		}
	}
	return req.Next()
}

// waited asserts that one upload waited for the other's lease.
func (h *holdWrites) waited(t *testing.T) {
	<-h.release
	assert.True(t, h.seen, "one upload waited for the other's lease: %q", h.w.logLines())
}

// uploadTogether uploads the images to r at the same time.
func uploadTogether(w *world, r cloud.BlobRef, overwrite bool, imgs ...*image) []error {
	errs := make([]error, len(imgs))
	var wg sync.WaitGroup
	for i, img := range imgs {
		wg.Go(func() { _, errs[i] = w.uploadErr(w.ctx, img, r, overwrite) })
	}
	wg.Wait()
	return errs
}
