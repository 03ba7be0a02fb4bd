package local

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path"

	"github.com/imgflow/imgflow/cloud"
)

// VHD footer layout (Microsoft "Virtual Hard Disk Image Format
// Specification"): the last 512 bytes of a fixed VHD.
const (
	vhdFooterSize   = 512
	vhdCookie       = "conectix"
	vhdSizeOffset   = 48 // current (virtual) size, big-endian uint64
	vhdTypeOffset   = 60 // disk type, big-endian uint32
	vhdTypeFixed    = 2
	vhdTypeDynamic  = 3
	vhdTypeDiffDisk = 4
	mib             = 1 << 20
)

// vhdBlob checks that uri names a page blob of this subscription holding
// a fixed VHD whose virtual size Azure accepts, and returns that size and
// the blob's storage account. It runs under the state lock.
func (p *Provider) vhdBlob(st *State, uri, resource string) (int64, *StorageAccountState, error) {
	ref, err := cloud.ParseBlobURL(uri)
	if err != nil {
		return 0, nil, invalidParameter(resource, "%v", err)
	}
	_, sa := st.findStorageAccount(ref.Account)
	if sa == nil {
		return 0, nil, accountNotFound(ref.Account, ref.URL())
	}
	var b *BlobState
	if c, ok := sa.Containers[ref.Container]; ok {
		b = c.Blobs[ref.Name]
	}
	if b == nil {
		return 0, nil, blobNotFound(ref)
	}
	disk := path.Base(ref.Name)
	if b.Type != cloud.BlobTypePage {
		return 0, nil, invalidParameter(resource,
			"Disk '%s' with blob %s is a %s; a VHD source must be a page blob.", disk, ref.URL(), b.Type)
	}
	notVHD := invalidParameter(resource,
		"The specified cookie value in VHD footer indicates that disk '%s' with blob %s is not a supported VHD. Disk is expected to have cookie value '%s'.",
		disk, ref.URL(), vhdCookie)
	if b.Size < vhdFooterSize {
		return 0, nil, notVHD
	}
	footer := make([]byte, vhdFooterSize)
	if err := readFileAt(p.blobFile(sa.Name, ref.Container, ref.Name), footer, b.Size-vhdFooterSize); err != nil {
		return 0, nil, fmt.Errorf("read VHD footer of %s: %w", ref.URL(), err)
	}
	if !bytes.Equal(footer[:len(vhdCookie)], []byte(vhdCookie)) {
		return 0, nil, notVHD
	}
	switch t := binary.BigEndian.Uint32(footer[vhdTypeOffset:]); t {
	case vhdTypeFixed:
	case vhdTypeDynamic:
		return 0, nil, invalidParameter(resource,
			"Disk '%s' with blob %s is of Dynamic VHD type. Please retry with fixed VHD type.", disk, ref.URL())
	case vhdTypeDiffDisk:
		return 0, nil, invalidParameter(resource,
			"Disk '%s' with blob %s is of Differencing VHD type. Please retry with fixed VHD type.", disk, ref.URL())
	default:
		return 0, nil, invalidParameter(resource,
			"Disk '%s' with blob %s has unknown VHD disk type %d. Please retry with fixed VHD type.", disk, ref.URL(), t)
	}
	size := binary.BigEndian.Uint64(footer[vhdSizeOffset:])
	if size == 0 || size%mib != 0 || size > 1<<62 {
		return 0, nil, invalidParameter(resource,
			"The VHD %s has an unsupported virtual size of %d bytes. The size must be a whole number (in MBs).", ref.URL(), size)
	}
	return int64(size), sa, nil
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
