package local

import (
	"io"
	"os"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/vhd"
)

// vhdBlob checks that uri names a page blob of this subscription holding
// a fixed VHD whose virtual size Azure accepts (azrules.CheckVHDBlob),
// and returns that size and the blob's ref. It runs under the state
// lock.
func (p *Provider) vhdBlob(st *State, uri, resource string) (int64, cloud.BlobRef, error) {
	ref, err := cloud.ParseBlobURL(uri)
	if err != nil {
		return 0, ref, azrules.InvalidParameter(resource, "%v", err)
	}
	_, sa := st.findStorageAccount(ref.Account)
	if sa == nil {
		if q, qst := p.accountPeer(st, ref.Account); q != nil {
			return q.vhdBlob(qst, uri, resource) // an account of another subscription of the tenant
		}
		return 0, ref, azrules.AccountNotFound(ref.Account, ref.URL())
	}
	var b *BlobState
	if c, ok := sa.Containers[ref.Container]; ok {
		b = c.Blobs[ref.Name]
	}
	if b == nil {
		return 0, ref, azrules.BlobNotFound(ref)
	}
	readFooter := func() ([]byte, error) {
		footer := make([]byte, vhd.FooterSize)
		return footer, readFileAt(p.blobFile(sa.Name, ref.Container, ref.Name), footer, b.Size-vhd.FooterSize)
	}
	size, err := azrules.CheckVHDBlob(resource, ref, b.Type, b.Size, readFooter)
	return size, ref, err
}

// readFileAt fills buf from the file at off; a file shorter than the blob
// (which cannot happen unless the directory was edited) reads as zeros.
func readFileAt(name string, buf []byte, off int64) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	n, err := f.ReadAt(buf, off)
	if err == io.EOF {
		clear(buf[n:])
		return nil
	}
	return err
}
