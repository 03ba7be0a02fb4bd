package fakearm

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	"github.com/imgflow/imgflow/cloud"
)

// BlobBackend is the blob service behind the fake's storage accounts
// (Azurite in tests).
type BlobBackend struct {
	// Endpoint is an account's blob service URL, reported as its
	// primaryEndpoints.blob (Azurite: http://127.0.0.1:<port>/<account>).
	Endpoint func(account string) string
	// Key is an account's shared key.
	Key func(account string) string
	// DiskAccount holds managed disk data (default devstoreaccount1).
	DiskAccount string
	// Options are the blob client options.
	Options *azblob.ClientOptions
}

// blobTimeout bounds the fake's own blob calls.
const blobTimeout = 2 * time.Minute

func (b *BlobBackend) diskAccount() string {
	if b.DiskAccount != "" {
		return b.DiskAccount
	}
	return "devstoreaccount1"
}

func (b *BlobBackend) cred(account string) (*azblob.SharedKeyCredential, error) {
	return azblob.NewSharedKeyCredential(account, b.Key(account))
}

// containerOf is the container of a blob URL of the backend: a
// shared-key client for it, the blob's ref and the account's credential.
func (b *BlobBackend) containerOf(raw string) (*container.Client, cloud.BlobRef, *azblob.SharedKeyCredential, error) {
	ref, err := cloud.ParseBlobURL(raw)
	if err != nil {
		return nil, ref, nil, err
	}
	cred, err := b.cred(ref.Account)
	if err != nil {
		return nil, ref, nil, err
	}
	cc, err := container.NewClientWithSharedKeyCredential(strings.TrimRight(b.Endpoint(ref.Account), "/")+"/"+ref.Container, cred, (*container.ClientOptions)(b.opts()))
	return cc, ref, cred, err
}

func (b *BlobBackend) opts() *azblob.ClientOptions {
	if b.Options != nil {
		o := *b.Options
		return &o
	}
	return &azblob.ClientOptions{}
}

// blobClient is a shared-key client for a blob URL (any query dropped).
func (b *BlobBackend) blobClient(raw string) (*blob.Client, cloud.BlobRef, error) {
	cc, ref, _, err := b.containerOf(raw)
	if err != nil {
		return nil, ref, err
	}
	return cc.NewBlobClient(ref.Name), ref, nil
}

// readSAS signs a short read SAS for a blob of the backend.
func (b *BlobBackend) readSAS(ref cloud.BlobRef, d time.Duration) (string, error) {
	cred, err := b.cred(ref.Account)
	if err != nil {
		return "", err
	}
	qp, err := sas.BlobSignatureValues{
		Protocol: sas.ProtocolHTTPSandHTTP, StartTime: time.Now().Add(-time.Minute).UTC(), ExpiryTime: time.Now().Add(d).UTC(),
		Permissions: (&sas.BlobPermissions{Read: true}).String(), ContainerName: ref.Container, BlobName: ref.Name,
	}.SignWithSharedKey(cred)
	if err != nil {
		return "", err
	}
	return qp.Encode(), nil
}

// copyToDisk copies the VHD at src into container/abcd of the disk
// account (a server-side copy) and returns the copy's URL.
func (b *BlobBackend) copyToDisk(ctx context.Context, src, containerName string) (string, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), blobTimeout)
	defer cancel()
	srcRef, err := cloud.ParseBlobURL(src)
	if err != nil {
		return "", err
	}
	q, err := b.readSAS(srcRef, time.Hour)
	if err != nil {
		return "", err
	}
	dst := strings.TrimRight(b.Endpoint(b.diskAccount()), "/") + "/" + containerName + "/abcd"
	cc, _, _, err := b.containerOf(dst)
	if err != nil {
		return "", err
	}
	if _, err := cc.Create(ctx, nil); err != nil && !bloberror.HasCode(err, bloberror.ContainerAlreadyExists) {
		return "", err
	}
	bc := cc.NewBlobClient("abcd")
	srcURL := strings.TrimRight(b.Endpoint(srcRef.Account), "/") + "/" + srcRef.Container + "/" + srcRef.Name + "?" + q
	res, err := bc.StartCopyFromURL(ctx, srcURL, nil)
	if err != nil {
		return "", err
	}
	for st := strOf(res.CopyStatus); st != string(blob.CopyStatusTypeSuccess); {
		if st != string(blob.CopyStatusTypePending) {
			return "", fmt.Errorf("copy to disk ended %s", st)
		}
		time.Sleep(20 * time.Millisecond)
		props, err := bc.GetProperties(ctx, nil)
		if err != nil {
			return "", err
		}
		st = strOf(props.CopyStatus)
	}
	return dst, nil
}
