package ensure

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/transfer"
	"github.com/imgflow/imgflow/vhd"
)

func TestSameContentFallsBackToMD5(t *testing.T) {
	content := make([]byte, 8<<20)
	copy(content[1<<20:], "data")
	path := filepath.Join(t.TempDir(), "disk.vhd")
	require.NoError(t, os.WriteFile(path, content, 0o644))
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	size := int64(len(content))
	src := cloud.PageSource{Reader: f, Size: size, Ranges: []vhd.Range{{Offset: 0, Length: size}}}
	sum := md5.Sum(content)
	md5hex := hex.EncodeToString(sum[:])
	digest, err := transfer.SparseDigest(context.Background(), f, size, src.Ranges)
	require.NoError(t, err)

	for name, tc := range map[string]struct {
		b    cloud.Blob
		same bool
	}{
		"digest":             {cloud.Blob{Size: size, Digest: digest}, true},
		"other digest":       {cloud.Blob{Size: size, Digest: transfer.DigestPrefix + "00", MD5: md5hex}, false},
		"legacy MD5":         {cloud.Blob{Size: size, MD5: md5hex}, true},
		"legacy MD5, other":  {cloud.Blob{Size: size, MD5: "00"}, false},
		"nothing to compare": {cloud.Blob{Size: size}, false},
		"other size":         {cloud.Blob{Size: size + 512, Digest: digest}, false},
	} {
		got, err := sameContent(context.Background(), &tc.b, src)
		require.NoError(t, err)
		assert.Equal(t, tc.same, got, name)
	}

	a := &cloud.Blob{Size: 1, Digest: "d1", MD5: "m"}
	assert.True(t, sameBlob(a, &cloud.Blob{Size: 1, Digest: "D1"}))
	assert.False(t, sameBlob(a, &cloud.Blob{Size: 1, Digest: "d2", MD5: "m"}), "digests decide when both have one")
	assert.True(t, sameBlob(a, &cloud.Blob{Size: 1, MD5: "M"}), "MD5 when one has no digest")
	assert.False(t, sameBlob(&cloud.Blob{Size: 1}, &cloud.Blob{Size: 1}))
	assert.False(t, sameBlob(a, &cloud.Blob{Size: 2, Digest: "d1"}))
}
