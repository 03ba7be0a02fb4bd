package fakearm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/pageblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
)

// guestStateSize is the size of a fake VM guest state blob (a real VMGS
// file of a ConfidentialVM disk is a few MiB).
const guestStateSize = 1 << 20

// GuestStateHeader starts the content of a fake VM guest state blob,
// followed by the disk's id, so a test can tell whose it is.
const GuestStateHeader = "FAKEVMGS "

// guestStateSAS is the securityDataAccessSAS of a grant with
// getSecureVMGuestStateSAS, which Azure answers for ConfidentialVM disks
// only. With a blob backend it reads a page blob "vmgs" next to the
// disk's data, signed with the same stored access policy as the disk's
// SAS, so revoking access ends both; without one it is a well-formed URL
// that reads nothing.
func (f *Fake) guestStateSAS(diskID string) (string, *Error) {
	data := f.data.contentURL(diskID)
	if data == "" {
		sum := sha256.Sum256([]byte(strings.ToLower(diskID)))
		c := hex.EncodeToString(sum[:6])
		return "https://md-" + c + ".z7.blob.storage.azure.net/" + c + "/vmgs?sv=2018-03-28&sr=b&si=" + f.guid() + "&sig=" + strings.ReplaceAll(f.guid(), "-", ""), nil
	}
	u, err := f.opts.Blob.guestState(data, diskID, f.data.policyOf(diskID))
	if err != nil {
		return "", armError(fmt.Errorf("fake guest state SAS: %w", err))
	}
	return u, nil
}

func (b *BlobBackend) guestState(data, diskID, policy string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), blobTimeout)
	defer cancel()
	cc, ref, cred, err := b.containerOf(data)
	if err != nil {
		return "", err
	}
	u := cc.URL() + "/vmgs"
	pc, err := pageblob.NewClientWithSharedKeyCredential(u, cred, (*pageblob.ClientOptions)(b.opts()))
	if err != nil {
		return "", err
	}
	if _, err := pc.GetProperties(ctx, nil); isNotFound(err) {
		if _, err := pc.Create(ctx, guestStateSize, nil); err != nil {
			return "", err
		}
		page := make([]byte, 512)
		copy(page, GuestStateHeader+diskID)
		if _, err := pc.UploadPages(ctx, streaming.NopCloser(bytes.NewReader(page)), blob.HTTPRange{Offset: 0, Count: 512}, nil); err != nil {
			return "", err
		}
	} else if err != nil {
		return "", err
	}
	qp, err := sas.BlobSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, Identifier: policy, ContainerName: ref.Container, BlobName: "vmgs"}.SignWithSharedKey(cred)
	if err != nil {
		return "", err
	}
	return u + "?" + qp.Encode(), nil
}
