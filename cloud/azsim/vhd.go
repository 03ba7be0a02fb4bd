package azsim

import (
	"context"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/vhd"
)

// vhdBlob checks that uri names a page blob of this subscription holding
// a fixed VHD whose virtual size Azure accepts (azrules.CheckVHDBlob),
// and returns that size and the blob's ref. It runs under the state
// lock.
func (p *Provider) vhdBlob(ctx context.Context, st *State, uri, resource string) (int64, cloud.BlobRef, error) {
	ref, err := cloud.ParseBlobURL(uri)
	if err != nil {
		return 0, ref, azrules.InvalidParameter(resource, "%v", err)
	}
	_, sa := st.findStorageAccount(ref.Account)
	if sa == nil {
		if q, qst := p.accountPeer(st, ref.Account); q != nil {
			return q.vhdBlob(ctx, qst, uri, resource) // an account of another subscription of the tenant
		}
		return 0, ref, azrules.AccountNotFound(ref.Account, ref.URL())
	}
	var b *BlobState
	if p.blobs != nil {
		if b, err = p.blobs.Blob(ctx, ref); err != nil {
			return 0, ref, err
		}
	} else if c, ok := sa.Containers[ref.Container]; ok {
		b = c.Blobs[ref.Name]
	}
	if b == nil {
		return 0, ref, azrules.BlobNotFound(ref)
	}
	var readFooter func() ([]byte, error) // nil: content not kept, taken as a fixed VHD
	if c, err := p.data.Open(ctx, BlobKey(sa.Name, ref.Container, b.Name)); err != nil {
		return 0, ref, err
	} else if c != nil {
		defer c.Close()
		readFooter = func() ([]byte, error) {
			footer := make([]byte, vhd.FooterSize)
			return footer, ReadFull(c, footer, b.Size-vhd.FooterSize)
		}
	}
	size, err := azrules.CheckVHDBlob(resource, ref, b.Type, b.Size, readFooter)
	return size, ref, err
}
