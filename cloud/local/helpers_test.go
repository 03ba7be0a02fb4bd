package local

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/cloudtest"
)

var (
	ctx       = context.Background()
	fixedTime = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
)

func testOptions() Options {
	return Options{Rand: rand.New(rand.NewSource(1)), Now: func() time.Time { return fixedTime }}
}

func newTestProvider(t *testing.T) *Provider {
	t.Helper()
	p, err := NewMemory(testOptions())
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, p.Close()) })
	return p
}

// fixture is a resource group with a gallery, a Gen2 Linux definition and
// a storage account with a "vhds" container holding a fixed VHD.
type fixture struct {
	p   *Provider
	sub string
	def cloud.ImageDefinition
	vhd cloud.BlobRef
}

const (
	rgName   = "rg1"
	galName  = "gal1"
	defName  = "flatcar-stable"
	account  = "imgflowstore"
	vhdBytes = 4 << 20 // virtual size of the fixture VHD
)

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return setupFixture(t, newTestProvider(t))
}

// setupFixture creates the fixture's resources in p.
func setupFixture(t *testing.T, p *Provider) *fixture {
	t.Helper()
	f := &fixture{p: p, sub: p.SubscriptionID()}
	_, err := p.CreateResourceGroup(ctx, cloud.ResourceGroup{Name: rgName, Location: "westeurope"})
	require.NoError(t, err)
	_, err = p.CreateGallery(ctx, cloud.Gallery{Name: galName, ResourceGroup: rgName, Location: "westeurope"})
	require.NoError(t, err)
	f.def = cloudtest.Definition(rgName, galName, defName, defName)
	_, err = p.CreateImageDefinition(ctx, f.def)
	require.NoError(t, err)
	_, err = p.CreateStorageAccount(ctx, cloud.StorageAccount{Name: account, ResourceGroup: rgName, Location: "westeurope"})
	require.NoError(t, err)
	require.NoError(t, p.EnsureContainer(ctx, account, "vhds"))
	f.vhd = cloud.BlobRef{Account: account, Container: "vhds", Name: "flatcar.vhd"}
	f.upload(t, f.vhd, cloudtest.FixedVHD(vhdBytes))
	return f
}

// upload writes data as a page blob (overwriting).
func (f *fixture) upload(t *testing.T, ref cloud.BlobRef, data []byte) *cloud.Blob {
	t.Helper()
	b, err := f.p.UploadPageBlob(ctx, ref, cloudtest.PageSource(data), true)
	require.NoError(t, err)
	return b
}

// vhdSource is a VHD source for the fixture blob.
func (f *fixture) vhdSource() cloud.ImageSource {
	return cloud.ImageSource{Kind: cloud.SourceVHD, URI: f.vhd.URL() + "?sv=2024&sig=secret",
		StorageAccountID: cloud.StorageAccountID(f.sub, rgName, account)}
}

func (f *fixture) version(name string) cloud.ImageVersion {
	return cloud.ImageVersion{Name: name, ResourceGroup: rgName, Gallery: galName, Definition: defName, Source: f.vhdSource()}
}

// diskAccount is the SAS host label of a disk: md- and 12 characters of
// the hash of its lowercased id.
func diskAccount(id string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(id)))
	return "md-" + hex.EncodeToString(sum[:])[:12]
}

func hashSig(sig string) string {
	sum := sha256.Sum256([]byte(sig))
	return hex.EncodeToString(sum[:])
}
