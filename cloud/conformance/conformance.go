// Package conformance is the suite every imgflow target passes: the same
// cases (ensure twice, conflicts, missing parents, bad names, community
// galleries and sharing, versions from a VHD and from a version, replication, disk
// export, blob copy) run against each cloud.Provider, so the local target
// and the Azure target cannot drift apart.
//
// Run it from a target's tests:
//
//	conformance.Run(t, func(t *testing.T) cloud.Provider { return newEmptySubscription(t) })
//
// Every case gets a fresh provider (an empty subscription). The suite
// creates its storage accounts (StorageAccount, OtherStorageAccount)
// through the provider, so a target backed by a shared blob service must
// know those names; containers are unique per case.
package conformance

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/cloudtest"
	"github.com/imgflow/imgflow/cloud/ensure"
	"github.com/imgflow/imgflow/cloud/local"
	"github.com/imgflow/imgflow/cloud/overlay"
	"github.com/imgflow/imgflow/cloud/transfer"
	"github.com/imgflow/imgflow/vhd"
)

// Storage accounts the suite creates.
const (
	StorageAccount      = "imgflowconf"
	OtherStorageAccount = "imgflowconf2"
)

// Location is the region the suite works in.
const Location = "westeurope"

// caseTimeout bounds one case.
const caseTimeout = 2 * time.Minute

// Run runs the suite; newProvider returns an empty subscription for one
// case (register its cleanup with t.Cleanup).
func Run(t *testing.T, newProvider func(t *testing.T) cloud.Provider) {
	run(t, newProvider, false)
}

// RunDryRun runs the suite against the dry run of a target, cloud/overlay
// over the empty subscription newBase returns, as plan and the validation
// pass of run see it: the same rules are enforced with the same errors,
// and no write reaches the base (each fails the case) nor changes it. What
// only a real run can know differs, and the cases say so: written data
// reads as zeros, an uploaded blob is taken for a fixed VHD of its size,
// a community public name ends in local.PendingGUID.
func RunDryRun(t *testing.T, newBase func(t *testing.T) cloud.Provider) {
	run(t, func(t *testing.T) cloud.Provider {
		base := newBase(t)
		t.Cleanup(func() { stillEmpty(t, base) })
		return overlay.New(ReadOnly(t, base))
	}, true)
}

func run(t *testing.T, newProvider func(t *testing.T) cloud.Provider, dry bool) {
	cases := []struct {
		name string
		fn   func(e *env)
	}{
		{"EnsureTwice", ensureTwice},
		{"Conflicts", conflicts},
		{"MissingParents", missingParents},
		{"DeleteMissing", deleteMissing},
		{"Marketplace", marketplace},
		{"BadNames", badNames},
		{"CommunityGallery", communityGallery},
		{"ShareCommunity", shareCommunity},
		{"RefuseSharingPrivate", refuseSharingPrivate},
		{"VersionFromVHD", versionFromVHD},
		{"VersionFromVersion", versionFromVersion},
		{"ManagedImage", managedImage},
		{"Replication", replication},
		{"DiskExport", diskExport},
		{"BlobCopy", blobCopy},
		{"BlobErrors", blobErrors},
		{"VMRunCommand", vmRunCommand},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), caseTimeout)
			defer cancel()
			e := &env{t: t, ctx: ctx, p: newProvider(t), now: time.Now(), id: randomHex(4), dry: dry}
			c.fn(e)
		})
	}
}

// env is one case's world.
type env struct {
	t   *testing.T
	ctx context.Context
	p   cloud.Provider
	now time.Time
	id  string // unique per case: container names
	// dry marks a dry run (RunDryRun): it keeps no data and generates no
	// names.
	dry bool
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// requireCode asserts a cloud error with the status and code.
func requireCode(t *testing.T, err error, status int, code string, msgAndArgs ...any) {
	t.Helper()
	require.Error(t, err, msgAndArgs...)
	cloudtest.RequireError(t, err, status, code)
	noSAS(t, err.Error())
}

// noSAS asserts that a text shows no SAS signature.
func noSAS(t *testing.T, s string) {
	t.Helper()
	assert.NotContains(t, strings.ToLower(s), "sig=", "a SAS signature leaked: %s", s)
}

func (e *env) group(name string) *cloud.ResourceGroup {
	e.t.Helper()
	g, _, err := ensure.EnsureResourceGroup(e.ctx, e.p, cloud.ResourceGroup{Name: name, Location: Location, Tags: cloud.Tags{"createdBy": "imgflow"}})
	require.NoError(e.t, err)
	return g
}

func (e *env) gallery(rg, name string) *cloud.Gallery {
	e.t.Helper()
	g, _, err := ensure.EnsureGallery(e.ctx, e.p, cloud.Gallery{Name: name, ResourceGroup: rg, Location: Location})
	require.NoError(e.t, err)
	return g
}

func definition(rg, gallery, name, sku string) cloud.ImageDefinition {
	return cloud.ImageDefinition{
		Name: name, ResourceGroup: rg, Gallery: gallery,
		Publisher: "imgflow", Offer: "conformance", SKU: sku,
		OSType: cloud.OSTypeLinux, OSState: cloud.OSStateGeneralized,
		HyperVGeneration: cloud.HyperVGenV2, Architecture: cloud.ArchX64,
		Features: map[string]string{"SecurityType": "TrustedLaunchSupported"},
	}
}

func (e *env) definition(rg, gallery, name, sku string) *cloud.ImageDefinition {
	e.t.Helper()
	d, _, err := ensure.EnsureImageDefinition(e.ctx, e.p, definition(rg, gallery, name, sku), e.now)
	require.NoError(e.t, err)
	return d
}

func (e *env) account(rg, name string) *cloud.StorageAccount {
	e.t.Helper()
	sa, _, err := ensure.EnsureStorageAccount(e.ctx, e.p, cloud.StorageAccount{Name: name, ResourceGroup: rg, Location: Location})
	require.NoError(e.t, err)
	return sa
}

// blobRef names a blob of an account as builtins do: with the account's
// endpoint when it is not the public default.
func blobRef(sa *cloud.StorageAccount, container, name string) cloud.BlobRef {
	ref := cloud.BlobRef{Account: sa.Name, Container: container, Name: name}
	if sa.BlobEndpoint != "" && sa.BlobEndpoint != cloud.DefaultBlobEndpoint(sa.Name) {
		ref.Endpoint = sa.BlobEndpoint
	}
	return ref
}

// vhdFile is a small fixed VHD with data in two places.
type vhdFile struct {
	path    string
	content []byte
	ranges  []vhd.Range
	md5     string
	digest  string
}

// makeVHD writes a fixed VHD of 4 MiB virtual size with data at its start
// and in its middle (the rest a hole), built with the vhd package.
func (e *env) makeVHD(seed byte) *vhdFile {
	e.t.Helper()
	path := filepath.Join(e.t.TempDir(), "disk.vhd")
	_, err := vhd.CreateFixed(path, 4<<20, false)
	require.NoError(e.t, err)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(e.t, err)
	defer f.Close()
	a := bytes.Repeat([]byte{seed, 0x5a, 0xa5, 0x01}, 16<<10) // 64 KiB
	_, err = f.WriteAt(a, 0)
	require.NoError(e.t, err)
	b := bytes.Repeat([]byte{0xee, seed}, 4<<10) // 8 KiB
	_, err = f.WriteAt(b, 2<<20)
	require.NoError(e.t, err)
	rs, err := vhd.DataRanges(f)
	require.NoError(e.t, err)
	content, err := os.ReadFile(path)
	require.NoError(e.t, err)
	sum := md5.Sum(content)
	digest, err := transfer.SparseDigest(context.Background(), bytes.NewReader(content), int64(len(content)), nil)
	require.NoError(e.t, err)
	return &vhdFile{path: path, content: content, md5: hex.EncodeToString(sum[:]), digest: digest, ranges: rs}
}

// sameContent checks a blob's identity: the file's sparse digest, and its
// MD5 where the target keeps a Content-MD5 (optional).
func sameContent(t *testing.T, file *vhdFile, b *cloud.Blob) {
	t.Helper()
	assert.Equal(t, file.digest, b.Digest)
	if b.MD5 != "" {
		assert.Equal(t, file.md5, b.MD5)
	}
}

// upload puts the VHD into a page blob.
func (e *env) upload(v *vhdFile, ref cloud.BlobRef, overwrite bool) (*cloud.Blob, error) {
	e.t.Helper()
	f, err := os.Open(v.path)
	require.NoError(e.t, err)
	defer f.Close()
	return e.p.UploadPageBlob(e.ctx, ref, cloud.PageSource{Reader: f, Size: int64(len(v.content)), Ranges: v.ranges}, overwrite)
}

// storage makes a resource group with a storage account and a container
// unique to the case.
func (e *env) storage(rg string) (*cloud.StorageAccount, string) {
	e.t.Helper()
	sa := e.account(rg, StorageAccount)
	c := "c" + e.id
	require.NoError(e.t, e.p.EnsureContainer(e.ctx, sa.Name, c))
	return sa, c
}

// vhdVersion uploads a VHD and makes version 1.0.0 of a definition from it.
func (e *env) vhdVersion(rg, gallery, def string) (*cloud.ImageVersion, *vhdFile, cloud.BlobRef, *cloud.StorageAccount) {
	e.t.Helper()
	sa, c := e.storage(rg)
	v := e.makeVHD(1)
	ref := blobRef(sa, c, def+".vhd")
	_, err := e.upload(v, ref, false)
	require.NoError(e.t, err)
	ver, outcome, err := ensure.EnsureImageVersion(e.ctx, e.p, cloud.ImageVersion{
		Name: "1.0.0", ResourceGroup: rg, Gallery: gallery, Definition: def,
		Source: cloud.ImageSource{Kind: cloud.SourceVHD, URI: ref.URL(), StorageAccountID: sa.ID},
	}, e.now)
	require.NoError(e.t, err)
	require.Equal(e.t, cloud.Created, outcome)
	return e.replicated(ver), v, ref, sa
}

// replicated waits for a version's replication, as image_version() does:
// on Azure a version is created (or updated) long before its regions
// have their replicas.
func (e *env) replicated(v *cloud.ImageVersion) *cloud.ImageVersion {
	e.t.Helper()
	got, err := ensure.WaitReplicated(e.ctx, e.p, v, time.Minute, 5*time.Millisecond, nil)
	require.NoError(e.t, err)
	assert.Equal(e.t, cloud.ProvisioningSucceeded, got.ProvisioningState)
	return got
}

func ensureTwice(e *env) {
	t := e.t
	for i, want := range []cloud.Outcome{cloud.Created, cloud.Exists} {
		g, outcome, err := ensure.EnsureResourceGroup(e.ctx, e.p, cloud.ResourceGroup{Name: "rg-twice", Location: Location, Tags: cloud.Tags{"run": "r1"}})
		require.NoError(t, err)
		assert.Equal(t, want, outcome, "resource group, round %d", i)
		assert.Equal(t, Location, g.Location)
		assert.True(t, strings.EqualFold(cloud.ResourceGroupID(e.p.SubscriptionID(), "rg-twice"), g.ID), g.ID)
		assert.Equal(t, "r1", g.Tags["run"])

		sa, outcome, err := ensure.EnsureStorageAccount(e.ctx, e.p, cloud.StorageAccount{Name: StorageAccount, ResourceGroup: "rg-twice", Location: Location})
		require.NoError(t, err)
		assert.Equal(t, want, outcome, "storage account, round %d", i)
		assert.True(t, strings.EqualFold(cloud.StorageAccountID(e.p.SubscriptionID(), "rg-twice", StorageAccount), sa.ID), sa.ID)
		assert.NotEmpty(t, sa.BlobEndpoint)

		gal, outcome, err := ensure.EnsureGallery(e.ctx, e.p, cloud.Gallery{Name: "gal_twice", ResourceGroup: "rg-twice", Location: Location, Tags: cloud.Tags{"createdBy": "imgflow"}})
		require.NoError(t, err)
		assert.Equal(t, want, outcome, "gallery, round %d", i)
		assert.True(t, strings.EqualFold(cloud.GalleryID(e.p.SubscriptionID(), "rg-twice", "gal_twice"), gal.ID), gal.ID)
		assert.Equal(t, "rg-twice", gal.ResourceGroup)
		assert.Equal(t, "imgflow", gal.Tags["createdBy"])

		d, outcome, err := ensure.EnsureImageDefinition(e.ctx, e.p, definition("rg-twice", "gal_twice", "ubuntu", "2204"), e.now)
		require.NoError(t, err)
		assert.Equal(t, want, outcome, "definition, round %d", i)
		assert.Equal(t, Location, d.Location)
		assert.Equal(t, cloud.HyperVGenV2, d.HyperVGeneration)
		assert.Equal(t, "TrustedLaunchSupported", d.Features["SecurityType"])
		assert.Equal(t, "gal_twice", d.Gallery)
	}
	// A description change is an update, then nothing again.
	_, outcome, err := ensure.EnsureGallery(e.ctx, e.p, cloud.Gallery{Name: "gal_twice", ResourceGroup: "rg-twice", Location: Location, Description: "images"})
	require.NoError(t, err)
	assert.Equal(t, cloud.Updated, outcome)
	g, err := e.p.GetGallery(e.ctx, "rg-twice", "gal_twice")
	require.NoError(t, err)
	assert.Equal(t, "images", g.Description)

	all, err := e.p.ListGalleries(e.ctx)
	require.NoError(t, err)
	require.Len(t, all, 1)
	assert.Equal(t, "gal_twice", all[0].Name)
	defs, err := e.p.ListImageDefinitions(e.ctx, "rg-twice", "gal_twice")
	require.NoError(t, err)
	require.Len(t, defs, 1)
	assert.Equal(t, "2204", defs[0].SKU)
}

func conflicts(e *env) {
	t := e.t
	e.group("rg-a")
	e.group("rg-b")

	// A resource group cannot move.
	_, _, err := ensure.EnsureResourceGroup(e.ctx, e.p, cloud.ResourceGroup{Name: "rg-a", Location: "eastus"})
	require.ErrorContains(t, err, "already exists in westeurope")
	_, err = e.p.CreateResourceGroup(e.ctx, cloud.ResourceGroup{Name: "rg-a", Location: "eastus"})
	requireCode(t, err, http.StatusConflict, cloud.CodeInvalidResourceGroupLocation)

	// Gallery names are unique per subscription.
	e.gallery("rg-a", "shared_gal")
	_, _, err = ensure.EnsureGallery(e.ctx, e.p, cloud.Gallery{Name: "shared_gal", ResourceGroup: "rg-b", Location: Location})
	require.ErrorContains(t, err, "unique per subscription")
	_, err = e.p.CreateGallery(e.ctx, cloud.Gallery{Name: "shared_gal", ResourceGroup: "rg-b", Location: Location})
	requireCode(t, err, http.StatusConflict, cloud.CodeConflict)

	// Immutable definition fields.
	e.definition("rg-a", "shared_gal", "ubuntu", "2204")
	changed := definition("rg-a", "shared_gal", "ubuntu", "2204")
	changed.OSState = cloud.OSStateSpecialized
	_, _, err = ensure.EnsureImageDefinition(e.ctx, e.p, changed, e.now)
	require.ErrorContains(t, err, "immutable")
	require.ErrorContains(t, err, "os_state")
	changed.Location = Location
	_, err = e.p.CreateImageDefinition(e.ctx, changed)
	requireCode(t, err, http.StatusConflict, cloud.CodePropertyChangeNotAllowed)
	assert.ErrorContains(t, err, "osState")

	// The (publisher, offer, sku) identifier is unique within a gallery.
	dup := definition("rg-a", "shared_gal", "ubuntu2", "2204")
	_, _, err = ensure.EnsureImageDefinition(e.ctx, e.p, dup, e.now)
	require.ErrorContains(t, err, "must be unique within a gallery")
	dup.Location = Location
	_, err = e.p.CreateImageDefinition(e.ctx, dup)
	requireCode(t, err, http.StatusConflict, cloud.CodeConflict)

	// Nothing changed.
	d, err := e.p.GetImageDefinition(e.ctx, "rg-a", "shared_gal", "ubuntu")
	require.NoError(t, err)
	assert.Equal(t, cloud.OSStateGeneralized, d.OSState)
	_, err = e.p.GetImageDefinition(e.ctx, "rg-a", "shared_gal", "ubuntu2")
	requireCode(t, err, http.StatusNotFound, cloud.CodeResourceNotFound)
}

func missingParents(e *env) {
	t := e.t
	_, err := e.p.GetResourceGroup(e.ctx, "nope")
	requireCode(t, err, http.StatusNotFound, cloud.CodeResourceGroupNotFound)
	_, err = e.p.GetGallery(e.ctx, "nope", "gal")
	requireCode(t, err, http.StatusNotFound, cloud.CodeResourceGroupNotFound)
	_, err = e.p.CreateGallery(e.ctx, cloud.Gallery{Name: "gal", ResourceGroup: "nope", Location: Location})
	requireCode(t, err, http.StatusNotFound, cloud.CodeResourceGroupNotFound)
	_, err = e.p.CreateStorageAccount(e.ctx, cloud.StorageAccount{Name: StorageAccount, ResourceGroup: "nope", Location: Location})
	requireCode(t, err, http.StatusNotFound, cloud.CodeResourceGroupNotFound)

	e.group("rg")
	_, err = e.p.GetGallery(e.ctx, "rg", "gal")
	requireCode(t, err, http.StatusNotFound, cloud.CodeResourceNotFound)
	_, err = e.p.ListImageDefinitions(e.ctx, "rg", "gal")
	requireCode(t, err, http.StatusNotFound, cloud.CodeParentResourceNotFound)
	_, err = e.p.ListImageVersions(e.ctx, "rg", "gal", "ubuntu")
	requireCode(t, err, http.StatusNotFound, cloud.CodeParentResourceNotFound)
	d := definition("rg", "gal", "ubuntu", "2204")
	d.Location = Location
	_, err = e.p.CreateImageDefinition(e.ctx, d)
	requireCode(t, err, http.StatusNotFound, cloud.CodeParentResourceNotFound)
	_, err = e.p.GetStorageAccount(e.ctx, "rg", StorageAccount)
	requireCode(t, err, http.StatusNotFound, cloud.CodeResourceNotFound)
	_, err = e.p.GetManagedImage(e.ctx, "rg", "img")
	requireCode(t, err, http.StatusNotFound, cloud.CodeResourceNotFound)
	_, err = e.p.GetDisk(e.ctx, "rg", "disk")
	requireCode(t, err, http.StatusNotFound, cloud.CodeResourceNotFound)

	e.gallery("rg", "gal")
	_, err = e.p.GetImageDefinition(e.ctx, "rg", "gal", "ubuntu")
	requireCode(t, err, http.StatusNotFound, cloud.CodeResourceNotFound)
	_, err = e.p.GetImageVersion(e.ctx, "rg", "gal", "ubuntu", "1.0.0")
	requireCode(t, err, http.StatusNotFound, cloud.CodeParentResourceNotFound)
	_, _, err = ensure.EnsureImageVersion(e.ctx, e.p, cloud.ImageVersion{Name: "1.0.0", ResourceGroup: "rg", Gallery: "gal", Definition: "ubuntu",
		Source: cloud.ImageSource{Kind: cloud.SourceManagedImage, ID: cloud.ManagedImageID(e.p.SubscriptionID(), "rg", "img")}}, e.now)
	require.Error(t, err)
	assert.True(t, cloud.IsNotFound(err), "%v", err)

	e.definition("rg", "gal", "ubuntu", "2204")
	_, err = e.p.GetImageVersion(e.ctx, "rg", "gal", "ubuntu", "1.0.0")
	requireCode(t, err, http.StatusNotFound, cloud.CodeResourceNotFound)
	// A version from a managed image that does not exist.
	_, err = e.p.CreateImageVersion(e.ctx, cloud.ImageVersion{Name: "1.0.0", ResourceGroup: "rg", Gallery: "gal", Definition: "ubuntu", Location: Location,
		Source: cloud.ImageSource{Kind: cloud.SourceManagedImage, ID: cloud.ManagedImageID(e.p.SubscriptionID(), "rg", "img")}})
	requireCode(t, err, http.StatusNotFound, cloud.CodeResourceNotFound)
}

// deleteMissing: deleting what is not there is NotFound on every target
// (Azure answers such a DELETE 204 No Content; the Azure target reports
// that as NotFound), so that callers can say "already gone"; a missing
// resource group or parent is its own 404.
func deleteMissing(e *env) {
	t := e.t
	requireCode(t, e.p.DeleteDisk(e.ctx, "nope", "disk"), http.StatusNotFound, cloud.CodeResourceGroupNotFound, "disk in a missing group")
	requireCode(t, e.p.DeleteVM(e.ctx, "nope", "vm"), http.StatusNotFound, cloud.CodeResourceGroupNotFound, "VM in a missing group")

	e.gallery(e.group("rg").Name, "gal")
	notThere := func(err error, what string) {
		t.Helper()
		require.Error(t, err, what)
		assert.True(t, cloud.IsNotFound(err), "%s: %v", what, err)
		assert.False(t, cloud.HasCode(err, cloud.CodeResourceGroupNotFound), "%s: %v", what, err)
	}
	notThere(e.p.DeleteDisk(e.ctx, "rg", "disk"), "disk")
	notThere(e.p.DeleteVM(e.ctx, "rg", "vm"), "VM")
	notThere(e.p.DeleteManagedImage(e.ctx, "rg", "img"), "managed image")
	notThere(e.p.DeleteImageDefinition(e.ctx, "rg", "gal", "ubuntu"), "image definition")
	requireCode(t, e.p.DeleteImageVersion(e.ctx, "rg", "gal", "ubuntu", "1.0.0"), http.StatusNotFound, cloud.CodeParentResourceNotFound,
		"version of a missing definition")
	e.definition("rg", "gal", "ubuntu", "2204")
	notThere(e.p.DeleteImageVersion(e.ctx, "rg", "gal", "ubuntu", "1.0.0"), "image version")
}

// marketplace: every target lists a marketplace image's versions the same
// way (names without case), an image it lacks is NotFound, and a logical
// location, where no VM runs, is refused as ARM refuses it.
func marketplace(e *env) {
	t := e.t
	jammy := cloud.MarketplaceImage{Publisher: "canonical", Offer: "0001-com-ubuntu-server-jammy", SKU: "22_04-LTS-gen2"}
	versions, err := e.p.ListMarketplaceImageVersions(e.ctx, Location, jammy)
	require.NoError(t, err)
	assert.NotEmpty(t, versions)
	_, err = e.p.ListMarketplaceImageVersions(e.ctx, Location, cloud.MarketplaceImage{Publisher: "Canonical", Offer: "0001-com-ubuntu-server-jammy", SKU: "no-such-sku"})
	requireCode(t, err, http.StatusNotFound, cloud.CodeNotFound)
	_, err = e.p.ListMarketplaceImageVersions(e.ctx, "europe", jammy)
	requireCode(t, err, http.StatusBadRequest, cloud.CodeLocationNotAvailableForResourceType)
}

func badNames(e *env) {
	t := e.t
	var ve *cloud.ValidationError
	_, _, err := ensure.EnsureResourceGroup(e.ctx, e.p, cloud.ResourceGroup{Name: "bad name!", Location: Location})
	require.ErrorAs(t, err, &ve)
	_, _, err = ensure.EnsureGallery(e.ctx, e.p, cloud.Gallery{Name: "my-gallery", ResourceGroup: "rg", Location: Location})
	require.ErrorAs(t, err, &ve)
	_, _, err = ensure.EnsureStorageAccount(e.ctx, e.p, cloud.StorageAccount{Name: "Bad_Account", ResourceGroup: "rg", Location: Location})
	require.ErrorAs(t, err, &ve)
	_, _, err = ensure.EnsureGallery(e.ctx, e.p, cloud.Gallery{Name: "gal", ResourceGroup: "rg", Location: Location,
		Community: &cloud.CommunityInfo{PublicNamePrefix: "bad-prefix"}})
	require.ErrorAs(t, err, &ve)

	e.group("rg")
	e.gallery("rg", "gal")
	bad := definition("rg", "gal", "-ubuntu", "2204")
	_, _, err = ensure.EnsureImageDefinition(e.ctx, e.p, bad, e.now)
	require.ErrorAs(t, err, &ve)
	e.definition("rg", "gal", "ubuntu", "2204")
	src := cloud.ImageSource{Kind: cloud.SourceManagedImage, ID: cloud.ManagedImageID(e.p.SubscriptionID(), "rg", "img")}
	_, _, err = ensure.EnsureImageVersion(e.ctx, e.p, cloud.ImageVersion{Name: "1.0", ResourceGroup: "rg", Gallery: "gal", Definition: "ubuntu", Source: src}, e.now)
	require.ErrorAs(t, err, &ve)
	_, _, err = ensure.EnsureImageVersion(e.ctx, e.p, cloud.ImageVersion{Name: "1.0.0", ResourceGroup: "rg", Gallery: "gal", Definition: "ubuntu", Source: src,
		TargetRegions: []cloud.TargetRegion{{Name: Location}, {Name: "europe"}}}, e.now)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "europe")

	// Nothing was created by the refused calls.
	all, err := e.p.ListGalleries(e.ctx)
	require.NoError(t, err)
	require.Len(t, all, 1)
	defs, err := e.p.ListImageDefinitions(e.ctx, "rg", "gal")
	require.NoError(t, err)
	require.Len(t, defs, 1)
}

var publicNameRE = regexp.MustCompile(`^imgflowconf-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// communityInfo is the profile the community cases create galleries with.
func communityInfo() cloud.CommunityInfo {
	return cloud.CommunityInfo{PublicNamePrefix: "imgflowconf", PublisherURI: "https://www.flatcar.org/",
		PublisherContact: "infra@flatcar-linux.org", EULA: "https://kinvolk.io/legal/open-source/"}
}

func (e *env) communityGallery(rg, name string, info cloud.CommunityInfo) (*cloud.Gallery, cloud.Outcome, error) {
	return ensure.EnsureGallery(e.ctx, e.p, cloud.Gallery{Name: name, ResourceGroup: rg, Location: Location, Community: &info})
}

// communityGallery: a community gallery is one from its creation; its
// publisher details can change, its prefix cannot.
func communityGallery(e *env) {
	t := e.t
	e.group("rg")
	info := communityInfo()
	g, outcome, err := e.communityGallery("rg", "community_gal", info)
	require.NoError(t, err)
	assert.Equal(t, cloud.Created, outcome)
	require.NotNil(t, g.Community)
	assert.Equal(t, info, *g.Community)
	assert.False(t, g.CommunityEnabled, "created, not yet public")
	assert.Empty(t, g.PublicNames)

	_, outcome, err = e.communityGallery("rg", "community_gal", info)
	require.NoError(t, err)
	assert.Equal(t, cloud.Exists, outcome)

	// Publisher details are updated in place.
	info2 := info
	info2.EULA = "https://www.flatcar.org/license"
	g, outcome, err = e.communityGallery("rg", "community_gal", info2)
	require.NoError(t, err)
	assert.Equal(t, cloud.Updated, outcome)
	assert.Equal(t, info2, *g.Community)

	// The prefix is refused, by the ensure and by the target.
	other := info2
	other.PublicNamePrefix = "otherprefix"
	_, _, err = e.communityGallery("rg", "community_gal", other)
	require.ErrorContains(t, err, `public name prefix "imgflowconf", which Azure cannot change`)
	_, err = e.p.CreateGallery(e.ctx, cloud.Gallery{Name: "community_gal", ResourceGroup: "rg", Location: Location, Community: &other})
	requireCode(t, err, http.StatusConflict, cloud.CodePropertyChangeNotAllowed)

	// A gallery() without a profile leaves the community profile alone.
	g, outcome, err = ensure.EnsureGallery(e.ctx, e.p, cloud.Gallery{Name: "community_gal", ResourceGroup: "rg", Location: Location, Description: "Flatcar"})
	require.NoError(t, err)
	assert.Equal(t, cloud.Updated, outcome)
	assert.Equal(t, "Flatcar", g.Description)
	g, err = e.p.GetGallery(e.ctx, "rg", "community_gal")
	require.NoError(t, err)
	require.NotNil(t, g.Community)
	assert.Equal(t, info2, *g.Community)

	// Private-only security types are refused in a community gallery,
	// public or not.
	private := definition("rg", "community_gal", "private", "private")
	private.Features = map[string]string{"SecurityType": "TrustedLaunch"}
	_, _, err = ensure.EnsureImageDefinition(e.ctx, e.p, private, e.now)
	require.ErrorContains(t, err, "private galleries only")
}

// shareCommunity: EnableCommunity makes a community gallery public under a
// generated name, once.
func shareCommunity(e *env) {
	t := e.t
	e.group("rg")
	info := communityInfo()
	_, _, err := e.communityGallery("rg", "community_gal", info)
	require.NoError(t, err)
	e.definition("rg", "community_gal", "flatcar", "stable")

	g, outcome, err := ensure.EnsureCommunity(e.ctx, e.p, "rg", "community_gal")
	require.NoError(t, err)
	assert.Equal(t, cloud.Created, outcome)
	assert.True(t, g.CommunityEnabled)
	require.NotNil(t, g.Community)
	assert.Equal(t, info, *g.Community)
	public := g.PublicName()
	if e.dry {
		assert.Equal(t, info.PublicNamePrefix+"-"+local.PendingGUID, public, "only the platform generates the name")
	} else {
		assert.Regexp(t, publicNameRE, public)
	}

	g, outcome, err = ensure.EnsureCommunity(e.ctx, e.p, "rg", "community_gal")
	require.NoError(t, err)
	assert.Equal(t, cloud.Exists, outcome)
	assert.Equal(t, public, g.PublicName())

	// Updating the gallery keeps it public under the same name.
	info2 := info
	info2.PublisherContact = "security@flatcar-linux.org"
	_, outcome, err = ensure.EnsureGallery(e.ctx, e.p, cloud.Gallery{Name: "community_gal", ResourceGroup: "rg", Location: Location, Description: "Flatcar", Community: &info2})
	require.NoError(t, err)
	assert.Equal(t, cloud.Updated, outcome)
	g, err = e.p.GetGallery(e.ctx, "rg", "community_gal")
	require.NoError(t, err)
	assert.True(t, g.CommunityEnabled)
	assert.Equal(t, public, g.PublicName())
	assert.Equal(t, "security@flatcar-linux.org", g.Community.PublisherContact)
	assert.Equal(t, "Flatcar", g.Description)

	// A private-only security type is refused in a public gallery.
	private := definition("rg", "community_gal", "private", "private")
	private.Features = map[string]string{"SecurityType": "TrustedLaunch"}
	private.Location = Location
	_, err = e.p.CreateImageDefinition(e.ctx, private)
	requireCode(t, err, http.StatusBadRequest, cloud.CodeInvalidParameter)

	// A community gallery holding such a definition cannot be made public.
	_, _, err = e.communityGallery("rg", "community_gal2", info)
	require.NoError(t, err)
	_, err = e.p.CreateImageDefinition(e.ctx, withGallery(private, "community_gal2"))
	require.NoError(t, err)
	_, err = e.p.ShareCommunity(e.ctx, "rg", "community_gal2")
	requireCode(t, err, http.StatusBadRequest, cloud.CodeInvalidParameter)
	_, _, err = ensure.EnsureCommunity(e.ctx, e.p, "rg", "community_gal2")
	require.ErrorContains(t, err, "use TrustedLaunchSupported instead")
	g, err = e.p.GetGallery(e.ctx, "rg", "community_gal2")
	require.NoError(t, err)
	assert.False(t, g.CommunityEnabled)
	assert.Empty(t, g.PublicNames)
}

// refuseSharingPrivate: Azure cannot convert a private gallery to a
// community gallery, neither by sharing it nor by a PUT of the profile.
func refuseSharingPrivate(e *env) {
	t := e.t
	e.group("rg")
	e.gallery("rg", "private_gal")
	info := communityInfo()

	_, _, err := ensure.EnsureCommunity(e.ctx, e.p, "rg", "private_gal")
	require.ErrorContains(t, err, "Azure cannot convert a private gallery to a community gallery")
	require.ErrorContains(t, err, "community = community_profile(")
	_, err = e.p.ShareCommunity(e.ctx, "rg", "private_gal")
	requireCode(t, err, http.StatusBadRequest, cloud.CodeInvalidParameter)

	_, _, err = e.communityGallery("rg", "private_gal", info)
	require.ErrorContains(t, err, `gallery "private_gal" already exists as a private gallery`)
	_, err = e.p.CreateGallery(e.ctx, cloud.Gallery{Name: "private_gal", ResourceGroup: "rg", Location: Location, Community: &info})
	requireCode(t, err, http.StatusConflict, cloud.CodePropertyChangeNotAllowed)

	g, err := e.p.GetGallery(e.ctx, "rg", "private_gal")
	require.NoError(t, err)
	assert.Nil(t, g.Community, "still private")
	assert.False(t, g.CommunityEnabled)
	assert.Empty(t, g.PublicNames)
}

func versionFromVHD(e *env) {
	t := e.t
	e.group("rg")
	e.gallery("rg", "gal")
	e.definition("rg", "gal", "ubuntu", "2204")
	ver, file, ref, sa := e.vhdVersion("rg", "gal", "ubuntu")

	assert.Equal(t, cloud.SourceVHD, ver.Source.Kind)
	assert.Equal(t, ref.URL(), ver.Source.URI)
	assert.True(t, strings.EqualFold(sa.ID, ver.Source.StorageAccountID))
	assert.Equal(t, Location, ver.Location)
	assert.Equal(t, []string{Location}, ver.RegionNames())
	require.Len(t, ver.Replication, 1)
	assert.Equal(t, cloud.ReplicationCompleted, ver.Replication[0].State)
	assert.Equal(t, Location, ver.Replication[0].Region)
	assert.Positive(t, ver.SizeBytes)
	assert.True(t, strings.EqualFold(cloud.ImageVersionID(e.p.SubscriptionID(), "rg", "gal", "ubuntu", "1.0.0"), ver.ID), ver.ID)

	// A list names the version with its source; replication status is
	// only in a GET's expand.
	listed, err := e.p.ListImageVersions(e.ctx, "rg", "gal", "ubuntu")
	require.NoError(t, err)
	require.Len(t, listed, 1)
	assert.Equal(t, "1.0.0", listed[0].Name)
	assert.Equal(t, ref.URL(), listed[0].Source.URI)
	assert.Equal(t, []string{Location}, listed[0].RegionNames())
	assert.Empty(t, listed[0].Replication)

	want := cloud.ImageVersion{Name: "1.0.0", ResourceGroup: "rg", Gallery: "gal", Definition: "ubuntu",
		Source: cloud.ImageSource{Kind: cloud.SourceVHD, URI: ref.URL(), StorageAccountID: sa.ID}}
	_, outcome, err := ensure.EnsureImageVersion(e.ctx, e.p, want, e.now)
	require.NoError(t, err)
	assert.Equal(t, cloud.Exists, outcome)

	// The source cannot change.
	other := blobRef(sa, ref.Container, "other.vhd")
	_, err = e.upload(file, other, false)
	require.NoError(t, err)
	changed := want
	changed.Source.URI = other.URL()
	_, _, err = ensure.EnsureImageVersion(e.ctx, e.p, changed, e.now)
	require.ErrorContains(t, err, "another source")
	changed.Location = Location
	_, err = e.p.CreateImageVersion(e.ctx, changed)
	requireCode(t, err, http.StatusConflict, cloud.CodePropertyChangeNotAllowed)

	// A definition holding versions cannot be deleted.
	err = e.p.DeleteImageDefinition(e.ctx, "rg", "gal", "ubuntu")
	requireCode(t, err, http.StatusConflict, cloud.CodeConflict)

	// A version from a VHD that does not exist.
	missing := want
	missing.Name = "1.0.1"
	missing.Source.URI = blobRef(sa, ref.Container, "missing.vhd").URL()
	_, _, err = ensure.EnsureImageVersion(e.ctx, e.p, missing, e.now)
	require.Error(t, err)
	assert.True(t, cloud.IsNotFound(err), "%v", err)
	assert.True(t, cloud.HasCode(err, cloud.CodeBlobNotFound), "%v", err)

	// A version from a blob that is not a VHD.
	notVHD := blobRef(sa, ref.Container, "notvhd.vhd")
	_, err = e.p.UploadPageBlob(e.ctx, notVHD, cloud.PageSource{Reader: bytes.NewReader(make([]byte, 1<<20)), Size: 1 << 20}, false)
	require.NoError(t, err)
	bad := want
	bad.Name = "1.0.2"
	bad.Source.URI = notVHD.URL()
	_, _, err = ensure.EnsureImageVersion(e.ctx, e.p, bad, e.now)
	if e.dry {
		// A dry run keeps no data: a blob it uploaded is taken for a fixed
		// VHD of its size (the real run reads the footer and refuses it).
		require.NoError(t, err)
		require.NoError(t, e.p.DeleteImageVersion(e.ctx, "rg", "gal", "ubuntu", "1.0.2"))
	} else {
		require.Error(t, err)
		assert.True(t, cloud.HasCode(err, cloud.CodeInvalidParameter), "%v", err)
	}

	// Delete the version, then the definition.
	require.NoError(t, e.p.DeleteImageVersion(e.ctx, "rg", "gal", "ubuntu", "1.0.0"))
	_, err = e.p.GetImageVersion(e.ctx, "rg", "gal", "ubuntu", "1.0.0")
	requireCode(t, err, http.StatusNotFound, cloud.CodeResourceNotFound)
	require.NoError(t, e.p.DeleteImageDefinition(e.ctx, "rg", "gal", "ubuntu"))
	_, err = e.p.GetImageDefinition(e.ctx, "rg", "gal", "ubuntu")
	requireCode(t, err, http.StatusNotFound, cloud.CodeResourceNotFound)
}

func versionFromVersion(e *env) {
	t := e.t
	e.group("rg")
	e.gallery("rg", "gal")
	e.definition("rg", "gal", "ubuntu", "2204")
	src, _, _, _ := e.vhdVersion("rg", "gal", "ubuntu")

	e.definition("rg", "gal", "ubuntu-copy", "2204-copy")
	want := cloud.ImageVersion{Name: "2.0.0", ResourceGroup: "rg", Gallery: "gal", Definition: "ubuntu-copy",
		Source: cloud.ImageSource{Kind: cloud.SourceImageVersion, ID: src.ID}}
	for _, outcome := range []cloud.Outcome{cloud.Created, cloud.Exists} {
		v, got, err := ensure.EnsureImageVersion(e.ctx, e.p, want, e.now)
		require.NoError(t, err)
		assert.Equal(t, outcome, got)
		assert.Equal(t, cloud.SourceImageVersion, v.Source.Kind)
		assert.True(t, strings.EqualFold(src.ID, v.Source.ID), v.Source.ID)
		assert.Equal(t, src.SizeBytes, v.SizeBytes)
	}

	// The source's generation must match the definition's.
	gen1 := definition("rg", "gal", "ubuntu-gen1", "2204-gen1")
	gen1.HyperVGeneration = cloud.HyperVGenV1
	gen1.Features = nil
	_, _, err := ensure.EnsureImageDefinition(e.ctx, e.p, gen1, e.now)
	require.NoError(t, err)
	_, err = e.p.CreateImageVersion(e.ctx, cloud.ImageVersion{Name: "1.0.0", ResourceGroup: "rg", Gallery: "gal", Definition: "ubuntu-gen1", Location: Location,
		Source: cloud.ImageSource{Kind: cloud.SourceImageVersion, ID: src.ID}})
	requireCode(t, err, http.StatusBadRequest, cloud.CodeInvalidParameter)
}

func managedImage(e *env) {
	t := e.t
	e.group("rg")
	sa, c := e.storage("rg")
	file := e.makeVHD(3)
	ref := blobRef(sa, c, "base.vhd")
	_, err := e.upload(file, ref, false)
	require.NoError(t, err)
	want := cloud.ManagedImage{Name: "base", ResourceGroup: "rg", Location: Location, OSType: cloud.OSTypeLinux, HyperVGeneration: cloud.HyperVGenV2,
		Source: cloud.ImageSource{Kind: cloud.SourceVHD, URI: ref.URL(), StorageAccountID: sa.ID}}
	var img *cloud.ManagedImage
	for _, outcome := range []cloud.Outcome{cloud.Created, cloud.Exists} {
		var got cloud.Outcome
		img, got, err = ensure.EnsureManagedImage(e.ctx, e.p, want)
		require.NoError(t, err)
		assert.Equal(t, outcome, got)
		assert.Equal(t, cloud.SourceVHD, img.Source.Kind)
		assert.Equal(t, ref.URL(), img.Source.URI)
		assert.Equal(t, cloud.HyperVGenV2, img.HyperVGeneration)
		assert.Equal(t, cloud.OSTypeLinux, img.OSType)
	}
	e.gallery("rg", "gal")
	e.definition("rg", "gal", "base", "base")
	v, outcome, err := ensure.EnsureImageVersion(e.ctx, e.p, cloud.ImageVersion{Name: "1.0.0", ResourceGroup: "rg", Gallery: "gal", Definition: "base",
		Source: cloud.ImageSource{Kind: cloud.SourceManagedImage, ID: img.ID}}, e.now)
	require.NoError(t, err)
	assert.Equal(t, cloud.Created, outcome)
	assert.Equal(t, cloud.SourceManagedImage, v.Source.Kind)
	assert.True(t, strings.EqualFold(img.ID, v.Source.ID))
	v = e.replicated(v)

	// A managed image from the version (the import path of gen2 builds).
	fromVersion := cloud.ManagedImage{Name: "from-version", ResourceGroup: "rg", Location: Location, OSType: cloud.OSTypeLinux, HyperVGeneration: cloud.HyperVGenV2,
		Source: cloud.ImageSource{Kind: cloud.SourceImageVersion, ID: v.ID}}
	for _, outcome := range []cloud.Outcome{cloud.Created, cloud.Exists} {
		got, o, err := ensure.EnsureManagedImage(e.ctx, e.p, fromVersion)
		require.NoError(t, err)
		assert.Equal(t, outcome, o)
		assert.Equal(t, cloud.SourceImageVersion, got.Source.Kind)
		assert.True(t, strings.EqualFold(v.ID, got.Source.ID))
	}
	require.NoError(t, e.p.DeleteManagedImage(e.ctx, "rg", "from-version"))
	_, err = e.p.GetManagedImage(e.ctx, "rg", "from-version")
	requireCode(t, err, http.StatusNotFound, cloud.CodeResourceNotFound)
}

func replication(e *env) {
	t := e.t
	e.group("rg")
	e.gallery("rg", "gal")
	e.definition("rg", "gal", "ubuntu", "2204")
	ver, _, _, _ := e.vhdVersion("rg", "gal", "ubuntu")

	req := ensure.ReplicateRequest{ResourceGroup: "rg", Gallery: "gal", Definition: "ubuntu", Version: "1.0.0",
		Regions: []string{"northeurope", "eastus"}, ReplicaCount: 2}
	v, outcome, err := ensure.Replicate(e.ctx, e.p, req)
	require.NoError(t, err)
	assert.Equal(t, cloud.Updated, outcome)
	assert.Equal(t, []string{Location, "northeurope", "eastus"}, v.RegionNames())
	for _, r := range v.TargetRegions {
		assert.Equal(t, 2, r.ReplicaCount, r.Name)
		assert.Equal(t, cloud.StorageStandardLRS, r.StorageAccountType, r.Name)
	}
	v, err = ensure.WaitReplicated(e.ctx, e.p, ver, time.Minute, 10*time.Millisecond, nil)
	require.NoError(t, err)
	got := map[string]string{}
	for _, s := range v.Replication {
		got[s.Region] = s.State
	}
	assert.Equal(t, map[string]string{Location: cloud.ReplicationCompleted, "northeurope": cloud.ReplicationCompleted, "eastus": cloud.ReplicationCompleted}, got)

	_, outcome, err = ensure.Replicate(e.ctx, e.p, req)
	require.NoError(t, err)
	assert.Equal(t, cloud.Exists, outcome)

	// An update of another field keeps the full target list.
	upd := *v
	upd.ExcludeFromLatest = true
	v, err = e.p.UpdateImageVersion(e.ctx, upd)
	require.NoError(t, err)
	assert.True(t, v.ExcludeFromLatest)
	assert.Equal(t, []string{Location, "northeurope", "eastus"}, v.RegionNames())

	// Dropping a region is one update with the full remaining list.
	v, outcome, err = ensure.Replicate(e.ctx, e.p, ensure.ReplicateRequest{ResourceGroup: "rg", Gallery: "gal", Definition: "ubuntu", Version: "1.0.0",
		Regions: []string{"eastus"}, ReplicaCount: 2})
	require.NoError(t, err)
	assert.Equal(t, cloud.Updated, outcome)
	assert.Equal(t, []string{Location, "eastus"}, v.RegionNames())

	// Logical geographies and unknown regions are refused before any call.
	_, _, err = ensure.Replicate(e.ctx, e.p, ensure.ReplicateRequest{ResourceGroup: "rg", Gallery: "gal", Definition: "ubuntu", Version: "1.0.0", Regions: []string{"europe"}})
	require.ErrorContains(t, err, "europe")
	// And by the target itself.
	upd = *v
	upd.TargetRegions = append(upd.TargetRegions, cloud.TargetRegion{Name: "europe"})
	_, err = e.p.UpdateImageVersion(e.ctx, upd)
	requireCode(t, err, http.StatusBadRequest, cloud.CodeInvalidParameter)
	upd.TargetRegions = []cloud.TargetRegion{{Name: "eastus"}}
	_, err = e.p.UpdateImageVersion(e.ctx, upd)
	requireCode(t, err, http.StatusBadRequest, cloud.CodeInvalidParameter)
}

func diskExport(e *env) {
	t := e.t
	e.group("rg")
	e.gallery("rg", "gal")
	e.definition("rg", "gal", "ubuntu", "2204")
	ver, file, ref, sa := e.vhdVersion("rg", "gal", "ubuntu")

	// Not replicated to eastus.
	_, err := e.p.CreateDiskFromImageVersion(e.ctx, cloud.Disk{Name: "export-east", ResourceGroup: "rg", Location: "eastus", SourceImageVersionID: ver.ID})
	requireCode(t, err, http.StatusBadRequest, cloud.CodeInvalidParameter)

	d, err := e.p.CreateDiskFromImageVersion(e.ctx, cloud.Disk{Name: "export", ResourceGroup: "rg", SourceImageVersionID: ver.ID, SecurityType: "TrustedLaunch",
		Tags: cloud.Tags{"imgflowTemporary": "true"}})
	require.NoError(t, err)
	assert.Equal(t, Location, d.Location)
	assert.True(t, strings.EqualFold(ver.ID, d.SourceImageVersionID))
	assert.Equal(t, "TrustedLaunch", d.SecurityType)
	assert.Equal(t, cloud.HyperVGenV2, d.HyperVGeneration)
	assert.Equal(t, int64(len(file.content)), d.SizeBytes, "a disk's size is its export's: the VHD with its footer")
	assert.False(t, d.AccessGranted)
	assert.Equal(t, "true", d.Tags["imgflowTemporary"])

	sas, err := e.p.GrantDiskAccess(e.ctx, "rg", "export", time.Hour)
	require.NoError(t, err)
	assert.Contains(t, sas, "sig=", "a disk access URL carries a SAS")
	d, err = e.p.GetDisk(e.ctx, "rg", "export")
	require.NoError(t, err)
	assert.True(t, d.AccessGranted)
	_, err = e.p.GrantDiskAccess(e.ctx, "rg", "export", time.Hour)
	requireCode(t, err, http.StatusConflict, cloud.CodeOperationNotAllowed)
	err = e.p.DeleteDisk(e.ctx, "rg", "export")
	requireCode(t, err, http.StatusConflict, cloud.CodeOperationNotAllowed)

	dest := blobRef(sa, ref.Container, "exported.vhd")
	b, err := e.p.CopyBlob(e.ctx, sas, dest, false)
	require.NoError(t, err)
	assert.Equal(t, int64(len(file.content)), b.Size)
	assert.Equal(t, cloud.BlobTypePage, b.Type)
	data, err := e.p.ReadBlob(e.ctx, dest, 0, b.Size)
	require.NoError(t, err)
	e.readsBack(file, data, "the export differs from the VHD the version was made from")

	require.NoError(t, e.p.RevokeDiskAccess(e.ctx, "rg", "export"))
	d, err = e.p.GetDisk(e.ctx, "rg", "export")
	require.NoError(t, err)
	assert.False(t, d.AccessGranted)
	require.NoError(t, e.p.RevokeDiskAccess(e.ctx, "rg", "export"), "revoking twice is fine")
	// The SAS no longer reads.
	_, err = e.p.CopyBlob(e.ctx, sas, blobRef(sa, ref.Container, "late.vhd"), false)
	require.Error(t, err)
	noSAS(t, err.Error())

	require.NoError(t, e.p.DeleteDisk(e.ctx, "rg", "export"))
	_, err = e.p.GetDisk(e.ctx, "rg", "export")
	requireCode(t, err, http.StatusNotFound, cloud.CodeResourceNotFound)
}

func blobCopy(e *env) {
	t := e.t
	e.group("rg")
	sa, c := e.storage("rg")
	file := e.makeVHD(2)
	src := blobRef(sa, c, "src.vhd")
	b, err := e.upload(file, src, false)
	require.NoError(t, err)
	assert.Equal(t, int64(len(file.content)), b.Size)
	sameContent(t, file, b)
	assert.Equal(t, cloud.BlobTypePage, b.Type)

	got, err := e.p.GetBlob(e.ctx, src)
	require.NoError(t, err)
	sameContent(t, file, got)
	assert.Equal(t, src.URL(), got.URL)
	footer, err := e.p.ReadBlob(e.ctx, src, b.Size-512, 512)
	require.NoError(t, err)
	if !e.dry { // a dry run reads zeros
		assert.Equal(t, "conectix", string(footer[:8]))
	}
	part, err := e.p.ReadBlob(e.ctx, src, b.Size-100, 1000)
	require.NoError(t, err)
	assert.Len(t, part, 100, "a read is clamped to the blob's end")

	// Within the account, to another container.
	c2 := "d" + e.id
	require.NoError(t, e.p.EnsureContainer(e.ctx, sa.Name, c2))
	require.NoError(t, e.p.EnsureContainer(e.ctx, sa.Name, c2), "ensuring a container twice is fine")
	dest := blobRef(sa, c2, "copy.vhd")
	cp, err := e.p.CopyBlob(e.ctx, src.URL(), dest, false)
	require.NoError(t, err)
	assert.Equal(t, b.Size, cp.Size)
	sameContent(t, file, cp)
	assert.Equal(t, cloud.BlobTypePage, cp.Type)
	data, err := e.p.ReadBlob(e.ctx, dest, 0, cp.Size)
	require.NoError(t, err)
	e.readsBack(file, data)

	_, err = e.p.CopyBlob(e.ctx, src.URL(), dest, false)
	requireCode(t, err, http.StatusConflict, cloud.CodeBlobAlreadyExists)
	_, err = e.p.CopyBlob(e.ctx, src.URL(), dest, true)
	require.NoError(t, err)

	// To another account.
	e.group("rg2")
	sa2 := e.account("rg2", OtherStorageAccount)
	c3 := "e" + e.id
	require.NoError(t, e.p.EnsureContainer(e.ctx, sa2.Name, c3))
	far := blobRef(sa2, c3, "far.vhd")
	cp, err = e.p.CopyBlob(e.ctx, src.URL(), far, false)
	require.NoError(t, err)
	sameContent(t, file, cp)
	data, err = e.p.ReadBlob(e.ctx, far, 0, cp.Size)
	require.NoError(t, err)
	e.readsBack(file, data)

	// Metadata: replaced; the digest stays (the content did not change).
	require.NoError(t, e.p.SetBlobMetadata(e.ctx, far, map[string]string{"imgflowsource": "v1"}))
	got, err = e.p.GetBlob(e.ctx, far)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"imgflowsource": "v1"}, got.Metadata)
	sameContent(t, file, got)

	// Delete.
	require.NoError(t, e.p.DeleteBlob(e.ctx, far))
	_, err = e.p.GetBlob(e.ctx, far)
	requireCode(t, err, http.StatusNotFound, cloud.CodeBlobNotFound)
	err = e.p.DeleteBlob(e.ctx, far)
	requireCode(t, err, http.StatusNotFound, cloud.CodeBlobNotFound)
}

func blobErrors(e *env) {
	t := e.t
	e.group("rg")
	sa, c := e.storage("rg")
	file := e.makeVHD(4)
	ref := blobRef(sa, c, "disk.vhd")
	_, err := e.upload(file, ref, false)
	require.NoError(t, err)

	_, err = e.upload(file, ref, false)
	requireCode(t, err, http.StatusConflict, cloud.CodeBlobAlreadyExists)
	b, err := e.upload(file, ref, true)
	require.NoError(t, err)
	sameContent(t, file, b)

	_, err = e.p.ReadBlob(e.ctx, ref, b.Size, 10)
	requireCode(t, err, http.StatusRequestedRangeNotSatisfiable, cloud.CodeInvalidRange)

	_, err = e.p.UploadPageBlob(e.ctx, blobRef(sa, c, "odd.vhd"), cloud.PageSource{Reader: bytes.NewReader(make([]byte, 1000)), Size: 1000}, false)
	requireCode(t, err, http.StatusBadRequest, cloud.CodeInvalidParameter)

	_, err = e.p.GetBlob(e.ctx, blobRef(sa, c, "missing.vhd"))
	requireCode(t, err, http.StatusNotFound, cloud.CodeBlobNotFound)
	_, err = e.p.GetBlob(e.ctx, blobRef(sa, "nocontainer"+e.id, "missing.vhd"))
	require.Error(t, err)
	assert.True(t, cloud.IsNotFound(err), "%v", err)

	_, err = e.p.CopyBlob(e.ctx, blobRef(sa, c, "missing.vhd").URL(), blobRef(sa, c, "copy.vhd"), false)
	requireCode(t, err, http.StatusNotFound, cloud.CodeCannotVerifyCopySource)
	_, err = e.p.GetBlob(e.ctx, blobRef(sa, c, "copy.vhd"))
	requireCode(t, err, http.StatusNotFound, cloud.CodeBlobNotFound, "a failed copy leaves nothing")

	// Errors about a SAS URL never show it.
	withSAS := blobRef(sa, c, "missing.vhd").URL() + "?sv=2018-03-28&sr=b&sig=c2VjcmV0c2lnbmF0dXJl"
	_, err = e.p.CopyBlob(e.ctx, withSAS, blobRef(sa, c, "copy2.vhd"), false)
	require.Error(t, err)
	noSAS(t, err.Error())
	assert.NotContains(t, err.Error(), "c2VjcmV0c2lnbmF0dXJl")
}

func withGallery(d cloud.ImageDefinition, g string) cloud.ImageDefinition {
	d.Gallery = g
	return d
}

// vmRunCommand: a VM of a version gets the OS disk its name asks for, and
// a script without a simulated form is accepted and fails to run on every
// target, as ARM records a managed run command in a VM that cannot run it
// (testdata/azure/contract/vm/12_run_command_create.json).
func vmRunCommand(e *env) {
	t := e.t
	e.group("rg")
	e.gallery("rg", "gal")
	e.definition("rg", "gal", "ubuntu", "2204")
	ver, _, _, _ := e.vhdVersion("rg", "gal", "ubuntu")
	vm, err := e.p.CreateVM(e.ctx, cloud.VM{Name: "vm", ResourceGroup: "rg", Location: Location, Size: "Standard_D2ds_v5", ImageID: ver.ID})
	require.NoError(t, err)
	assert.Equal(t, cloud.VMOSDiskName("vm"), vm.OSDiskName)
	assert.Equal(t, cloud.ProvisioningSucceeded, vm.ProvisioningState)
	if !e.dry {
		res, err := e.p.RunCommand(e.ctx, "rg", "vm", cloud.RunCommand{Name: "hello", Script: "echo hello", Timeout: time.Minute})
		require.NoError(t, err)
		assert.Equal(t, cloud.RunFailed, res.ExecutionState)
		assert.NotEmpty(t, res.Error, "the reason it could not run")
	}
	require.NoError(t, e.p.DeleteVM(e.ctx, "rg", "vm"))
	_, err = e.p.GetDisk(e.ctx, "rg", vm.OSDiskName)
	assert.True(t, cloud.IsNotFound(err), "the OS disk goes with the VM: %v", err)
}
