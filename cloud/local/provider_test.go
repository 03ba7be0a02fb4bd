package local

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/cloudtest"
)

func TestLocations(t *testing.T) {
	p := newTestProvider(t)
	locs, err := p.ListLocations(ctx)
	require.NoError(t, err)
	byName := map[string]cloud.Location{}
	physical, logical := 0, 0
	for _, l := range locs {
		byName[l.Name] = l
		if l.RegionType == cloud.RegionTypeLogical {
			logical++
			assert.Equal(t, "Other", l.Category)
		} else {
			physical++
		}
	}
	assert.GreaterOrEqual(t, physical, 55)
	assert.GreaterOrEqual(t, logical, 10)
	assert.Len(t, byName, len(locs), "no duplicates")
	for _, name := range []string{"eastus", "eastus2", "westus", "westus2", "westus3", "centralus", "northcentralus",
		"southcentralus", "westcentralus", "canadacentral", "canadaeast", "brazilsouth", "brazilsoutheast",
		"northeurope", "westeurope", "uksouth", "ukwest", "francecentral", "francesouth", "germanywestcentral",
		"germanynorth", "norwayeast", "norwaywest", "switzerlandnorth", "switzerlandwest", "swedencentral",
		"polandcentral", "italynorth", "spaincentral", "eastasia", "southeastasia", "japaneast", "japanwest",
		"koreacentral", "koreasouth", "australiaeast", "australiasoutheast", "australiacentral",
		"australiacentral2", "centralindia", "southindia", "westindia", "jioindiacentral", "jioindiawest",
		"uaenorth", "uaecentral", "southafricanorth", "southafricawest", "qatarcentral", "israelcentral",
		"mexicocentral", "newzealandnorth", "centraluseuap", "eastus2euap"} {
		l, ok := byName[name]
		if assert.True(t, ok, name) {
			assert.Equal(t, cloud.RegionTypePhysical, l.RegionType, name)
			assert.NotEmpty(t, l.DisplayName, name)
		}
	}
	for _, name := range []string{"unitedstates", "europe", "asia", "asiapacific", "uk", "global", "brazil", "canada", "japan"} {
		assert.Equal(t, cloud.RegionTypeLogical, byName[name].RegionType, name)
	}
	assert.Equal(t, "Recommended", byName["westeurope"].Category)

	custom, err := NewMemory(Options{Locations: []cloud.Location{{Name: "here", DisplayName: "Here", RegionType: cloud.RegionTypePhysical}}})
	require.NoError(t, err)
	defer custom.Close()
	_, err = custom.CreateResourceGroup(ctx, cloud.ResourceGroup{Name: "rg", Location: "westeurope"})
	require.Error(t, err)
	_, err = custom.CreateResourceGroup(ctx, cloud.ResourceGroup{Name: "rg", Location: "here"})
	require.NoError(t, err)
}

func TestSubscriptionAndTarget(t *testing.T) {
	p := newTestProvider(t)
	assert.Equal(t, "local", p.Target())
	assert.Regexp(t, regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`), p.SubscriptionID())
	q, err := NewMemory(Options{})
	require.NoError(t, err)
	defer q.Close()
	assert.NotEqual(t, p.SubscriptionID(), q.SubscriptionID())
}

func TestPersistence(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	p, err := Open(dir, testOptions())
	require.NoError(t, err)
	f := &fixture{p: p, sub: p.SubscriptionID()}
	populate(t, f)
	before := p.Snapshot()
	require.NoError(t, p.Close())
	require.NoError(t, p.Close(), "closing twice is harmless")
	_, err = p.GetGallery(ctx, rgName, galName)
	require.ErrorIs(t, err, errClosed)

	assert.FileExists(t, filepath.Join(dir, "state.json"))
	assert.FileExists(t, filepath.Join(dir, "blobs", account, "vhds", "flatcar.vhd"))

	// Reopened (with another Rand): same subscription, same state.
	q, err := Open(dir, Options{})
	require.NoError(t, err)
	defer q.Close()
	assert.Equal(t, f.sub, q.SubscriptionID())
	assert.Equal(t, before, q.Snapshot())
	v, err := q.GetImageVersion(ctx, rgName, galName, defName, "1.0.0")
	require.NoError(t, err)
	assert.Equal(t, []string{"westeurope", "eastus"}, v.RegionNames())
	data, err := q.ReadBlob(ctx, f.vhd, 0, 11)
	require.NoError(t, err)
	assert.Equal(t, "boot sector", string(data))
}

// populate creates one of everything through the fixture's provider.
func populate(t *testing.T, f *fixture) {
	t.Helper()
	p := f.p
	_, err := p.CreateResourceGroup(ctx, cloud.ResourceGroup{Name: rgName, Location: "westeurope", Tags: cloud.Tags{"a": "b"}})
	require.NoError(t, err)
	info := community
	_, err = p.CreateGallery(ctx, cloud.Gallery{Name: galName, ResourceGroup: rgName, Community: &info})
	require.NoError(t, err)
	_, err = p.ShareCommunity(ctx, rgName, galName)
	require.NoError(t, err)
	f.def = cloud.ImageDefinition{Name: defName, ResourceGroup: rgName, Gallery: galName,
		Publisher: "kinvolk", Offer: "stable", SKU: defName, OSType: cloud.OSTypeLinux,
		OSState: cloud.OSStateGeneralized, HyperVGeneration: cloud.HyperVGenV2, EndOfLife: &fixedTime}
	_, err = p.CreateImageDefinition(ctx, f.def)
	require.NoError(t, err)
	_, err = p.CreateStorageAccount(ctx, cloud.StorageAccount{Name: account, ResourceGroup: rgName})
	require.NoError(t, err)
	require.NoError(t, p.EnsureContainer(ctx, account, "vhds"))
	f.vhd = cloud.BlobRef{Account: account, Container: "vhds", Name: "flatcar.vhd"}
	f.upload(t, f.vhd, cloudtest.FixedVHD(vhdBytes))
	v := f.version("1.0.0")
	v.TargetRegions = []cloud.TargetRegion{{Name: "westeurope"}, {Name: "eastus"}}
	_, err = p.CreateImageVersion(ctx, v)
	require.NoError(t, err)
	_, err = p.CreateManagedImage(ctx, cloud.ManagedImage{Name: "img", ResourceGroup: rgName, OSType: cloud.OSTypeLinux, Source: f.vhdSource()})
	require.NoError(t, err)
}

func TestOpenLocksTheDirectory(t *testing.T) {
	dir := t.TempDir()
	p, err := Open(dir, Options{})
	require.NoError(t, err)
	_, err = Open(dir, Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), fmt.Sprintf("state directory %s is in use by another imgflow run", dir))
	require.NoError(t, p.Close())
	q, err := Open(dir, Options{})
	require.NoError(t, err, "free again after Close")
	require.NoError(t, q.Close())
}

func TestOpenRejectsCorruptState(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "state.json"), []byte("{not json"), 0o644))
	_, err := Open(dir, Options{})
	require.Error(t, err)
	// The lock was released on failure.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "state.json"), []byte(`{"subscription_id":"s"}`), 0o644))
	p, err := Open(dir, Options{})
	require.NoError(t, err)
	assert.Equal(t, "s", p.SubscriptionID())
	require.NoError(t, p.Close())
}

func TestCanceledContext(t *testing.T) {
	f := newFixture(t)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err := f.p.GetResourceGroup(cctx, rgName)
	require.ErrorIs(t, err, context.Canceled)
	_, err = f.p.ListLocations(cctx)
	require.ErrorIs(t, err, context.Canceled)
	_, err = f.p.CreateGallery(cctx, cloud.Gallery{Name: "x", ResourceGroup: rgName})
	require.ErrorIs(t, err, context.Canceled)
	_, err = f.p.UploadPageBlob(cctx, f.vhd, cloud.PageSource{Reader: bytes.NewReader(make([]byte, 512)), Size: 512}, true)
	require.ErrorIs(t, err, context.Canceled)
	_, err = f.p.CopyBlob(cctx, f.vhd.URL(), f.vhd, true)
	require.ErrorIs(t, err, context.Canceled)
}

func TestConcurrentUse(t *testing.T) {
	dir := t.TempDir()
	p, err := Open(dir, testOptions())
	require.NoError(t, err)
	defer p.Close()
	f := &fixture{p: p, sub: p.SubscriptionID()}
	populate(t, f)

	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 5 {
				name := fmt.Sprintf("%d.%d.0", i+2, j)
				v := f.version(name)
				if _, err := p.CreateImageVersion(ctx, v); err != nil {
					errs <- err
				}
				if _, err := p.GetImageVersion(ctx, rgName, galName, defName, name); err != nil {
					errs <- err
				}
				ref := cloud.BlobRef{Account: account, Container: "vhds", Name: fmt.Sprintf("b%d-%d", i, j)}
				data := bytes.Repeat([]byte{byte(i + 1)}, 4096)
				if _, err := p.UploadPageBlob(ctx, ref, cloud.PageSource{Reader: bytes.NewReader(data), Size: 4096}, true); err != nil {
					errs <- err
				}
				if _, err := p.CopyBlob(ctx, f.vhd.URL(), ref, true); err != nil {
					errs <- err
				}
				if _, err := p.ListGalleries(ctx); err != nil {
					errs <- err
				}
				_ = p.Snapshot()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	defs := p.Snapshot().ResourceGroups[rgName].Galleries[galName].Definitions[defName]
	assert.Len(t, defs.Versions, 41)
}
