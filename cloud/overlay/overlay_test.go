package overlay_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand"
	"net/http"
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
	"github.com/imgflow/imgflow/cloud/conformance"
	"github.com/imgflow/imgflow/cloud/ensure"
	"github.com/imgflow/imgflow/cloud/local"
	"github.com/imgflow/imgflow/cloud/overlay"
	"github.com/imgflow/imgflow/vhd"
)

var (
	ctx = context.Background()
	now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
)

const (
	account  = "imgflowstore"
	vhdBytes = 4 << 20
)

// fixture is a seeded base: rg1 with gallery gal1 (Gen2 definition
// flatcar, version 1.0.0 from a VHD), storage account imgflowstore with
// container vhds holding that VHD; rg2 with gallery other and gallery
// shared, shared with the community under prefix flatcar.
type fixture struct {
	base   *local.Provider
	sub    string
	vhd    cloud.BlobRef
	def    cloud.ImageDefinition
	v1     *cloud.ImageVersion
	shared *cloud.Gallery
}

func newFixture(t *testing.T) *fixture { return newFixtureWith(t, local.Options{}) }

// twinOptions make bases built the same way identical: the same
// subscription, GUIDs and clock.
func twinOptions() local.Options {
	return local.Options{Rand: rand.New(rand.NewSource(1)), Now: func() time.Time { return now }}
}

func newFixtureWith(t *testing.T, opts local.Options) *fixture {
	t.Helper()
	base, err := local.NewMemory(opts)
	require.NoError(t, err)
	return seed(t, base)
}

// seed fills base with the fixture and closes it when the test ends.
func seed(t *testing.T, base *local.Provider) *fixture {
	t.Helper()
	var err error
	t.Cleanup(func() { assert.NoError(t, base.Close()) })
	f := &fixture{base: base, sub: base.SubscriptionID(), vhd: cloud.BlobRef{Account: account, Container: "vhds", Name: "flatcar.vhd"}}
	must := func(_ any, err error) { t.Helper(); require.NoError(t, err) }
	must(base.CreateResourceGroup(ctx, cloud.ResourceGroup{Name: "rg1", Location: "westeurope"}))
	must(base.CreateResourceGroup(ctx, cloud.ResourceGroup{Name: "rg2", Location: "westeurope"}))
	must(base.CreateGallery(ctx, cloud.Gallery{Name: "gal1", ResourceGroup: "rg1", Location: "westeurope"}))
	must(base.CreateGallery(ctx, cloud.Gallery{Name: "other", ResourceGroup: "rg2", Location: "westeurope"}))
	flatcar := cloudtest.Community("flatcar")
	must(base.CreateGallery(ctx, cloud.Gallery{Name: "shared", ResourceGroup: "rg2", Location: "westeurope", Community: &flatcar}))
	f.shared, err = base.ShareCommunity(ctx, "rg2", "shared")
	require.NoError(t, err)
	f.def = cloudtest.Definition("rg1", "gal1", "flatcar", "flatcar")
	must(base.CreateImageDefinition(ctx, f.def))
	must(base.CreateStorageAccount(ctx, cloud.StorageAccount{Name: account, ResourceGroup: "rg1", Location: "westeurope"}))
	require.NoError(t, base.EnsureContainer(ctx, account, "vhds"))
	must(base.UploadPageBlob(ctx, f.vhd, cloudtest.PageSource(cloudtest.FixedVHD(vhdBytes)), false))
	f.v1, err = base.CreateImageVersion(ctx, cloud.ImageVersion{Name: "1.0.0", ResourceGroup: "rg1", Gallery: "gal1", Definition: "flatcar", Source: f.vhdSource(f.vhd)})
	require.NoError(t, err)
	return f
}

// overlay returns an overlay over the fixture's base that fails the test
// on any write reaching the base.
func (f *fixture) overlay(t *testing.T) *overlay.Provider {
	return overlay.New(conformance.ReadOnly(t, f.base))
}

func (f *fixture) vhdSource(ref cloud.BlobRef) cloud.ImageSource {
	return cloud.ImageSource{Kind: cloud.SourceVHD, URI: ref.URL(), StorageAccountID: cloud.StorageAccountID(f.sub, "rg1", account)}
}

func (f *fixture) snapshot(t *testing.T) string {
	t.Helper()
	data, err := json.Marshal(f.base.Snapshot())
	require.NoError(t, err)
	blob, err := os.ReadFile(f.base.BlobPath(f.vhd))
	require.NoError(t, err)
	return string(data) + fmt.Sprintf("%x", blob)
}

// scenario runs ensures and writes through p and logs each step's outcome
// and result (or error), so two providers can be compared.
func scenario(t *testing.T, f *fixture, p cloud.Provider) map[string]string {
	log := map[string]string{}
	step := func(name string, v any, out cloud.Outcome, err error) {
		var ce *cloud.Error
		switch {
		case errors.As(err, &ce):
			log[name] = fmt.Sprintf("error %d %s", ce.StatusCode, ce.Code)
		case err != nil:
			log[name] = "error " + err.Error()
		default:
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			require.NoError(t, enc.Encode(v))
			log[name] = string(out) + " " + strings.TrimSpace(buf.String())
		}
	}
	do := func(name string, fn func() (any, cloud.Outcome, error)) {
		v, out, err := fn()
		step(name, v, out, err)
	}
	upload := cloud.BlobRef{Account: account, Container: "vhds", Name: "uploaded.vhd"}

	do("rg create", func() (any, cloud.Outcome, error) {
		return ensure.EnsureResourceGroup(ctx, p, cloud.ResourceGroup{Name: "rg-new", Location: "westeurope"})
	})
	do("rg again", func() (any, cloud.Outcome, error) {
		return ensure.EnsureResourceGroup(ctx, p, cloud.ResourceGroup{Name: "rg-new", Location: "westeurope"})
	})
	do("rg base other location", func() (any, cloud.Outcome, error) {
		return ensure.EnsureResourceGroup(ctx, p, cloud.ResourceGroup{Name: "rg1", Location: "eastus"})
	})
	do("gallery create", func() (any, cloud.Outcome, error) {
		return ensure.EnsureGallery(ctx, p, cloud.Gallery{Name: "galnew", ResourceGroup: "rg-new", Location: "westeurope"})
	})
	do("gallery again", func() (any, cloud.Outcome, error) {
		return ensure.EnsureGallery(ctx, p, cloud.Gallery{Name: "galnew", ResourceGroup: "rg-new", Location: "westeurope"})
	})
	do("gallery name in other rg", func() (any, cloud.Outcome, error) {
		return ensure.EnsureGallery(ctx, p, cloud.Gallery{Name: "other", ResourceGroup: "rg1", Location: "westeurope"})
	})
	do("gallery base description", func() (any, cloud.Outcome, error) {
		return ensure.EnsureGallery(ctx, p, cloud.Gallery{Name: "gal1", ResourceGroup: "rg1", Location: "westeurope", Description: "images"})
	})
	do("list galleries", func() (any, cloud.Outcome, error) { v, err := p.ListGalleries(ctx); return v, "", err })
	do("definition in overlay gallery", func() (any, cloud.Outcome, error) {
		return ensure.EnsureImageDefinition(ctx, p, cloudtest.Definition("rg-new", "galnew", "flatcar", "flatcar"), now)
	})
	do("definition again", func() (any, cloud.Outcome, error) {
		return ensure.EnsureImageDefinition(ctx, p, cloudtest.Definition("rg-new", "galnew", "flatcar", "flatcar"), now)
	})
	do("definition base immutable conflict", func() (any, cloud.Outcome, error) {
		d := cloudtest.Definition("rg1", "gal1", "flatcar", "flatcar")
		d.OSState = cloud.OSStateSpecialized
		return ensure.EnsureImageDefinition(ctx, p, d, now)
	})
	do("definition base feature update", func() (any, cloud.Outcome, error) {
		d := cloudtest.Definition("rg1", "gal1", "flatcar", "flatcar")
		d.Features = map[string]string{"IsAcceleratedNetworkSupported": "true"}
		return ensure.EnsureImageDefinition(ctx, p, d, now)
	})
	do("definition triple taken", func() (any, cloud.Outcome, error) {
		return ensure.EnsureImageDefinition(ctx, p, cloudtest.Definition("rg1", "gal1", "flatcar2", "flatcar"), now)
	})
	do("list definitions overlay gallery", func() (any, cloud.Outcome, error) {
		v, err := p.ListImageDefinitions(ctx, "rg-new", "galnew")
		return v, "", err
	})
	do("list definitions base gallery", func() (any, cloud.Outcome, error) {
		v, err := p.ListImageDefinitions(ctx, "rg1", "gal1")
		return v, "", err
	})
	do("upload vhd", func() (any, cloud.Outcome, error) {
		v, err := p.UploadPageBlob(ctx, upload, cloudtest.PageSource(cloudtest.FixedVHD(2*vhdBytes)), false)
		return v, "", err
	})
	do("upload again without overwrite", func() (any, cloud.Outcome, error) {
		v, err := p.UploadPageBlob(ctx, upload, cloudtest.PageSource(cloudtest.FixedVHD(2*vhdBytes)), false)
		return v, "", err
	})
	do("version from uploaded vhd", func() (any, cloud.Outcome, error) {
		return ensure.EnsureImageVersion(ctx, p, cloud.ImageVersion{Name: "1.0.0", ResourceGroup: "rg-new", Gallery: "galnew", Definition: "flatcar", Source: f.vhdSource(upload)}, now)
	})
	do("version from uploaded vhd again", func() (any, cloud.Outcome, error) {
		return ensure.EnsureImageVersion(ctx, p, cloud.ImageVersion{Name: "1.0.0", ResourceGroup: "rg-new", Gallery: "galnew", Definition: "flatcar", Source: f.vhdSource(upload)}, now)
	})
	do("version from base version", func() (any, cloud.Outcome, error) {
		return ensure.EnsureImageVersion(ctx, p, cloud.ImageVersion{Name: "2.0.0", ResourceGroup: "rg-new", Gallery: "galnew", Definition: "flatcar",
			Source: cloud.ImageSource{Kind: cloud.SourceImageVersion, ID: f.v1.ID}, TargetRegions: []cloud.TargetRegion{{Name: "westeurope"}, {Name: "northeurope"}}}, now)
	})
	do("version from base vhd", func() (any, cloud.Outcome, error) {
		return ensure.EnsureImageVersion(ctx, p, cloud.ImageVersion{Name: "3.0.0", ResourceGroup: "rg-new", Gallery: "galnew", Definition: "flatcar", Source: f.vhdSource(f.vhd)}, now)
	})
	do("version from missing blob", func() (any, cloud.Outcome, error) {
		src := f.vhdSource(cloud.BlobRef{Account: account, Container: "vhds", Name: "missing.vhd"})
		return ensure.EnsureImageVersion(ctx, p, cloud.ImageVersion{Name: "4.0.0", ResourceGroup: "rg-new", Gallery: "galnew", Definition: "flatcar", Source: src}, now)
	})
	do("version base other source", func() (any, cloud.Outcome, error) {
		return ensure.EnsureImageVersion(ctx, p, cloud.ImageVersion{Name: "1.0.0", ResourceGroup: "rg1", Gallery: "gal1", Definition: "flatcar", Source: f.vhdSource(upload)}, now)
	})
	do("replicate base version", func() (any, cloud.Outcome, error) {
		return ensure.Replicate(ctx, p, ensure.ReplicateRequest{ResourceGroup: "rg1", Gallery: "gal1", Definition: "flatcar", Version: "1.0.0", Regions: []string{"northeurope", "eastus"}})
	})
	do("wait replicated", func() (any, cloud.Outcome, error) {
		v, err := ensure.WaitReplicated(ctx, p, f.v1, time.Second, time.Millisecond, nil)
		return v, "", err
	})
	do("replicate again", func() (any, cloud.Outcome, error) {
		return ensure.Replicate(ctx, p, ensure.ReplicateRequest{ResourceGroup: "rg1", Gallery: "gal1", Definition: "flatcar", Version: "1.0.0", Regions: []string{"northeurope", "eastus"}})
	})
	do("community gallery create", func() (any, cloud.Outcome, error) {
		info := cloudtest.Community("imgflow")
		return ensure.EnsureGallery(ctx, p, cloud.Gallery{Name: "galcommunity", ResourceGroup: "rg-new", Location: "westeurope", Community: &info})
	})
	do("community overlay gallery", func() (any, cloud.Outcome, error) {
		return ensure.EnsureCommunity(ctx, p, "rg-new", "galcommunity")
	})
	do("community again", func() (any, cloud.Outcome, error) {
		return ensure.EnsureCommunity(ctx, p, "rg-new", "galcommunity")
	})
	do("community other prefix", func() (any, cloud.Outcome, error) {
		info := cloudtest.Community("other")
		return ensure.EnsureGallery(ctx, p, cloud.Gallery{Name: "galcommunity", ResourceGroup: "rg-new", Location: "westeurope", Community: &info})
	})
	do("community overlay private gallery", func() (any, cloud.Outcome, error) {
		return ensure.EnsureCommunity(ctx, p, "rg-new", "galnew")
	})
	do("community convert base private gallery", func() (any, cloud.Outcome, error) {
		info := cloudtest.Community("imgflow")
		v, err := p.CreateGallery(ctx, cloud.Gallery{Name: "gal1", ResourceGroup: "rg1", Location: "westeurope", Community: &info})
		return v, "", err
	})
	do("community base shared, new contact", func() (any, cloud.Outcome, error) {
		info := cloudtest.Community("flatcar")
		info.PublisherContact = "new@example.com"
		return ensure.EnsureGallery(ctx, p, cloud.Gallery{Name: "shared", ResourceGroup: "rg2", Location: "westeurope", Community: &info})
	})
	do("storage account create", func() (any, cloud.Outcome, error) {
		return ensure.EnsureStorageAccount(ctx, p, cloud.StorageAccount{Name: "planstore", ResourceGroup: "rg-new", Location: "westeurope"})
	})
	do("storage account name taken", func() (any, cloud.Outcome, error) {
		v, err := p.CreateStorageAccount(ctx, cloud.StorageAccount{Name: account, ResourceGroup: "rg2"})
		return v, "", err
	})
	do("container in new account", func() (any, cloud.Outcome, error) {
		return nil, "", p.EnsureContainer(ctx, "planstore", "vhds")
	})
	do("blob in new container", func() (any, cloud.Outcome, error) {
		v, err := p.GetBlob(ctx, cloud.BlobRef{Account: "planstore", Container: "vhds", Name: "x.vhd"})
		return v, "", err
	})
	do("blob in container nobody has", func() (any, cloud.Outcome, error) {
		v, err := p.GetBlob(ctx, cloud.BlobRef{Account: account, Container: "nope", Name: "x.vhd"})
		return v, "", err
	})
	do("copy base vhd to new account", func() (any, cloud.Outcome, error) {
		v, err := p.CopyBlob(ctx, f.vhd.URL()+"?sv=1&sig=secret", cloud.BlobRef{Account: "planstore", Container: "vhds", Name: "copy.vhd"}, false)
		return v, "", err
	})
	do("managed image from base version", func() (any, cloud.Outcome, error) {
		return ensure.EnsureManagedImage(ctx, p, cloud.ManagedImage{Name: "img", ResourceGroup: "rg-new", Location: "westeurope", OSType: cloud.OSTypeLinux, HyperVGeneration: cloud.HyperVGenV2,
			Source: cloud.ImageSource{Kind: cloud.SourceImageVersion, ID: f.v1.ID}})
	})
	do("managed image again", func() (any, cloud.Outcome, error) {
		return ensure.EnsureManagedImage(ctx, p, cloud.ManagedImage{Name: "img", ResourceGroup: "rg-new", Location: "westeurope", OSType: cloud.OSTypeLinux, HyperVGeneration: cloud.HyperVGenV2,
			Source: cloud.ImageSource{Kind: cloud.SourceImageVersion, ID: f.v1.ID}})
	})
	do("definition missing gallery", func() (any, cloud.Outcome, error) {
		v, err := p.CreateImageDefinition(ctx, cloudtest.Definition("rg-new", "nogallery", "d", "d"))
		return v, "", err
	})
	do("definition missing rg", func() (any, cloud.Outcome, error) {
		v, err := p.CreateImageDefinition(ctx, cloudtest.Definition("norg", "nogallery", "d", "d"))
		return v, "", err
	})
	do("version missing definition", func() (any, cloud.Outcome, error) {
		v, err := p.CreateImageVersion(ctx, cloud.ImageVersion{Name: "1.0.0", ResourceGroup: "rg-new", Gallery: "galnew", Definition: "nodef", Source: f.vhdSource(f.vhd)})
		return v, "", err
	})
	do("get version in rg without gallery", func() (any, cloud.Outcome, error) {
		v, err := p.GetImageVersion(ctx, "rg-new", "nogallery", "d", "1.0.0")
		return v, "", err
	})
	do("get definition missing in overlay gallery", func() (any, cloud.Outcome, error) {
		v, err := p.GetImageDefinition(ctx, "rg-new", "galnew", "nodef")
		return v, "", err
	})
	do("delete base version", func() (any, cloud.Outcome, error) {
		return nil, "", p.DeleteImageVersion(ctx, "rg1", "gal1", "flatcar", "1.0.0")
	})
	do("get deleted base version", func() (any, cloud.Outcome, error) {
		v, err := p.GetImageVersion(ctx, "rg1", "gal1", "flatcar", "1.0.0")
		return v, "", err
	})
	return log
}

// TestDryRunPredictsTheRun runs the same ensures through the overlay over
// one base and for real on its twin (same subscription, GUIDs and clock):
// every outcome, result and error code is the same but for what only the
// platform generates (the GUID of a new community public name), and the
// overlay's base is untouched.
func TestDryRunPredictsTheRun(t *testing.T) {
	f := newFixtureWith(t, twinOptions())
	twin := newFixtureWith(t, twinOptions())
	require.Equal(t, f.sub, twin.sub)
	before := f.snapshot(t)
	p := f.overlay(t)
	got := scenario(t, f, p)
	want := scenario(t, twin, twin.base)
	require.Len(t, got, len(want))
	newGUID := regexp.MustCompile(`[a-z]+-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	for name, w := range want {
		w = newGUID.ReplaceAllStringFunc(w, func(s string) string {
			if strings.Contains(s, twin.shared.PublicName()) {
				return s // shared before the dry run: the overlay reads it
			}
			return s[:strings.IndexByte(s, '-')+1] + local.PendingGUID
		})
		assert.Equal(t, w, got[name], "step %q", name)
	}
	assert.Equal(t, before, f.snapshot(t), "base changed")

	prefix := func(step, want string) {
		t.Helper()
		assert.True(t, strings.HasPrefix(got[step], want), "step %q: want %q…, got %s", step, want, got[step])
	}
	prefix("rg create", "created ")
	prefix("rg again", "exists ")
	prefix("rg base other location", "error resource group \"rg1\" already exists in westeurope")
	prefix("gallery create", "created ")
	prefix("gallery again", "exists ")
	prefix("gallery name in other rg", "error gallery \"other\" already exists in resource group \"rg2\"")
	prefix("gallery base description", "updated ")
	prefix("definition in overlay gallery", "created ")
	prefix("definition again", "exists ")
	prefix("definition base immutable conflict", "error image definition \"flatcar\" already exists with different immutable properties (os_state")
	prefix("definition base feature update", "updated ")
	prefix("upload again without overwrite", "error 409 BlobAlreadyExists")
	prefix("version from uploaded vhd", "created ")
	prefix("version from uploaded vhd again", "exists ")
	prefix("version from base version", "created ")
	prefix("version from base vhd", "created ")
	prefix("version from missing blob", "error 404 BlobNotFound")
	prefix("version base other source", "error image version 1.0.0 of flatcar already exists from another source")
	prefix("replicate base version", "updated ")
	prefix("wait replicated", " ")
	prefix("replicate again", "exists ")
	prefix("community gallery create", "created ")
	prefix("community overlay gallery", "created ")
	assert.Contains(t, got["community overlay gallery"], `"public_names":["imgflow-`+local.PendingGUID+`"]`)
	prefix("community again", "exists ")
	prefix("community other prefix", "error community gallery \"galcommunity\" has the public name prefix \"imgflow\"")
	prefix("community overlay private gallery", "error gallery \"galnew\" is a private gallery")
	prefix("community convert base private gallery", "error 409 PropertyChangeNotAllowed")
	prefix("community base shared, new contact", "updated ")
	assert.Contains(t, got["community base shared, new contact"], `"publisher_contact":"new@example.com"`)
	assert.Contains(t, got["community base shared, new contact"], `"public_names":["`+f.shared.PublicName()+`"]`)
	prefix("storage account name taken", "error 409 StorageAccountAlreadyTaken")
	prefix("blob in new container", "error 404 BlobNotFound")
	prefix("blob in container nobody has", "error 404 ContainerNotFound")
	prefix("managed image again", "exists ")
	prefix("definition missing gallery", "error 404 ParentResourceNotFound")
	prefix("definition missing rg", "error 404 ResourceGroupNotFound")
	prefix("version missing definition", "error 404 ParentResourceNotFound")
	prefix("get version in rg without gallery", "error 404 ParentResourceNotFound")
	prefix("get definition missing in overlay gallery", "error 404 ResourceNotFound")
	prefix("get deleted base version", "error 404 ResourceNotFound")

	// The base still has what the overlay deleted.
	_, err := f.base.GetImageVersion(ctx, "rg1", "gal1", "flatcar", "1.0.0")
	require.NoError(t, err)
}

// TestBaseNeverChanged calls every write method through the overlay, on
// overlay and base resources: nothing reaches the base (the readOnly
// wrapper fails the test otherwise) and its state and data are unchanged.
func TestBaseNeverChanged(t *testing.T) {
	f := newFixture(t)
	before := f.snapshot(t)
	p := f.overlay(t)
	scenario(t, f, p)

	must := func(_ any, err error) { t.Helper(); require.NoError(t, err) }
	must(p.CreateResourceGroup(ctx, cloud.ResourceGroup{Name: "rg1", Location: "westeurope", Tags: cloud.Tags{"a": "b"}}))
	must(p.CreateGallery(ctx, cloud.Gallery{Name: "gal2", ResourceGroup: "rg1"}))
	profile := cloudtest.Community("galthree")
	must(p.CreateGallery(ctx, cloud.Gallery{Name: "gal3", ResourceGroup: "rg1", Community: &profile}))
	must(p.ShareCommunity(ctx, "rg1", "gal3"))
	flatcar := cloudtest.Community("flatcar")
	flatcar.EULA = "https://example.com/new-eula"
	must(p.CreateGallery(ctx, cloud.Gallery{Name: "shared", ResourceGroup: "rg2", Community: &flatcar}))
	must(p.ShareCommunity(ctx, "rg2", "shared"))
	must(p.CreateImageDefinition(ctx, cloudtest.Definition("rg1", "gal1", "extra", "extra")))
	require.NoError(t, p.DeleteImageDefinition(ctx, "rg1", "gal1", "extra"))
	must(p.CreateImageVersion(ctx, cloud.ImageVersion{Name: "1.0.1", ResourceGroup: "rg1", Gallery: "gal1", Definition: "flatcar", Source: f.vhdSource(f.vhd)}))
	must(p.UpdateImageVersion(ctx, cloud.ImageVersion{Name: "1.0.1", ResourceGroup: "rg1", Gallery: "gal1", Definition: "flatcar", ExcludeFromLatest: true}))
	require.NoError(t, p.DeleteImageVersion(ctx, "rg1", "gal1", "flatcar", "1.0.1"))
	must(p.CreateManagedImage(ctx, cloud.ManagedImage{Name: "img1", ResourceGroup: "rg1", OSType: cloud.OSTypeLinux, Source: f.vhdSource(f.vhd)}))
	require.NoError(t, p.DeleteManagedImage(ctx, "rg1", "img1"))
	must(p.CreateStorageAccount(ctx, cloud.StorageAccount{Name: account, ResourceGroup: "rg1", Tags: cloud.Tags{"a": "b"}}))
	// The definition made from a base definition and deleted from base.
	must(p.CreateImageDefinition(ctx, cloudtest.Definition("rg1", "gal1", "gone", "gone")))
	// Blob writes on base blobs.
	require.NoError(t, p.EnsureContainer(ctx, account, "vhds"))
	require.NoError(t, p.SetBlobMetadata(ctx, f.vhd, map[string]string{"exported": "yes"}))
	must(p.UploadPageBlob(ctx, f.vhd, cloudtest.PageSource(make([]byte, 1024)), true))
	must(p.CopyBlob(ctx, f.vhd.URL(), cloud.BlobRef{Account: account, Container: "vhds", Name: "copy.vhd"}, false))
	require.NoError(t, p.DeleteBlob(ctx, f.vhd))
	_, err := p.GetBlob(ctx, f.vhd)
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeBlobNotFound)
	// Disks.
	_, err = p.CreateDiskFromImageVersion(ctx, cloud.Disk{Name: "disk1", ResourceGroup: "rg1", SourceImageVersionID: f.v1.ID})
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeResourceNotFound) // deleted in the overlay by the scenario
	must(p.CreateDiskFromImageVersion(ctx, cloud.Disk{Name: "disk1", ResourceGroup: "rg1",
		SourceImageVersionID: cloud.ImageVersionID(f.sub, "rg-new", "galnew", "flatcar", "2.0.0")}))
	must(p.GrantDiskAccess(ctx, "rg1", "disk1", time.Hour))
	require.NoError(t, p.RevokeDiskAccess(ctx, "rg1", "disk1"))
	require.NoError(t, p.DeleteDisk(ctx, "rg1", "disk1"))

	assert.Equal(t, before, f.snapshot(t), "base changed")
	_, err = f.base.GetBlob(ctx, f.vhd)
	require.NoError(t, err, "the base blob is still there")

	changes := p.Changes()
	require.NotEmpty(t, changes)
	assert.Equal(t, cloud.Change{Op: cloud.OpCreate, Kind: cloud.KindResourceGroup, ID: cloud.ResourceGroupID(f.sub, "rg-new")}, changes[0])
	assert.Equal(t, cloud.Change{Op: cloud.OpDelete, Kind: cloud.KindDisk, ID: cloud.DiskID(f.sub, "rg1", "disk1")}, changes[len(changes)-1])
	for _, c := range changes {
		assert.Contains(t, []string{cloud.OpCreate, cloud.OpUpdate, cloud.OpDelete}, c.Op)
		assert.NotEmpty(t, c.Kind)
		assert.NotContains(t, c.ID, "secret")
	}
}

// TestDiskExport is sig_to_vhd's path over the overlay: a disk from a base
// version, a grant, a copy of the placeholder URL into a blob.
func TestDiskExport(t *testing.T) {
	f := newFixture(t)
	before := f.snapshot(t)
	p := f.overlay(t)

	disk, err := p.CreateDiskFromImageVersion(ctx, cloud.Disk{Name: "export", ResourceGroup: "rg1", SourceImageVersionID: f.v1.ID})
	require.NoError(t, err)
	assert.Equal(t, int64(vhdBytes+512), disk.SizeBytes)
	assert.Equal(t, "westeurope", disk.Location)
	assert.Equal(t, cloud.HyperVGenV2, disk.HyperVGeneration)

	_, err = p.CreateDiskFromImageVersion(ctx, cloud.Disk{Name: "elsewhere", ResourceGroup: "rg1", Location: "eastus", SourceImageVersionID: f.v1.ID})
	cloudtest.RequireError(t, err, http.StatusBadRequest, cloud.CodeInvalidParameter)

	sas, err := p.GrantDiskAccess(ctx, "rg1", "export", time.Hour)
	require.NoError(t, err)
	assert.Equal(t, "https://md-pending.blob.core.windows.net/export/abcd?sig=<pending>", sas)
	_, err = p.GrantDiskAccess(ctx, "rg1", "export", time.Hour)
	cloudtest.RequireError(t, err, http.StatusConflict, cloud.CodeOperationNotAllowed)
	got, err := p.GetDisk(ctx, "rg1", "export")
	require.NoError(t, err)
	assert.True(t, got.AccessGranted)

	srcRef, err := cloud.ParseBlobURL(sas)
	require.NoError(t, err)
	src, err := p.GetBlob(ctx, srcRef)
	require.NoError(t, err)
	assert.Equal(t, disk.SizeBytes, src.Size)

	require.NoError(t, p.EnsureContainer(ctx, account, "exports"))
	dest := cloud.BlobRef{Account: account, Container: "exports", Name: "export.vhd"}
	_, err = p.GetBlob(ctx, dest)
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeBlobNotFound)
	copied, err := p.CopyBlob(ctx, sas, dest, false)
	require.NoError(t, err)
	assert.Equal(t, disk.SizeBytes, copied.Size)
	b, err := p.GetBlob(ctx, dest)
	require.NoError(t, err)
	assert.Equal(t, disk.SizeBytes, b.Size)
	assert.Equal(t, cloud.BlobTypePage, b.Type)
	footer, err := p.ReadBlob(ctx, dest, b.Size-512, 4096)
	require.NoError(t, err)
	assert.Equal(t, make([]byte, 512), footer, "overlay data reads as zeros, capped at the blob's end")
	_, err = p.ReadBlob(ctx, dest, b.Size, 1)
	cloudtest.RequireError(t, err, http.StatusRequestedRangeNotSatisfiable, cloud.CodeInvalidRange)
	require.NoError(t, p.SetBlobMetadata(ctx, dest, map[string]string{"imgflow": "export"}))

	// A version from the exported VHD works too.
	_, out, err := ensure.EnsureImageVersion(ctx, p, cloud.ImageVersion{Name: "9.0.0", ResourceGroup: "rg1", Gallery: "gal1", Definition: "flatcar", Source: f.vhdSource(dest)}, now)
	require.NoError(t, err)
	assert.Equal(t, cloud.Created, out)

	_, err = p.GetBlob(ctx, cloud.BlobRef{Account: "md-pending", Container: "other", Name: "abcd"})
	cloudtest.RequireError(t, err, http.StatusForbidden, cloud.CodeAuthenticationFailed)
	require.ErrorContains(t, p.DeleteDisk(ctx, "rg1", "export"), "revoke access first")
	require.NoError(t, p.RevokeDiskAccess(ctx, "rg1", "export"))
	_, err = p.CopyBlob(ctx, sas, cloud.BlobRef{Account: account, Container: "exports", Name: "again.vhd"}, false)
	cloudtest.RequireError(t, err, http.StatusForbidden, cloud.CodeAuthenticationFailed)
	require.NoError(t, p.DeleteDisk(ctx, "rg1", "export"))
	_, err = p.GetDisk(ctx, "rg1", "export")
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeResourceNotFound)

	diskID := cloud.DiskID(f.sub, "rg1", "export")
	exportsURL := cloud.DefaultBlobEndpoint(account) + "/exports"
	assert.Equal(t, []cloud.Change{
		{Op: cloud.OpCreate, Kind: cloud.KindDisk, ID: diskID},
		{Op: cloud.OpCreate, Kind: cloud.KindDiskAccess, ID: diskID},
		{Op: cloud.OpCreate, Kind: cloud.KindContainer, ID: exportsURL},
		{Op: cloud.OpCreate, Kind: cloud.KindBlob, ID: dest.URL()},
		{Op: cloud.OpUpdate, Kind: cloud.KindBlob, ID: dest.URL()},
		{Op: cloud.OpCreate, Kind: cloud.KindImageVersion, ID: cloud.ImageVersionID(f.sub, "rg1", "gal1", "flatcar", "9.0.0")},
		{Op: cloud.OpDelete, Kind: cloud.KindDiskAccess, ID: diskID},
		{Op: cloud.OpDelete, Kind: cloud.KindDisk, ID: diskID},
	}, p.Changes())
	assert.Equal(t, before, f.snapshot(t), "base changed")
}

func TestBlobs(t *testing.T) {
	f := newFixture(t)
	p := f.overlay(t)
	baseBlob, err := f.base.GetBlob(ctx, f.vhd)
	require.NoError(t, err)
	require.NotEmpty(t, baseBlob.Digest)

	// Identical content gets the digest the target computes, without data.
	ref := cloud.BlobRef{Account: account, Container: "vhds", Name: "same.vhd"}
	up, err := p.UploadPageBlob(ctx, ref, cloudtest.PageSource(cloudtest.FixedVHD(vhdBytes)), false)
	require.NoError(t, err)
	assert.Equal(t, baseBlob.Digest, up.Digest)
	assert.Equal(t, baseBlob.Size, up.Size)
	// Sparse: only the ranges hold data, the rest is zeros.
	data := cloudtest.FixedVHD(vhdBytes)
	sparse := cloud.PageSource{Reader: bytes.NewReader(data), Size: int64(len(data)),
		Ranges: []vhd.Range{{Offset: 0, Length: 512}, {Offset: vhdBytes, Length: 512}}}
	up2, err := p.UploadPageBlob(ctx, cloud.BlobRef{Account: account, Container: "vhds", Name: "sparse.vhd"}, sparse, false)
	require.NoError(t, err)
	assert.Equal(t, baseBlob.Digest, up2.Digest)
	_, err = p.UploadPageBlob(ctx, ref, cloud.PageSource{Size: 1000}, true)
	cloudtest.RequireError(t, err, http.StatusBadRequest, cloud.CodeInvalidParameter)

	// Metadata on a base blob: the overlay's copy has it and still reads
	// the base's content.
	require.NoError(t, p.SetBlobMetadata(ctx, f.vhd, map[string]string{"k": "v"}))
	b, err := p.GetBlob(ctx, f.vhd)
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"k": "v"}, b.Metadata)
	assert.Equal(t, baseBlob.Digest, b.Digest)
	head, err := p.ReadBlob(ctx, f.vhd, 0, 11)
	require.NoError(t, err)
	assert.Equal(t, "boot sector", string(head))
	bb, err := f.base.GetBlob(ctx, f.vhd)
	require.NoError(t, err)
	assert.Empty(t, bb.Metadata)

	// Containers: a base container is not recorded again; one in an
	// account nobody has fails.
	require.NoError(t, p.EnsureContainer(ctx, account, "vhds"))
	assert.Empty(t, changesOf(p, cloud.KindContainer))
	cloudtest.RequireError(t, p.EnsureContainer(ctx, "nosuchaccount", "c"), http.StatusNotFound, cloud.CodeResourceNotFound)
	_, err = p.CopyBlob(ctx, cloud.BlobRef{Account: account, Container: "vhds", Name: "missing"}.URL(), cloud.BlobRef{Account: account, Container: "vhds", Name: "x"}, false)
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeCannotVerifyCopySource)
	_, err = p.UploadPageBlob(ctx, cloud.BlobRef{Account: account, Container: "nope", Name: "x"}, cloudtest.PageSource(make([]byte, 512)), false)
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeContainerNotFound)
}

func changesOf(p *overlay.Provider, kind string) []cloud.Change {
	var out []cloud.Change
	for _, c := range p.Changes() {
		if c.Kind == kind {
			out = append(out, c)
		}
	}
	return out
}

func TestListsAndDeletes(t *testing.T) {
	f := newFixture(t)
	p := f.overlay(t)
	_, err := p.CreateGallery(ctx, cloud.Gallery{Name: "Alpha", ResourceGroup: "rg1"})
	require.NoError(t, err)
	_, err = p.CreateGallery(ctx, cloud.Gallery{Name: "GAL1", ResourceGroup: "rg1", Description: "renamed? no: same gallery"})
	require.NoError(t, err)
	all, err := p.ListGalleries(ctx)
	require.NoError(t, err)
	var names []string
	for _, g := range all {
		names = append(names, g.Name)
	}
	assert.Equal(t, []string{"Alpha", "gal1", "other", "shared"}, names, "merged, sorted, the base's spelling kept")
	assert.Equal(t, "renamed? no: same gallery", all[1].Description)

	// A definition deleted in the overlay disappears from lists; one
	// holding overlay versions cannot be deleted.
	_, err = p.CreateImageDefinition(ctx, cloudtest.Definition("rg1", "gal1", "extra", "extra"))
	require.NoError(t, err)
	_, err = p.CreateImageVersion(ctx, cloud.ImageVersion{Name: "1.0.0", ResourceGroup: "rg1", Gallery: "gal1", Definition: "extra", Source: f.vhdSource(f.vhd)})
	require.NoError(t, err)
	cloudtest.RequireError(t, p.DeleteImageDefinition(ctx, "rg1", "gal1", "extra"), http.StatusConflict, cloud.CodeConflict)
	require.NoError(t, p.DeleteImageVersion(ctx, "rg1", "gal1", "extra", "1.0.0"))
	require.NoError(t, p.DeleteImageDefinition(ctx, "rg1", "gal1", "extra"))
	defs, err := p.ListImageDefinitions(ctx, "rg1", "gal1")
	require.NoError(t, err)
	require.Len(t, defs, 1)
	assert.Equal(t, "flatcar", defs[0].Name)
	_, err = p.GetImageVersion(ctx, "rg1", "gal1", "extra", "1.0.0")
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeParentResourceNotFound)
	_, err = p.ListImageDefinitions(ctx, "rg1", "nogallery")
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeParentResourceNotFound)

	// Definition identity is immutable at the provider level too.
	d := f.def
	d.Architecture = cloud.ArchArm64
	_, err = p.CreateImageDefinition(ctx, d)
	cloudtest.RequireError(t, err, http.StatusConflict, cloud.CodePropertyChangeNotAllowed)
	_, err = p.CreateGallery(ctx, cloud.Gallery{Name: "gal1", ResourceGroup: "rg1", Location: "eastus"})
	cloudtest.RequireError(t, err, http.StatusConflict, cloud.CodeInvalidResourceLocation)
	_, err = p.CreateResourceGroup(ctx, cloud.ResourceGroup{Name: "rgx", Location: "europe"})
	cloudtest.RequireError(t, err, http.StatusBadRequest, cloud.CodeLocationNotAvailableForResourceType)
}

// TestConcurrentEnsures runs ensures in parallel, as parallel() branches
// do; run with -race.
func TestConcurrentEnsures(t *testing.T) {
	f := newFixture(t)
	before := f.snapshot(t)
	p := f.overlay(t)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 16 {
		wg.Go(func() {
			run := func() error {
				if _, _, err := ensure.EnsureResourceGroup(ctx, p, cloud.ResourceGroup{Name: "rgpar", Location: "westeurope"}); err != nil {
					return err
				}
				if _, _, err := ensure.EnsureGallery(ctx, p, cloud.Gallery{Name: "galpar", ResourceGroup: "rgpar", Location: "westeurope"}); err != nil {
					return err
				}
				name := fmt.Sprintf("def%d", i%4)
				if _, _, err := ensure.EnsureImageDefinition(ctx, p, cloudtest.Definition("rgpar", "galpar", name, name), now); err != nil {
					return err
				}
				v := cloud.ImageVersion{Name: fmt.Sprintf("1.0.%d", i), ResourceGroup: "rgpar", Gallery: "galpar", Definition: name,
					Source: cloud.ImageSource{Kind: cloud.SourceImageVersion, ID: f.v1.ID}}
				if _, _, err := ensure.EnsureImageVersion(ctx, p, v, now); err != nil {
					return err
				}
				ref := cloud.BlobRef{Account: account, Container: "vhds", Name: fmt.Sprintf("b%d.vhd", i)}
				if _, err := p.UploadPageBlob(ctx, ref, cloudtest.PageSource(cloudtest.FixedVHD(1<<20)), false); err != nil {
					return err
				}
				_, err := p.ListGalleries(ctx)
				return err
			}
			if err := run(); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	defs, err := p.ListImageDefinitions(ctx, "rgpar", "galpar")
	require.NoError(t, err)
	assert.Len(t, defs, 4)
	for i := range 16 {
		v, err := p.GetImageVersion(ctx, "rgpar", "galpar", fmt.Sprintf("def%d", i%4), fmt.Sprintf("1.0.%d", i))
		require.NoError(t, err)
		assert.Equal(t, f.v1.SizeBytes, v.SizeBytes)
	}
	assert.Len(t, changesOf(p, cloud.KindImageVersion), 16)
	assert.Equal(t, before, f.snapshot(t), "base changed")
}

// files lists every file under dir with its size and modification time.
func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out[path] = fmt.Sprintf("%d %s", fi.Size(), fi.ModTime())
		return nil
	}))
	return out
}

// TestPersistentBaseKeepsItsFiles dry-runs over the local target's state
// directory, as `imgflow plan` does: state.json and every data file stay
// as they were (no container directory, blob or data file is written, a
// deleted blob keeps its file), base blobs keep their VHD footer checks,
// and blobs the dry run uploaded are taken for fixed VHDs of their size.
func TestPersistentBaseKeepsItsFiles(t *testing.T) {
	dir := t.TempDir()
	base, err := local.Open(dir, local.Options{})
	require.NoError(t, err)
	f := seed(t, base)
	dynamic := cloud.BlobRef{Account: account, Container: "vhds", Name: "dynamic.vhd"}
	dyn := cloudtest.FixedVHD(vhdBytes)
	binary.BigEndian.PutUint32(dyn[vhdBytes+60:], 3)
	_, err = base.UploadPageBlob(ctx, dynamic, cloudtest.PageSource(dyn), false)
	require.NoError(t, err)
	stateFile, err := os.ReadFile(filepath.Join(dir, "state.json"))
	require.NoError(t, err)
	before := files(t, dir)

	p := f.overlay(t)
	scenario(t, f, p)
	require.NoError(t, p.EnsureContainer(ctx, account, "drycontainer"))
	uploaded := cloud.BlobRef{Account: account, Container: "drycontainer", Name: "new.vhd"}
	_, err = p.UploadPageBlob(ctx, uploaded, cloudtest.PageSource(dyn), false) // a dynamic VHD, unread
	require.NoError(t, err)
	v, err := p.CreateImageVersion(ctx, cloud.ImageVersion{Name: "3.0.0", ResourceGroup: "rg1", Gallery: "gal1", Definition: "flatcar", Source: f.vhdSource(uploaded)})
	require.NoError(t, err)
	assert.Equal(t, int64(vhdBytes), v.SizeBytes)
	_, err = p.CreateImageVersion(ctx, cloud.ImageVersion{Name: "3.0.1", ResourceGroup: "rg1", Gallery: "gal1", Definition: "flatcar", Source: f.vhdSource(dynamic)})
	cloudtest.RequireError(t, err, http.StatusBadRequest, cloud.CodeInvalidParameter)
	assert.ErrorContains(t, err, "Dynamic VHD type")
	require.NoError(t, p.DeleteBlob(ctx, dynamic))

	after, err := os.ReadFile(filepath.Join(dir, "state.json"))
	require.NoError(t, err)
	assert.Equal(t, string(stateFile), string(after))
	assert.Equal(t, before, files(t, dir))
}
