package fakearm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/cloud/azsim"
	"github.com/imgflow/imgflow/vhd"
)

// blobData is where the simulation finds the data of the fake's blobs,
// managed images, image versions and disks: the blob backend. Blobs are
// the backend's own (the Azure target writes them there); each image,
// version and disk has a copy of its source's VHD in a container of the
// disk account ("md-…", as a managed disk's storage is named), made as
// Azure makes it, so a source deleted afterwards (packer's staged OS
// disk) does not matter; a disk's access SAS reads its copy there.
type blobData struct {
	b *BlobBackend

	mu sync.Mutex
	at map[azsim.Key]string // a resource's copy: its blob URL, no SAS
	// policy is the stored access policy of a disk's open SAS.
	policy map[azsim.Key]string
	seq    atomic.Int64
}

var (
	_ azsim.Data       = (*blobData)(nil)
	_ azsim.Blobs      = (*blobData)(nil)
	_ azsim.DiskAccess = (*blobData)(nil)
)

func newBlobData(b *BlobBackend) *blobData {
	return &blobData{b: b, at: map[azsim.Key]string{}, policy: map[azsim.Key]string{}}
}

// url is the blob URL of the content at k, "" when none is kept.
func (d *blobData) url(k azsim.Key) string {
	if k.ID == "" {
		return strings.TrimRight(d.b.Endpoint(k.Account), "/") + "/" + k.Container + "/" + k.Blob
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.at[k]
}

// contentURL is the blob holding the copy of the resource id ("" when
// none is kept).
func (d *blobData) contentURL(id string) string {
	if d == nil {
		return ""
	}
	return d.url(azsim.ResourceKey(id))
}

// Blob implements azsim.Blobs.
func (d *blobData) Blob(ctx context.Context, ref cloud.BlobRef) (*azsim.BlobState, error) {
	bc, _, err := d.b.blobClient(ref.URL())
	if err != nil {
		return nil, err
	}
	props, err := bc.GetProperties(ctx, nil)
	if isNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", ref.URL(), err)
	}
	return &azsim.BlobState{Name: ref.Name, Type: strOf(props.BlobType), Size: deref(props.ContentLength)}, nil
}

func isNotFound(err error) bool {
	return err != nil && (bloberror.HasCode(err, bloberror.BlobNotFound, bloberror.ContainerNotFound) || strings.Contains(err.Error(), "404"))
}

// blobContent reads a blob of the backend.
type blobContent struct {
	ctx  context.Context
	bc   *blob.Client
	url  string
	size int64
}

func (c *blobContent) ReadAt(p []byte, off int64) (int, error) {
	res, err := c.bc.DownloadStream(c.ctx, &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: off, Count: int64(len(p))}})
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	return io.ReadFull(res.Body, p)
}

func (c *blobContent) Close() error            { return nil }
func (c *blobContent) Size() int64             { return c.size }
func (c *blobContent) DataRanges() []vhd.Range { return []vhd.Range{{Offset: 0, Length: c.size}} }

// Open implements azsim.Data.
func (d *blobData) Open(ctx context.Context, k azsim.Key) (azsim.Content, error) {
	u := d.url(k)
	if u == "" {
		return nil, nil
	}
	bc, _, err := d.b.blobClient(u)
	if err != nil {
		return nil, err
	}
	props, err := bc.GetProperties(ctx, nil)
	if isNotFound(err) {
		return nil, fmt.Errorf("%s: %w", u, os.ErrNotExist)
	}
	if err != nil {
		return nil, err
	}
	return &blobContent{ctx: context.WithoutCancel(ctx), bc: bc, url: u, size: deref(props.ContentLength)}, nil
}

// Has implements azsim.Data.
func (d *blobData) Has(k azsim.Key) bool { return d.url(k) != "" }

// Same implements azsim.Data: content is copied, never rewritten, so k
// holds what c was opened from while it names the same blob.
func (d *blobData) Same(c azsim.Content, k azsim.Key) bool {
	bc, ok := c.(*blobContent)
	return ok && bc.url == d.url(k)
}

// staged is a copy made in the backend, placed or dropped.
type staged struct {
	d   *blobData
	url string
}

func (s staged) Discard() {
	if s.url != "" {
		s.d.drop(s.url)
	}
}

// Copy implements azsim.Data: a server-side copy into a new container of
// the disk account.
func (d *blobData) Copy(ctx context.Context, c azsim.Content, _ int64) (azsim.Staged, string, error) {
	src, ok := c.(*blobContent)
	if !ok || src == nil {
		return staged{d: d}, "", nil // not kept: neither is the copy
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s#%d#%d", src.url, d.seq.Add(1), time.Now().UnixNano()))
	u, err := d.b.copyToDisk(ctx, src.url, azrules.DiskAccountPrefix+hex.EncodeToString(sum[:6]))
	if err != nil {
		return nil, "", fmt.Errorf("copy %s: %w", src.url, err)
	}
	return staged{d: d, url: u}, "", nil
}

// Write implements azsim.Data: the fake's blobs are written to the backend
// by their clients, never through the simulation.
func (d *blobData) Write(context.Context, int64, io.ReaderAt, []vhd.Range) (azsim.Staged, string, error) {
	return nil, "", errors.New("fakearm: blobs are written to the blob backend")
}

// Place implements azsim.Data.
func (d *blobData) Place(s azsim.Staged, k azsim.Key) error {
	st, _ := s.(staged)
	d.mu.Lock()
	defer d.mu.Unlock()
	if st.url != "" {
		d.at[k] = st.url
	}
	return nil
}

// Remove implements azsim.Data: the copy's container goes.
func (d *blobData) Remove(k azsim.Key) error {
	d.mu.Lock()
	u := d.at[k]
	delete(d.at, k)
	delete(d.policy, k)
	d.mu.Unlock()
	if u != "" {
		d.drop(u)
	}
	return nil
}

// drop deletes the container of a copy (best effort).
func (d *blobData) drop(u string) {
	ctx, cancel := context.WithTimeout(context.Background(), blobTimeout)
	defer cancel()
	if cc, _, _, err := d.b.containerOf(u); err == nil {
		_, _ = cc.Delete(ctx, nil)
	}
}

// Grant implements azsim.DiskAccess: a SAS of the disk's copy bound to a
// stored access policy of its container (si=…, as managed disk SAS are),
// so that Revoke can close it.
func (d *blobData) Grant(ctx context.Context, k azsim.Key, expiry time.Time) (string, error) {
	u := d.url(k)
	if u == "" {
		return "", fmt.Errorf("fakearm: disk %s has no data in the blob backend", k.ID)
	}
	cc, ref, cred, err := d.b.containerOf(u)
	if err != nil {
		return "", err
	}
	policy := fmt.Sprintf("grant-%d", d.seq.Add(1))
	_, err = cc.SetAccessPolicy(ctx, &container.SetAccessPolicyOptions{ContainerACL: []*container.SignedIdentifier{{
		ID: to(policy),
		AccessPolicy: &container.AccessPolicy{
			Start: to(time.Now().UTC().Add(-time.Minute)), Expiry: to(expiry.UTC()), Permission: to("r"),
		},
	}}})
	if err != nil {
		return "", err
	}
	qp, err := sas.BlobSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, Identifier: policy, ContainerName: ref.Container, BlobName: ref.Name}.SignWithSharedKey(cred)
	if err != nil {
		return "", err
	}
	d.mu.Lock()
	d.policy[k] = policy
	d.mu.Unlock()
	return u + "?" + qp.Encode(), nil
}

// Revoke implements azsim.DiskAccess: the stored access policy goes, and
// with it every SAS signed with it.
func (d *blobData) Revoke(ctx context.Context, k azsim.Key) error {
	d.mu.Lock()
	u, policy := d.at[k], d.policy[k]
	delete(d.policy, k)
	d.mu.Unlock()
	if u == "" || policy == "" {
		return nil
	}
	cc, _, _, err := d.b.containerOf(u)
	if err != nil {
		return err
	}
	_, err = cc.SetAccessPolicy(ctx, &container.SetAccessPolicyOptions{})
	return err
}

// policyOf is the stored access policy of the disk id's open SAS.
func (d *blobData) policyOf(id string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.policy[azsim.ResourceKey(id)]
}
