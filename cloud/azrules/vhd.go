package azrules

import (
	"errors"
	"fmt"
	"path"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/vhd"
)

// MaxVHDSize bounds the virtual size the simulated targets accept.
const MaxVHDSize = 1 << 62

// CheckVHDBlob checks, as Azure does when a blob becomes a disk (an image
// version's VHD source), that the blob at ref (of blobType and size)
// holds a fixed VHD whose virtual size is a whole number of MiB, and
// returns that size. readFooter reads the blob's last vhd.FooterSize
// bytes; nil means the content is unknown (a dry run wrote it), which is
// taken as a fixed VHD of the blob's size. resource is the request's ARM
// id.
func CheckVHDBlob(resource string, ref cloud.BlobRef, blobType string, size int64, readFooter func() ([]byte, error)) (int64, error) {
	disk := path.Base(ref.Name)
	if blobType != cloud.BlobTypePage {
		return 0, InvalidParameter(resource, "Disk '%s' with blob %s is a %s; a VHD source must be a page blob.", disk, ref.URL(), blobType)
	}
	if readFooter == nil {
		return max(size-vhd.FooterSize, 0), nil
	}
	notVHD := InvalidParameter(resource,
		"The specified cookie value in VHD footer indicates that disk '%s' with blob %s is not a supported VHD. Disk is expected to have cookie value '%s'.",
		disk, ref.URL(), vhd.Cookie)
	if size < vhd.FooterSize {
		return 0, notVHD
	}
	b, err := readFooter()
	if err != nil {
		return 0, fmt.Errorf("read VHD footer of %s: %w", ref.URL(), err)
	}
	f, err := vhd.DecodeFooter(b)
	if errors.Is(err, vhd.ErrNotVHD) {
		return 0, notVHD
	} else if err != nil {
		return 0, fmt.Errorf("read VHD footer of %s: %w", ref.URL(), err)
	}
	switch f.DiskType {
	case vhd.DiskTypeFixed:
	case vhd.DiskTypeDynamic, vhd.DiskTypeDifferencing:
		return 0, InvalidParameter(resource, "Disk '%s' with blob %s is of %s VHD type. Please retry with fixed VHD type.", disk, ref.URL(), f.DiskType)
	default:
		return 0, InvalidParameter(resource, "Disk '%s' with blob %s has unknown VHD disk type %d. Please retry with fixed VHD type.", disk, ref.URL(), uint32(f.DiskType))
	}
	if vs := f.CurrentSize; vs == 0 || vs%vhd.MiB != 0 || vs > MaxVHDSize {
		return 0, InvalidParameter(resource, "The VHD %s has an unsupported virtual size of %d bytes. The size must be a whole number (in MBs).", ref.URL(), vs)
	}
	return int64(f.CurrentSize), nil
}
