package fakearm

import (
	"bytes"
	"context"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/pageblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
)

// guestStateSize is the size of a fake VM guest state blob (a real VMGS
// file of a ConfidentialVM disk is a few MiB).
const guestStateSize = 1 << 20

// GuestStateHeader starts the content of a fake VM guest state blob,
// followed by the disk's id, so a test can tell whose it is.
const GuestStateHeader = "FAKEVMGS "

// isConfidential reports a disk made with a ConfidentialVM security type.
func isConfidential(d *disk) bool {
	p := d.d.Properties
	return p != nil && p.SecurityProfile != nil && strings.HasPrefix(strOf(p.SecurityProfile.SecurityType), "ConfidentialVM")
}

// guestStateSAS is the securityDataAccessSAS of a grant with
// getSecureVMGuestStateSAS: Azure answers it for ConfidentialVM disks
// only. With a blob backend it reads a page blob "vmgs" next to the
// disk's data, signed with the same stored access policy as the disk's
// SAS, so revoking access ends both.
func (f *Fake) guestStateSAS(d *disk) (string, *Error) {
	if !isConfidential(d) {
		return "", nil
	}
	if f.opts.Blob == nil || d.data == "" {
		c := diskContainer(deref(d.d.ID))
		sig := strings.ReplaceAll(f.guid(), "-", "")
		return "https://" + c + ".z7.blob.storage.azure.net/" + strings.TrimPrefix(c, "md-") + "/vmgs?sv=2018-03-28&sr=b&si=" + f.guid() + "&sig=" + sig, nil
	}
	u, err := f.opts.Blob.guestState(d)
	if err != nil {
		return "", newErr(500, "InternalExecutionError", "fake guest state SAS: %v", err)
	}
	return u, nil
}

func (b *BlobBackend) guestState(d *disk) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), blobTimeout)
	defer cancel()
	cc, ref, cred, err := b.diskContainer(d)
	if err != nil {
		return "", err
	}
	u := cc.URL() + "/vmgs"
	pc, err := pageblob.NewClientWithSharedKeyCredential(u, cred, (*pageblob.ClientOptions)(b.opts()))
	if err != nil {
		return "", err
	}
	if _, err := pc.GetProperties(ctx, nil); bloberror.HasCode(err, bloberror.BlobNotFound) || (err != nil && strings.Contains(err.Error(), "404")) {
		if _, err := pc.Create(ctx, guestStateSize, nil); err != nil {
			return "", err
		}
		page := make([]byte, 512)
		copy(page, GuestStateHeader+deref(d.d.ID))
		if _, err := pc.UploadPages(ctx, streaming.NopCloser(bytes.NewReader(page)), blob.HTTPRange{Offset: 0, Count: 512}, nil); err != nil {
			return "", err
		}
	} else if err != nil {
		return "", err
	}
	qp, err := sas.BlobSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, Identifier: d.policy, ContainerName: ref.Container, BlobName: "vmgs"}.SignWithSharedKey(cred)
	if err != nil {
		return "", err
	}
	return u + "?" + qp.Encode(), nil
}

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
