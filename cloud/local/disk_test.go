package local

import (
	"bytes"
	"fmt"
	"math/rand"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/cloudtest"
	"github.com/imgflow/imgflow/internal/testutil"
)

func newClockFixture(t *testing.T) (*fixture, *testutil.Clock) {
	t.Helper()
	clock := testutil.NewClock(fixedTime)
	p, err := NewMemory(Options{Rand: rand.New(rand.NewSource(1)), Now: clock.Now})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, p.Close()) })
	return setupFixture(t, p), clock
}

// exportSize is the virtual size of the exported VHD: large enough that
// its holes show (data is copied in 4 MiB chunks).
const exportSize = 64 << 20

// exportImage is a fixed VHD with data in three places, tagged so two
// images differ.
func exportImage(size int, tag string) []byte {
	data := cloudtest.FixedVHD(size)
	copy(data[512:], "tag "+tag)
	for i := range 64 << 10 {
		data[size/2+i] = byte(i*13 + len(tag))
	}
	copy(data[size-4096:], "end of disk "+tag)
	return data
}

// sasRef is the BlobRef that reads a disk SAS URL: the SAS rides after
// the name, as cloud.BlobRef has no field for it.
func sasRef(t *testing.T, sas string) cloud.BlobRef {
	t.Helper()
	ref, err := cloud.ParseBlobURL(sas)
	require.NoError(t, err)
	_, query, ok := strings.Cut(sas, "?")
	require.True(t, ok)
	ref.Name += "?" + query
	require.Equal(t, sas, ref.URL())
	return ref
}

func sasSig(t *testing.T, sas string) string {
	t.Helper()
	u, err := url.Parse(sas)
	require.NoError(t, err)
	sig := u.Query().Get("sig")
	require.NotEmpty(t, sig)
	return sig
}

func withSig(t *testing.T, sas, sig string) string {
	t.Helper()
	old := sasSig(t, sas)
	return strings.Replace(sas, "sig="+old, "sig="+sig, 1)
}

func versionID(f *fixture, name string) string {
	return cloud.ImageVersionID(f.sub, rgName, galName, defName, name)
}

// diskFrom is a disk request for a version of the fixture definition.
func diskFrom(f *fixture, name, version string) cloud.Disk {
	return cloud.Disk{Name: name, ResourceGroup: rgName, SourceImageVersionID: versionID(f, version)}
}

// exportDisk grants the disk, copies it into a page blob, revokes and
// returns the copy's content and blob.
func exportDisk(t *testing.T, f *fixture, disk, blob string) ([]byte, *cloud.Blob) {
	t.Helper()
	sas, err := f.p.GrantDiskAccess(ctx, rgName, disk, time.Hour)
	require.NoError(t, err)
	dst := cloud.BlobRef{Account: account, Container: "vhds", Name: blob}
	b, err := f.p.CopyBlob(ctx, sas, dst, true)
	require.NoError(t, err)
	require.NoError(t, f.p.RevokeDiskAccess(ctx, rgName, disk))
	data, err := os.ReadFile(f.p.BlobPath(dst))
	require.NoError(t, err)
	return data, b
}

func TestDiskExportPath(t *testing.T) {
	f := newFixture(t)
	p := f.p
	content := exportImage(exportSize, "A")
	f.upload(t, f.vhd, content)
	v := f.version("1.0.0")
	v.TargetRegions = []cloud.TargetRegion{{Name: "westeurope"}, {Name: "eastus"}}
	ver, err := p.CreateImageVersion(ctx, v)
	require.NoError(t, err)
	assert.FileExists(t, p.dataFile(ver.ID), "the version has its own data")

	// A disk in the version's region (the default).
	disk, err := p.CreateDiskFromImageVersion(ctx, diskFrom(f, "export", "1.0.0"))
	require.NoError(t, err)
	diskID := cloud.DiskID(f.sub, rgName, "export")
	assert.Equal(t, cloud.Disk{
		ID: diskID, Name: "export", ResourceGroup: rgName, Location: "westeurope",
		SourceImageVersionID: ver.ID, HyperVGeneration: cloud.HyperVGenV2,
		SizeBytes: int64(len(content)),
	}, *disk)
	got, err := p.GetDisk(ctx, rgName, "EXPORT")
	require.NoError(t, err)
	assert.Equal(t, disk, got)
	if used, ok := diskUsage(t, p.dataFile(diskID)); ok {
		assert.Less(t, used, int64(exportSize/4), "the disk's data stays sparse")
	}

	// Grant: an Azure-shaped SAS URL.
	sas, err := p.GrantDiskAccess(ctx, rgName, "export", time.Hour)
	require.NoError(t, err)
	assert.Regexp(t, regexp.MustCompile(`^https://md-[a-z0-9]{12}\.blob\.core\.windows\.net/[a-z0-9]{12}/abcd\?sv=2018-03-28&sr=b&si=[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}&sig=[A-Za-z0-9_-]{40,}$`), sas)
	assert.True(t, strings.HasPrefix(sas, "https://"+diskAccount(diskID)+"."))
	got, err = p.GetDisk(ctx, rgName, "export")
	require.NoError(t, err)
	assert.True(t, got.AccessGranted)

	// The SAS URL reads like a page blob.
	ref := sasRef(t, sas)
	b, err := p.GetBlob(ctx, ref)
	require.NoError(t, err)
	assert.Equal(t, cloud.BlobTypePage, b.Type)
	assert.Equal(t, int64(len(content)), b.Size)
	assert.NotContains(t, b.URL, "sig=", "the returned blob does not echo the SAS")
	footer, err := p.ReadBlob(ctx, ref, exportSize, 512)
	require.NoError(t, err)
	assert.Equal(t, content[exportSize:], footer)
	head, err := p.ReadBlob(ctx, ref, 512, 5)
	require.NoError(t, err)
	assert.Equal(t, "tag A", string(head))

	// Copy into a page blob: the original VHD, holes kept.
	_, err = p.CreateStorageAccount(ctx, cloud.StorageAccount{Name: "exports", ResourceGroup: rgName})
	require.NoError(t, err)
	require.NoError(t, p.EnsureContainer(ctx, "exports", "vhds"))
	dst := cloud.BlobRef{Account: "exports", Container: "vhds", Name: "flatcar-1.0.0.vhd"}
	cb, err := p.CopyBlob(ctx, sas, dst, false)
	require.NoError(t, err)
	assert.Equal(t, cloud.BlobTypePage, cb.Type)
	assert.Equal(t, int64(len(content)), cb.Size)
	assert.Equal(t, digestOf(content), cb.Digest)
	copied, err := os.ReadFile(p.BlobPath(dst))
	require.NoError(t, err)
	assert.True(t, bytes.Equal(content, copied), "exported bytes equal the original VHD")
	assert.Equal(t, md5hex(content), md5hex(copied))
	if used, ok := diskUsage(t, p.BlobPath(dst)); ok {
		assert.Less(t, used, int64(exportSize/4), "the copy keeps the holes")
	}
	// The copy is a VHD imgflow can publish again.
	v2 := f.version("2.0.0")
	v2.Source = cloud.ImageSource{Kind: cloud.SourceVHD, URI: dst.URL()}
	ver2, err := p.CreateImageVersion(ctx, v2)
	require.NoError(t, err)
	assert.Equal(t, ver.SizeBytes, ver2.SizeBytes)

	// Writes through the SAS are refused, without echoing it.
	_, err = p.UploadPageBlob(ctx, ref, cloud.PageSource{Reader: bytes.NewReader(make([]byte, 512)), Size: 512}, true)
	ce := cloudtest.RequireError(t, err, http.StatusForbidden, cloud.CodeAuthorizationPermissionMismatch)
	assert.NotContains(t, ce.Error(), sasSig(t, sas))
	_, err = p.CopyBlob(ctx, f.vhd.URL(), ref, true)
	cloudtest.RequireError(t, err, http.StatusForbidden, cloud.CodeAuthorizationPermissionMismatch)
	cloudtest.RequireError(t, p.DeleteBlob(ctx, ref), http.StatusForbidden, cloud.CodeAuthorizationPermissionMismatch)

	// Revoke (twice is fine), then delete.
	require.NoError(t, p.RevokeDiskAccess(ctx, rgName, "export"))
	require.NoError(t, p.RevokeDiskAccess(ctx, rgName, "export"))
	got, err = p.GetDisk(ctx, rgName, "export")
	require.NoError(t, err)
	assert.False(t, got.AccessGranted)
	_, err = p.CopyBlob(ctx, sas, dst, true)
	cloudtest.RequireError(t, err, http.StatusForbidden, cloud.CodeAuthenticationFailed, "Server failed to authenticate the request")
	require.NoError(t, p.DeleteDisk(ctx, rgName, "export"))
	assert.NoFileExists(t, p.dataFile(diskID))
	_, err = p.GetDisk(ctx, rgName, "export")
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeResourceNotFound)
	cloudtest.RequireError(t, p.DeleteDisk(ctx, rgName, "export"), http.StatusNotFound, cloud.CodeResourceNotFound)

	// The exported copy outlives the disk; deleting the version removes
	// its data.
	again, err := p.ReadBlob(ctx, dst, 512, 5)
	require.NoError(t, err)
	assert.Equal(t, "tag A", string(again))
	require.NoError(t, p.DeleteImageVersion(ctx, rgName, galName, defName, "1.0.0"))
	assert.NoFileExists(t, p.dataFile(ver.ID))

	// A disk in another replicated region.
	d := diskFrom(f, "east", "2.0.0")
	_, err = p.UpdateImageVersion(ctx, cloud.ImageVersion{Name: "2.0.0", ResourceGroup: rgName, Gallery: galName, Definition: defName,
		TargetRegions: []cloud.TargetRegion{{Name: "westeurope"}, {Name: "East US"}}})
	require.NoError(t, err)
	d.Location = "East US"
	east, err := p.CreateDiskFromImageVersion(ctx, d)
	require.NoError(t, err)
	assert.Equal(t, "eastus", east.Location)
	data, _ := exportDisk(t, f, "east", "east.vhd")
	assert.True(t, bytes.Equal(content, data))
}

func TestDiskRegionMustBeReplicated(t *testing.T) {
	f := newFixture(t)
	_, err := f.p.CreateImageVersion(ctx, f.version("1.0.0"))
	require.NoError(t, err)
	d := diskFrom(f, "disk", "1.0.0")
	d.Location = "eastus"
	_, err = f.p.CreateDiskFromImageVersion(ctx, d)
	ce := cloudtest.RequireError(t, err, http.StatusBadRequest, cloud.CodeInvalidParameter,
		"image version "+versionID(f, "1.0.0")+" is not available in eastus: replicate it there first")
	assert.Equal(t, cloud.DiskID(f.sub, rgName, "disk"), ce.Resource)
	_, err = f.p.GetDisk(ctx, rgName, "disk")
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeResourceNotFound)

	d.Location = "marsnorth"
	_, err = f.p.CreateDiskFromImageVersion(ctx, d)
	cloudtest.RequireError(t, err, http.StatusBadRequest, cloud.CodeLocationNotAvailableForResourceType)

	_, err = f.p.UpdateImageVersion(ctx, cloud.ImageVersion{Name: "1.0.0", ResourceGroup: rgName, Gallery: galName, Definition: defName,
		TargetRegions: []cloud.TargetRegion{{Name: "westeurope"}, {Name: "eastus"}}})
	require.NoError(t, err)
	d.Location = "eastus"
	got, err := f.p.CreateDiskFromImageVersion(ctx, d)
	require.NoError(t, err)
	assert.Equal(t, "eastus", got.Location)
}

func TestDiskCreateRules(t *testing.T) {
	f := newFixture(t)
	p := f.p
	_, err := p.CreateImageVersion(ctx, f.version("1.0.0"))
	require.NoError(t, err)
	_, err = p.CreateImageVersion(ctx, f.version("1.0.1"))
	require.NoError(t, err)

	d := diskFrom(f, "disk", "1.0.0")
	d.ResourceGroup = "nope"
	_, err = p.CreateDiskFromImageVersion(ctx, d)
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeResourceGroupNotFound)

	d = diskFrom(f, "disk", "1.0.0")
	d.SourceImageVersionID = "not-an-id"
	_, err = p.CreateDiskFromImageVersion(ctx, d)
	cloudtest.RequireError(t, err, http.StatusBadRequest, cloud.CodeInvalidParameter, "not-an-id")
	d.SourceImageVersionID = cloud.ManagedImageID(f.sub, rgName, "img")
	_, err = p.CreateDiskFromImageVersion(ctx, d)
	cloudtest.RequireError(t, err, http.StatusBadRequest, cloud.CodeInvalidParameter, "is not a gallery image version id")

	missing := versionID(f, "9.9.9")
	d.SourceImageVersionID = missing
	_, err = p.CreateDiskFromImageVersion(ctx, d)
	ce := cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeResourceNotFound, "9.9.9")
	assert.Equal(t, missing, ce.Resource)

	d = diskFrom(f, "disk", "1.0.0")
	d.SecurityType = "Paranoid"
	_, err = p.CreateDiskFromImageVersion(ctx, d)
	cloudtest.RequireError(t, err, http.StatusBadRequest, cloud.CodeInvalidParameter, "'Paranoid'")

	d.SecurityType = "trustedlaunch"
	d.Tags = cloud.Tags{"a": "b"}
	disk, err := p.CreateDiskFromImageVersion(ctx, d)
	require.NoError(t, err)
	assert.Equal(t, "TrustedLaunch", disk.SecurityType)
	assert.Equal(t, cloud.Tags{"a": "b"}, disk.Tags)
	d.Tags["a"] = "changed"
	disk.Tags["a"] = "changed"
	got, err := p.GetDisk(ctx, rgName, "disk")
	require.NoError(t, err)
	assert.Equal(t, cloud.Tags{"a": "b"}, got.Tags, "tags are copied both ways")

	// PUT again: idempotent with the same source; another is refused.
	d.Tags = nil
	d.SourceImageVersionID = strings.ToUpper(versionID(f, "1.0.0"))
	again, err := p.CreateDiskFromImageVersion(ctx, d)
	require.NoError(t, err)
	assert.Equal(t, disk.ID, again.ID)
	assert.Equal(t, versionID(f, "1.0.0"), again.SourceImageVersionID)
	other := diskFrom(f, "disk", "1.0.1")
	other.SecurityType = "TrustedLaunch"
	_, err = p.CreateDiskFromImageVersion(ctx, other)
	cloudtest.RequireError(t, err, http.StatusConflict, cloud.CodePropertyChangeNotAllowed)
	other = diskFrom(f, "disk", "1.0.0")
	_, err = p.CreateDiskFromImageVersion(ctx, other)
	cloudtest.RequireError(t, err, http.StatusConflict, cloud.CodePropertyChangeNotAllowed, "securityType")
	other.SecurityType = "TrustedLaunch"
	other.Location = "eastus"
	_, err = p.CreateDiskFromImageVersion(ctx, other)
	cloudtest.RequireError(t, err, http.StatusConflict, cloud.CodeInvalidResourceLocation)

	// A security type needs a Gen2 image.
	gen1 := f.def
	gen1.Name, gen1.SKU, gen1.HyperVGeneration = "gen1", "gen1", cloud.HyperVGenV1
	_, err = p.CreateImageDefinition(ctx, gen1)
	require.NoError(t, err)
	v := f.version("1.0.0")
	v.Definition = "gen1"
	_, err = p.CreateImageVersion(ctx, v)
	require.NoError(t, err)
	g1 := cloud.Disk{Name: "gen1", ResourceGroup: rgName, SecurityType: "ConfidentialVM",
		SourceImageVersionID: cloud.ImageVersionID(f.sub, rgName, galName, "gen1", "1.0.0")}
	_, err = p.CreateDiskFromImageVersion(ctx, g1)
	cloudtest.RequireError(t, err, http.StatusBadRequest, cloud.CodeInvalidParameter, "Hyper-V generation V2")
	g1.SecurityType = ""
	disk, err = p.CreateDiskFromImageVersion(ctx, g1)
	require.NoError(t, err)
	assert.Equal(t, cloud.HyperVGenV1, disk.HyperVGeneration)

	// Missing disks.
	_, err = p.GetDisk(ctx, rgName, "nope")
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeResourceNotFound, "Microsoft.Compute/disks/nope")
	_, err = p.GrantDiskAccess(ctx, rgName, "nope", time.Hour)
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeResourceNotFound)
	cloudtest.RequireError(t, p.RevokeDiskAccess(ctx, rgName, "nope"), http.StatusNotFound, cloud.CodeResourceNotFound)
	cloudtest.RequireError(t, p.DeleteDisk(ctx, rgName, "nope"), http.StatusNotFound, cloud.CodeResourceNotFound)
	cloudtest.RequireError(t, p.DeleteDisk(ctx, "nope", "nope"), http.StatusNotFound, cloud.CodeResourceGroupNotFound)
}

func TestDiskGrantRules(t *testing.T) {
	f, clock := newClockFixture(t)
	p := f.p
	_, err := p.CreateImageVersion(ctx, f.version("1.0.0"))
	require.NoError(t, err)
	_, err = p.CreateDiskFromImageVersion(ctx, diskFrom(f, "disk", "1.0.0"))
	require.NoError(t, err)
	dst := cloud.BlobRef{Account: account, Container: "vhds", Name: "out.vhd"}

	for _, d := range []time.Duration{0, 999 * time.Millisecond, 24*time.Hour + time.Second, -time.Hour} {
		_, err := p.GrantDiskAccess(ctx, rgName, "disk", d)
		cloudtest.RequireError(t, err, http.StatusBadRequest, cloud.CodeInvalidParameter, "between 1s and 24h0m0s")
	}
	sas, err := p.GrantDiskAccess(ctx, rgName, "disk", time.Hour)
	require.NoError(t, err)
	sig := sasSig(t, sas)

	// Granted twice, or deleted while granted: refused.
	_, err = p.GrantDiskAccess(ctx, rgName, "disk", time.Hour)
	cloudtest.RequireError(t, err, http.StatusConflict, cloud.CodeOperationNotAllowed, "Revoke access first")
	cloudtest.RequireError(t, p.DeleteDisk(ctx, rgName, "disk"), http.StatusConflict, cloud.CodeOperationNotAllowed, "revoke access first")

	// Bad, missing or misplaced signatures.
	refused := func(t *testing.T, sasURL string) {
		t.Helper()
		_, err := p.CopyBlob(ctx, sasURL, dst, true)
		ce := cloudtest.RequireError(t, err, http.StatusForbidden, cloud.CodeAuthenticationFailed, "Server failed to authenticate the request")
		assert.NotContains(t, ce.Error(), sig, "errors never carry the SAS")
		_, err = p.ReadBlob(ctx, sasRef(t, sasURL), 0, 512)
		ce = cloudtest.RequireError(t, err, http.StatusForbidden, cloud.CodeAuthenticationFailed)
		assert.NotContains(t, ce.Error(), sig)
		_, err = p.GetBlob(ctx, sasRef(t, sasURL))
		cloudtest.RequireError(t, err, http.StatusForbidden, cloud.CodeAuthenticationFailed)
	}
	t.Run("bad sig", func(t *testing.T) {
		refused(t, withSig(t, sas, "AAAA"+sig[4:]))
	})
	t.Run("no sig", func(t *testing.T) {
		refused(t, strings.Replace(sas, "&sig="+sig, "", 1))
	})
	t.Run("other si", func(t *testing.T) {
		refused(t, regexp.MustCompile(`si=[^&]+`).ReplaceAllString(sas, "si=00000000-0000-4000-8000-000000000000"))
	})
	t.Run("other path", func(t *testing.T) {
		refused(t, strings.Replace(sas, "/abcd?", "/other?", 1))
	})
	t.Run("no SAS at all", func(t *testing.T) {
		ref, err := cloud.ParseBlobURL(sas) // drops the query
		require.NoError(t, err)
		_, err = p.ReadBlob(ctx, ref, 0, 512)
		cloudtest.RequireError(t, err, http.StatusForbidden, cloud.CodeAuthenticationFailed)
	})
	_, err = p.CopyBlob(ctx, sas, dst, true)
	require.NoError(t, err, "the right SAS still works")

	// Revoked: the old URL is refused; a new grant gives a new URL.
	require.NoError(t, p.RevokeDiskAccess(ctx, rgName, "disk"))
	refused(t, sas)
	sas2, err := p.GrantDiskAccess(ctx, rgName, "disk", time.Hour)
	require.NoError(t, err)
	assert.NotEqual(t, sas, sas2)
	refused(t, sas)
	_, err = p.ReadBlob(ctx, sasRef(t, sas2), 0, 11)
	require.NoError(t, err)

	// Expired: refused like revoked, and the disk is free again.
	clock.Advance(time.Hour)
	_, err = p.ReadBlob(ctx, sasRef(t, sas2), 0, 11)
	require.NoError(t, err, "valid up to its duration")
	clock.Advance(time.Second)
	_, err = p.CopyBlob(ctx, sas2, dst, true)
	cloudtest.RequireError(t, err, http.StatusForbidden, cloud.CodeAuthenticationFailed, "expired")
	_, err = p.ReadBlob(ctx, sasRef(t, sas2), 0, 11)
	cloudtest.RequireError(t, err, http.StatusForbidden, cloud.CodeAuthenticationFailed, "expired")
	got, err := p.GetDisk(ctx, rgName, "disk")
	require.NoError(t, err)
	assert.False(t, got.AccessGranted)
	sas3, err := p.GrantDiskAccess(ctx, rgName, "disk", 2*time.Second)
	require.NoError(t, err)
	data, err := p.ReadBlob(ctx, sasRef(t, sas3), 0, 11)
	require.NoError(t, err)
	assert.Equal(t, "boot sector", string(data))
	clock.Advance(3 * time.Second)
	require.NoError(t, p.DeleteDisk(ctx, rgName, "disk"), "an expired grant does not block deletion")
	refused(t, sas3)
}

func TestDiskSASNotInState(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	p, err := Open(dir, testOptions())
	require.NoError(t, err)
	f := setupFixture(t, p)
	_, err = p.CreateImageVersion(ctx, f.version("1.0.0"))
	require.NoError(t, err)
	_, err = p.CreateDiskFromImageVersion(ctx, diskFrom(f, "disk", "1.0.0"))
	require.NoError(t, err)
	sas, err := p.GrantDiskAccess(ctx, rgName, "disk", time.Hour)
	require.NoError(t, err)
	sig := sasSig(t, sas)

	state, err := os.ReadFile(filepath.Join(dir, "state.json"))
	require.NoError(t, err)
	assert.NotContains(t, string(state), sig)
	assert.NotContains(t, string(state), url.QueryEscape(sig))
	assert.NotContains(t, string(state), sas)
	assert.Contains(t, string(state), hashSig(sig), "only the hash is kept")
	assert.Contains(t, string(state), `"disks"`)
	snap := p.Snapshot()
	assert.True(t, snap.ResourceGroups[rgName].Disks["disk"].AccessGranted)
	require.NoError(t, p.Close())

	// The grant survives a reopen: the URL still reads the disk.
	q, err := Open(dir, testOptions())
	require.NoError(t, err)
	defer q.Close()
	data, err := q.ReadBlob(ctx, sasRef(t, sas), 0, 11)
	require.NoError(t, err)
	assert.Equal(t, "boot sector", string(data))
	_, err = q.ReadBlob(ctx, sasRef(t, withSig(t, sas, "x"+sig)), 0, 11)
	cloudtest.RequireError(t, err, http.StatusForbidden, cloud.CodeAuthenticationFailed)
}

func TestVersionContentIsSnapshot(t *testing.T) {
	f := newFixture(t)
	p := f.p
	a, b := exportImage(exportSize, "A"), exportImage(exportSize, "B")
	f.upload(t, f.vhd, a)
	_, err := p.CreateImageVersion(ctx, f.version("1.0.0"))
	require.NoError(t, err)
	img, err := p.CreateManagedImage(ctx, cloud.ManagedImage{Name: "img", ResourceGroup: rgName,
		OSType: cloud.OSTypeLinux, HyperVGeneration: cloud.HyperVGenV2, Source: f.vhdSource()})
	require.NoError(t, err)
	assert.FileExists(t, p.dataFile(img.ID))

	// The source blob changes after the version and image were made.
	f.upload(t, f.vhd, b)
	_, err = p.CreateDiskFromImageVersion(ctx, diskFrom(f, "d1", "1.0.0"))
	require.NoError(t, err)
	data, blob := exportDisk(t, f, "d1", "d1.vhd")
	assert.True(t, bytes.Equal(a, data), "the disk has the version's content, not the blob's")
	assert.Equal(t, digestOf(a), blob.Digest)

	// Through a managed image and another version, after their sources
	// are gone.
	v := f.version("2.0.0")
	v.Source = cloud.ImageSource{Kind: cloud.SourceManagedImage, ID: img.ID}
	_, err = p.CreateImageVersion(ctx, v)
	require.NoError(t, err)
	require.NoError(t, p.DeleteManagedImage(ctx, rgName, "img"))
	assert.NoFileExists(t, p.dataFile(img.ID))
	d2 := f.def
	d2.Name, d2.SKU = "copy", "copy"
	_, err = p.CreateImageDefinition(ctx, d2)
	require.NoError(t, err)
	_, err = p.CreateImageVersion(ctx, cloud.ImageVersion{Name: "3.0.0", ResourceGroup: rgName, Gallery: galName, Definition: "copy",
		Source: cloud.ImageSource{Kind: cloud.SourceImageVersion, ID: versionID(f, "2.0.0")}})
	require.NoError(t, err)
	require.NoError(t, p.DeleteImageVersion(ctx, rgName, galName, defName, "2.0.0"))
	require.NoError(t, p.DeleteBlob(ctx, f.vhd))
	_, err = p.CreateDiskFromImageVersion(ctx, cloud.Disk{Name: "d3", ResourceGroup: rgName,
		SourceImageVersionID: cloud.ImageVersionID(f.sub, rgName, galName, "copy", "3.0.0")})
	require.NoError(t, err)
	data, _ = exportDisk(t, f, "d3", "d3.vhd")
	assert.True(t, bytes.Equal(a, data))

	// The disk keeps its data when its version goes.
	require.NoError(t, p.DeleteImageVersion(ctx, rgName, galName, defName, "1.0.0"))
	data, _ = exportDisk(t, f, "d1", "d1-again.vhd")
	assert.True(t, bytes.Equal(a, data))
}

// A version made before versions had data files reads its source chain.
func TestDiskFromVersionWithoutDataFile(t *testing.T) {
	f := newFixture(t)
	content := exportImage(exportSize, "legacy")
	f.upload(t, f.vhd, content)
	ver, err := f.p.CreateImageVersion(ctx, f.version("1.0.0"))
	require.NoError(t, err)
	require.NoError(t, os.Remove(f.p.dataFile(ver.ID)))
	_, err = f.p.CreateDiskFromImageVersion(ctx, diskFrom(f, "disk", "1.0.0"))
	require.NoError(t, err)
	data, _ := exportDisk(t, f, "disk", "out.vhd")
	assert.True(t, bytes.Equal(content, data))
}

func TestDiskConcurrentUse(t *testing.T) {
	f := newFixture(t)
	p := f.p
	a, b := exportImage(vhdBytes, "A"), exportImage(vhdBytes, "B")
	f.upload(t, f.vhd, a)
	_, err := p.CreateImageVersion(ctx, f.version("1.0.0"))
	require.NoError(t, err)
	const workers = 6

	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	check := func(err error) bool {
		if err != nil {
			errs <- err
			return false
		}
		return true
	}
	// The source blob keeps changing while versions are made from it:
	// each version holds one content or the other, never a mix.
	stop := make(chan struct{})
	var writer sync.WaitGroup
	writer.Add(1)
	go func() {
		defer writer.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			data := a
			if i%2 == 1 {
				data = b
			}
			_, err := p.UploadPageBlob(ctx, f.vhd, cloudtest.PageSource(data), true)
			check(err)
		}
	}()
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 3 {
				ver := fmt.Sprintf("%d.%d.0", i+2, j)
				if !check(func() error { _, err := p.CreateImageVersion(ctx, f.version(ver)); return err }()) {
					continue
				}
				disk := fmt.Sprintf("disk-%d-%d", i, j)
				for _, src := range []string{"1.0.0", ver} {
					if !check(func() error { _, err := p.CreateDiskFromImageVersion(ctx, diskFrom(f, disk, src)); return err }()) {
						continue
					}
					sas, err := p.GrantDiskAccess(ctx, rgName, disk, time.Minute)
					if !check(err) {
						continue
					}
					dst := cloud.BlobRef{Account: account, Container: "vhds", Name: disk + ".vhd"}
					blob, err := p.CopyBlob(ctx, sas, dst, true)
					if check(err) {
						if src == "1.0.0" && blob.Digest != digestOf(a) {
							errs <- fmt.Errorf("%s from 1.0.0: wrong content", disk)
						}
						if blob.Digest != digestOf(a) && blob.Digest != digestOf(b) {
							errs <- fmt.Errorf("%s from %s: mixed content", disk, src)
						}
					}
					ref, err := cloud.ParseBlobURL(sas)
					if check(err) {
						ref.Name += sas[strings.IndexByte(sas, '?'):]
						_, err = p.ReadBlob(ctx, ref, vhdBytes, 512)
						check(err)
					}
					check(p.RevokeDiskAccess(ctx, rgName, disk))
					check(p.DeleteDisk(ctx, rgName, disk))
					_ = p.Snapshot()
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	writer.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	snap := p.Snapshot()
	assert.Empty(t, snap.ResourceGroups[rgName].Disks)
	assert.Empty(t, snap.ResourceGroups[rgName].DiskGrants)
	assert.Len(t, snap.ResourceGroups[rgName].Galleries[galName].Definitions[defName].Versions, 1+workers*3)
}
