package azure

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/internal/redact"
)

// A run command's output blobs. The VM agent writes the script's streams
// to append blobs at outputBlobUri and errorBlobUri, reaching them either
// with a SAS in the URI or with a managed identity of the VM that holds a
// blob data role. test_vm's VM has no identity: giving one a role needs a
// role assignment, which Contributor (what imgflow asks for) cannot make.
// So imgflow signs a SAS for each blob (read, add, create, write, as the
// API asks) with the account key or, under --storage-auth aad, a user
// delegation key, valid for the script's timeout plus a margin. The URIs
// never leave the request body: errors and logs print them redacted.

// maxRunOutput bounds what imgflow reads back from an output blob: a
// trivy JSON report of a node image is a few MB.
const maxRunOutput = 64 << 20

// runOutputMargin is how long an output SAS lives past the script's
// timeout: the agent uploads after the script ends.
const runOutputMargin = 30 * time.Minute

// runOutputs are a run command's output blobs, with their SAS URIs.
type runOutputs struct {
	out, err       *cloud.BlobRef
	outURI, errURI string
}

// prepareRunOutputs removes what an earlier attempt left in the blobs (an
// append blob would grow) and signs their URIs.
func (p *Provider) prepareRunOutputs(ctx context.Context, cmd cloud.RunCommand) (*runOutputs, error) {
	ro := &runOutputs{out: cmd.OutputBlob, err: cmd.ErrorBlob}
	lifetime := cmd.Timeout + runOutputMargin
	for _, b := range []struct {
		ref *cloud.BlobRef
		uri *string
	}{{ro.out, &ro.outURI}, {ro.err, &ro.errURI}} {
		if b.ref == nil {
			continue
		}
		ref := p.resolve(*b.ref)
		if err := p.DeleteBlob(ctx, ref); err != nil && !cloud.IsNotFound(err) {
			return nil, err
		}
		uri, err := p.blobSAS(ctx, ref, sas.BlobPermissions{Read: true, Add: true, Create: true, Write: true}, lifetime)
		if err != nil {
			return nil, opError("sign output blob", shown(ref), err)
		}
		*b.uri = uri
	}
	return ro, nil
}

// collect reads the blobs into res, replacing the instance view's tails,
// and deletes them. A blob the agent did not write (an empty stream, or
// an upload that failed) leaves the instance view's tail as it is.
func (p *Provider) collect(ctx context.Context, ro *runOutputs, res *cloud.RunCommandResult) error {
	for _, b := range []struct {
		ref *cloud.BlobRef
		dst *string
	}{{ro.out, &res.Output}, {ro.err, &res.Error}} {
		if b.ref == nil {
			continue
		}
		ref := p.resolve(*b.ref)
		data, err := p.readWhole(ctx, ref)
		switch {
		case cloud.IsNotFound(err):
			continue
		case err != nil:
			return err
		}
		*b.dst = string(data)
		if err := p.DeleteBlob(ctx, ref); err != nil && !cloud.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// readWhole downloads a blob of any type, up to maxRunOutput bytes.
func (p *Provider) readWhole(ctx context.Context, ref cloud.BlobRef) ([]byte, error) {
	u := shown(ref)
	cc, err := p.containerClient(ctx, ref.Account, ref.Endpoint, ref.Container)
	if err != nil {
		return nil, opError("read output blob", u, err)
	}
	res, err := cc.NewBlobClient(ref.Name).DownloadStream(ctx, &blob.DownloadStreamOptions{})
	if err != nil {
		return nil, opError("read output blob", u, blobErr(err, u)) // 404 when the agent wrote none
	}
	body := res.NewRetryReader(ctx, nil)
	defer body.Close()
	data, err := io.ReadAll(io.LimitReader(body, maxRunOutput+1))
	if err != nil {
		return nil, opError("read output blob", u, redact.Error(err))
	}
	if len(data) > maxRunOutput {
		return nil, opError("read output blob", u, errors.New("the script wrote more than 64 MiB: print a smaller report"))
	}
	return data, nil
}
