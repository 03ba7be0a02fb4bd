package azrules_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/vhd"
)

// footer is a VHD footer of the given virtual size and disk type.
func footer(t *testing.T, size int64, typ vhd.DiskType) []byte {
	t.Helper()
	f := vhd.NewFooter(size, [16]byte{1}, time.Unix(1e9, 0))
	f.CurrentSize, f.DiskType = uint64(size), typ
	b, err := f.MarshalBinary()
	require.NoError(t, err)
	return b
}

func TestCheckVHDBlob(t *testing.T) {
	ref := cloud.BlobRef{Account: "acct", Container: "vhds", Name: "os/disk.vhd"}
	const blobSize = 4 << 20
	notVHD := "The specified cookie value in VHD footer indicates that disk 'disk.vhd' with blob " + ref.URL() + " is not a supported VHD. Disk is expected to have cookie value 'conectix'."
	for name, tc := range map[string]struct {
		blobType string
		size     int64
		footer   []byte
		want     int64
		fragment string
	}{
		"fixed":        {cloud.BlobTypePage, blobSize, footer(t, 2<<20, vhd.DiskTypeFixed), 2 << 20, ""},
		"block blob":   {"BlockBlob", blobSize, footer(t, 2<<20, vhd.DiskTypeFixed), 0, "Disk 'disk.vhd' with blob " + ref.URL() + " is a BlockBlob; a VHD source must be a page blob."},
		"dynamic":      {cloud.BlobTypePage, blobSize, footer(t, 2<<20, vhd.DiskTypeDynamic), 0, "is of Dynamic VHD type. Please retry with fixed VHD type."},
		"differencing": {cloud.BlobTypePage, blobSize, footer(t, 2<<20, vhd.DiskTypeDifferencing), 0, "is of Differencing VHD type. Please retry with fixed VHD type."},
		"unknown type": {cloud.BlobTypePage, blobSize, footer(t, 2<<20, vhd.DiskType(7)), 0, "has unknown VHD disk type 7. Please retry with fixed VHD type."},
		"not a vhd":    {cloud.BlobTypePage, blobSize, make([]byte, vhd.FooterSize), 0, notVHD},
		"short footer": {cloud.BlobTypePage, blobSize, []byte("conectix"), 0, notVHD},
		"tiny blob":    {cloud.BlobTypePage, 100, nil, 0, notVHD},
		"unaligned":    {cloud.BlobTypePage, blobSize, footer(t, 2<<20+512, vhd.DiskTypeFixed), 0, "The VHD " + ref.URL() + " has an unsupported virtual size of 2097664 bytes. The size must be a whole number (in MBs)."},
		"zero size":    {cloud.BlobTypePage, blobSize, footer(t, 0, vhd.DiskTypeFixed), 0, "unsupported virtual size of 0 bytes"},
	} {
		t.Run(name, func(t *testing.T) {
			read := func() ([]byte, error) { return tc.footer, nil }
			size, err := azrules.CheckVHDBlob("/v", ref, tc.blobType, tc.size, read)
			if tc.fragment != "" {
				requireRefusal(t, err, cloud.CodeInvalidParameter, "/v", tc.fragment)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, size)
		})
	}

	bad := footer(t, 2<<20, vhd.DiskTypeFixed)
	bad[70] ^= 0xff // the checksum no longer matches: Azure's documented checks do not look
	size, err := azrules.CheckVHDBlob("/v", ref, cloud.BlobTypePage, blobSize, func() ([]byte, error) { return bad, nil })
	require.NoError(t, err)
	assert.Equal(t, int64(2<<20), size)

	size, err = azrules.CheckVHDBlob("/v", ref, cloud.BlobTypePage, blobSize, nil)
	require.NoError(t, err, "unknown content is taken as a fixed VHD")
	assert.Equal(t, int64(blobSize-vhd.FooterSize), size)

	readFails := errors.New("network down")
	_, err = azrules.CheckVHDBlob("/v", ref, cloud.BlobTypePage, blobSize, func() ([]byte, error) { return nil, readFails })
	require.ErrorIs(t, err, readFails)
	assert.Contains(t, err.Error(), "read VHD footer of "+ref.URL())
}
