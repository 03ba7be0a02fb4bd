package fakearm

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/storage/armstorage/v2"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/vhd"
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

// diskContainer is the container holding a disk's data: a client for it,
// the data blob and the account's credential.
func (b *BlobBackend) diskContainer(d *disk) (*container.Client, cloud.BlobRef, *azblob.SharedKeyCredential, error) {
	ref, err := cloud.ParseBlobURL(d.data)
	if err != nil {
		return nil, ref, nil, err
	}
	cred, err := b.cred(ref.Account)
	if err != nil {
		return nil, ref, nil, err
	}
	base := strings.TrimRight(b.Endpoint(ref.Account), "/") + "/" + ref.Container
	cc, err := container.NewClientWithSharedKeyCredential(base, cred, (*container.ClientOptions)(b.opts()))
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
	ref, err := cloud.ParseBlobURL(raw)
	if err != nil {
		return nil, ref, err
	}
	cred, err := b.cred(ref.Account)
	if err != nil {
		return nil, ref, err
	}
	cc, err := container.NewClientWithSharedKeyCredential(strings.TrimRight(b.Endpoint(ref.Account), "/")+"/"+ref.Container, cred, (*container.ClientOptions)(b.opts()))
	if err != nil {
		return nil, ref, err
	}
	return cc.NewBlobClient(ref.Name), ref, nil
}

// checkVHD checks that uri names a page blob of a storage account of this
// subscription holding a fixed VHD whose virtual size Azure accepts; it
// returns that size (0 without a blob backend) and the account.
func (f *Fake) checkVHD(uri string) (int64, *armstorage.Account, *Error) {
	ref, err := cloud.ParseBlobURL(uri)
	if err != nil {
		return 0, nil, armError(azrules.InvalidParameter("", "%v", err))
	}
	acct := f.findAccount(ref.Account)
	if acct == nil {
		return 0, nil, newErr(http.StatusNotFound, cloud.CodeResourceNotFound, "storage account %s not found", ref.Account)
	}
	if f.opts.Blob == nil {
		return 0, acct, nil
	}
	size, verr := f.opts.Blob.vhdSize(uri)
	return size, acct, verr
}

func (b *BlobBackend) vhdSize(uri string) (int64, *Error) {
	bc, ref, err := b.blobClient(uri)
	if err != nil {
		return 0, armError(azrules.InvalidParameter("", "%v", err))
	}
	ctx, cancel := context.WithTimeout(context.Background(), blobTimeout)
	defer cancel()
	shown := ref.URL()
	props, err := bc.GetProperties(ctx, nil)
	if err != nil {
		if bloberror.HasCode(err, bloberror.BlobNotFound, bloberror.ContainerNotFound) || strings.Contains(err.Error(), "404") {
			return 0, newErr(http.StatusNotFound, cloud.CodeBlobNotFound, "The specified blob does not exist. (%s)", shown)
		}
		return 0, newErr(http.StatusInternalServerError, "InternalExecutionError", "read VHD %s: %v", shown, err)
	}
	readFooter := func() ([]byte, error) {
		size := deref(props.ContentLength)
		res, err := bc.DownloadStream(ctx, &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: size - vhd.FooterSize, Count: vhd.FooterSize}})
		if err != nil {
			return nil, err
		}
		defer res.Body.Close()
		footer, err := io.ReadAll(res.Body)
		if err == nil && len(footer) != vhd.FooterSize {
			err = fmt.Errorf("got %d bytes, want %d", len(footer), vhd.FooterSize)
		}
		return footer, err
	}
	size, err := azrules.CheckVHDBlob("", ref, strOf(props.BlobType), deref(props.ContentLength), readFooter)
	return size, armError(err)
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
func (b *BlobBackend) copyToDisk(src, containerName string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), blobTimeout)
	defer cancel()
	srcRef, err := cloud.ParseBlobURL(src)
	if err != nil {
		return "", err
	}
	q, err := b.readSAS(srcRef, time.Hour)
	if err != nil {
		return "", err
	}
	acct := b.diskAccount()
	dst := strings.TrimRight(b.Endpoint(acct), "/") + "/" + containerName + "/abcd"
	bc, _, err := b.blobClient(dst)
	if err != nil {
		return "", err
	}
	cred, err := b.cred(acct)
	if err != nil {
		return "", err
	}
	cc, err := container.NewClientWithSharedKeyCredential(strings.TrimRight(b.Endpoint(acct), "/")+"/"+containerName, cred, (*container.ClientOptions)(b.opts()))
	if err != nil {
		return "", err
	}
	if _, err := cc.Create(ctx, nil); err != nil && !bloberror.HasCode(err, bloberror.ContainerAlreadyExists) {
		return "", err
	}
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

// grant opens read access to a disk's data with a SAS bound to a stored
// access policy of its container (si=…, as managed disk SAS are), so
// revoke can close it.
func (b *BlobBackend) grant(d *disk, policy string, dur time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), blobTimeout)
	defer cancel()
	cc, ref, cred, err := b.diskContainer(d)
	if err != nil {
		return "", err
	}
	now := time.Now().UTC()
	_, err = cc.SetAccessPolicy(ctx, &container.SetAccessPolicyOptions{ContainerACL: []*container.SignedIdentifier{{
		ID: to(policy),
		AccessPolicy: &container.AccessPolicy{
			Start: to(now.Add(-time.Minute)), Expiry: to(now.Add(dur)), Permission: to("r"),
		},
	}}})
	if err != nil {
		return "", err
	}
	qp, err := sas.BlobSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, Identifier: policy, ContainerName: ref.Container, BlobName: ref.Name}.SignWithSharedKey(cred)
	if err != nil {
		return "", err
	}
	d.policy = policy
	return d.data + "?" + qp.Encode(), nil
}

// revoke removes the stored access policy: the disk's SAS stops working.
func (b *BlobBackend) revoke(d *disk) error {
	if d.policy == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), blobTimeout)
	defer cancel()
	cc, _, _, err := b.diskContainer(d)
	if err != nil {
		return err
	}
	if _, err := cc.SetAccessPolicy(ctx, &container.SetAccessPolicyOptions{}); err != nil {
		return err
	}
	d.policy = ""
	return nil
}

// dropDisk deletes a disk's data container (best effort).
func (b *BlobBackend) dropDisk(d *disk) {
	ctx, cancel := context.WithTimeout(context.Background(), blobTimeout)
	defer cancel()
	ref, err := cloud.ParseBlobURL(d.data)
	if err != nil {
		return
	}
	cred, err := b.cred(ref.Account)
	if err != nil {
		return
	}
	cc, err := container.NewClientWithSharedKeyCredential(strings.TrimRight(b.Endpoint(ref.Account), "/")+"/"+ref.Container, cred, (*container.ClientOptions)(b.opts()))
	if err != nil {
		return
	}
	_, _ = cc.Delete(ctx, nil)
}
