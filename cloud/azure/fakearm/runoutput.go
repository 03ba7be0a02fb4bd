package fakearm

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/appendblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"

	"github.com/imgflow/imgflow/internal/redact"
)

// A run command's output blobs, as the VM agent writes them: the whole
// stream appended to the blob at outputBlobUri (errorBlobUri), reached
// through the SAS the URI carries, since the fake's VMs have no managed
// identity. The instance view keeps only the last 4 KB of each stream.

// appendBlockMax is the largest block an append blob takes in one call
// (4 MiB, what every service version accepts).
const appendBlockMax = 4 << 20

// writeRunOutput appends data to the append blob at uri, creating it when
// missing: the agent asks for create and append rights, and a blob an
// earlier run left grows (imgflow deletes it first). It fails as the
// agent's upload would: without a SAS (no identity to fall back on), or
// when the blob service refuses the SAS.
func (f *Fake) writeRunOutput(uri, data string) error {
	shown := redact.URL(uri)
	if !strings.Contains(uri, "?") || !strings.Contains(strings.ToLower(uri), "sig=") {
		return fmt.Errorf("%s carries no SAS and the VM has no managed identity to write it with", shown)
	}
	if f.opts.Blob == nil {
		return fmt.Errorf("%s: the fake has no blob backend", shown)
	}
	ctx, cancel := context.WithTimeout(context.Background(), blobTimeout)
	defer cancel()
	ab, err := appendblob.NewClientWithNoCredential(uri, (*appendblob.ClientOptions)(f.opts.Blob.opts()))
	if err != nil {
		return fmt.Errorf("%s: %s", shown, redact.SAS(err.Error()))
	}
	missing := &appendblob.CreateOptions{AccessConditions: &blob.AccessConditions{
		ModifiedAccessConditions: &blob.ModifiedAccessConditions{IfNoneMatch: to(azcore.ETagAny)}}}
	if _, err := ab.Create(ctx, missing); err != nil && !bloberror.HasCode(err, bloberror.BlobAlreadyExists) {
		return fmt.Errorf("create %s: %s", shown, redactedStatus(err))
	}
	for b := []byte(data); len(b) > 0; {
		n := min(len(b), appendBlockMax)
		if _, err := ab.AppendBlock(ctx, streaming.NopCloser(bytes.NewReader(b[:n])), nil); err != nil {
			return fmt.Errorf("append to %s: %s", shown, redactedStatus(err))
		}
		b = b[n:]
	}
	return nil
}

// redactedStatus is a blob error's text without the SAS it may quote.
func redactedStatus(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "\n"); i > 0 {
		msg = msg[:i]
	}
	return redact.SAS(msg)
}
