// Package cloudtest is the test kit of the cloud packages, as
// go.starlark.net ships starlarktest beside the interpreter: the one
// assertion on a cloud error and the fixtures several targets' tests share.
// Only tests import it.
package cloudtest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/vhd"
)

// RequireError asserts that err is (or wraps) a *cloud.Error with the
// HTTP status and the ARM error code, whose message contains every
// fragment, and returns it for further checks. It stops the test when err
// is no cloud error at all.
func RequireError(t testing.TB, err error, status int, code string, fragments ...string) *cloud.Error {
	t.Helper()
	var ce *cloud.Error
	require.True(t, errors.As(err, &ce), "want %d %s, got %v", status, code, err)
	assert.Equal(t, status, ce.StatusCode, "status of %v", err)
	assert.Equal(t, code, ce.Code, "code of %v", err)
	for _, f := range fragments {
		assert.Contains(t, ce.Message, f, "message of %v", err)
	}
	return ce
}

// Definition is a valid Gen2 Linux x64 image definition in rg's gallery.
func Definition(rg, gallery, name, sku string) cloud.ImageDefinition {
	return cloud.ImageDefinition{
		Name: name, ResourceGroup: rg, Gallery: gallery, Publisher: "kinvolk", Offer: "stable", SKU: sku,
		OSType: cloud.OSTypeLinux, OSState: cloud.OSStateGeneralized, HyperVGeneration: cloud.HyperVGenV2, Architecture: cloud.ArchX64,
	}
}

// Community is a valid community sharing profile with the public name
// prefix.
func Community(prefix string) cloud.CommunityInfo {
	return cloud.CommunityInfo{PublicNamePrefix: prefix, PublisherURI: "https://example.com", PublisherContact: "ops@example.com", EULA: "https://example.com/eula"}
}

// PageSource is data as a page blob's content, all of it data.
func PageSource(data []byte) cloud.PageSource {
	return cloud.PageSource{Reader: bytes.NewReader(data), Size: int64(len(data)), Ranges: []vhd.Range{{Offset: 0, Length: int64(len(data))}}}
}

// VHDFooter is a VHD footer built by hand (cookie, original and current
// size, disk type), enough for the checks a target makes; diskType is
// vhd.DiskTypeFixed, DiskTypeDynamic or DiskTypeDifferencing.
func VHDFooter(size uint64, diskType uint32) []byte {
	b := make([]byte, vhd.FooterSize)
	copy(b, "conectix")
	binary.BigEndian.PutUint64(b[40:], size) // original size
	binary.BigEndian.PutUint64(b[48:], size) // current size
	binary.BigEndian.PutUint32(b[60:], diskType)
	return b
}

// VHD is a VHD of the given virtual size: "boot sector", zeros, a footer
// of diskType.
func VHD(size int, diskType uint32) []byte {
	data := make([]byte, size+vhd.FooterSize)
	copy(data, "boot sector")
	copy(data[size:], VHDFooter(uint64(size), diskType))
	return data
}

// FixedVHD is a fixed VHD of the given virtual size.
func FixedVHD(size int) []byte { return VHD(size, uint32(vhd.DiskTypeFixed)) }
