package local

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/cloudtest"
	"github.com/imgflow/imgflow/vhd"
)

func TestImageVersionParents(t *testing.T) {
	f := newFixture(t)
	v := f.version("1.0.0")
	v.ResourceGroup = "nope"
	_, err := f.p.CreateImageVersion(ctx, v)
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeResourceGroupNotFound)
	v = f.version("1.0.0")
	v.Gallery = "nope"
	_, err = f.p.CreateImageVersion(ctx, v)
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeParentResourceNotFound)
	v = f.version("1.0.0")
	v.Definition = "nope"
	_, err = f.p.CreateImageVersion(ctx, v)
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeParentResourceNotFound, "'nope'")
	_, err = f.p.GetImageVersion(ctx, rgName, galName, defName, "1.0.0")
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeResourceNotFound)
	_, err = f.p.GetImageVersion(ctx, rgName, galName, "nope", "1.0.0")
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeParentResourceNotFound)
	err = f.p.DeleteImageVersion(ctx, rgName, galName, defName, "1.0.0")
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeResourceNotFound)
	_, err = f.p.UpdateImageVersion(ctx, f.version("1.0.0"))
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeResourceNotFound)
}

func TestImageVersionDefaultsAndReplication(t *testing.T) {
	f := newFixture(t)
	got, err := f.p.CreateImageVersion(ctx, f.version("1.0.0"))
	require.NoError(t, err)
	assert.Equal(t, cloud.ImageVersionID(f.sub, rgName, galName, defName, "1.0.0"), got.ID)
	assert.Equal(t, "westeurope", got.Location)
	assert.Equal(t, 1, got.ReplicaCount)
	assert.Equal(t, cloud.StorageStandardLRS, got.StorageAccountType)
	assert.Equal(t, []cloud.TargetRegion{{Name: "westeurope", ReplicaCount: 1, StorageAccountType: cloud.StorageStandardLRS}}, got.TargetRegions)
	assert.Equal(t, []cloud.RegionStatus{{Region: "westeurope", State: cloud.ReplicationCompleted, Progress: 100}}, got.Replication)
	assert.Equal(t, int64(vhdBytes), got.SizeBytes)

	v := f.version("1.0.1")
	v.ReplicaCount = 2
	v.TargetRegions = []cloud.TargetRegion{
		{Name: "eastus", ReplicaCount: 3},
		{Name: "westeurope"},
		{Name: "West US 2", StorageAccountType: cloud.StorageStandardZRS},
	}
	got, err = f.p.CreateImageVersion(ctx, v)
	require.NoError(t, err)
	assert.Equal(t, []cloud.TargetRegion{
		{Name: "eastus", ReplicaCount: 3, StorageAccountType: cloud.StorageStandardLRS},
		{Name: "westeurope", ReplicaCount: 2, StorageAccountType: cloud.StorageStandardLRS},
		{Name: "westus2", ReplicaCount: 2, StorageAccountType: cloud.StorageStandardZRS},
	}, got.TargetRegions)
	require.Len(t, got.Replication, 3)
	for i, r := range got.Replication {
		assert.Equal(t, got.TargetRegions[i].Name, r.Region)
		assert.Equal(t, cloud.ReplicationCompleted, r.State)
		assert.Equal(t, 100, r.Progress)
	}
	fetched, err := f.p.GetImageVersion(ctx, rgName, galName, defName, "1.0.1")
	require.NoError(t, err)
	assert.Equal(t, got, fetched)
}

func TestImageVersionTargetRegionRules(t *testing.T) {
	f := newFixture(t)
	for name, tc := range map[string]struct {
		regions  []cloud.TargetRegion
		fragment string
	}{
		"missing own region": {[]cloud.TargetRegion{{Name: "eastus"}}, "must contain the location"},
		"duplicate":          {[]cloud.TargetRegion{{Name: "westeurope"}, {Name: "eastus"}, {Name: "East US"}}, "more than once"},
		"unknown":            {[]cloud.TargetRegion{{Name: "westeurope"}, {Name: "marsnorth"}}, "'marsnorth'"},
		"logical":            {[]cloud.TargetRegion{{Name: "westeurope"}, {Name: "europe"}}, "logical"},
	} {
		t.Run(name, func(t *testing.T) {
			v := f.version("1.0.0")
			v.TargetRegions = tc.regions
			_, err := f.p.CreateImageVersion(ctx, v)
			cloudtest.RequireError(t, err, http.StatusBadRequest, cloud.CodeInvalidParameter, tc.fragment)
		})
	}
	v := f.version("1.0.0")
	v.Location = "eastus"
	_, err := f.p.CreateImageVersion(ctx, v)
	cloudtest.RequireError(t, err, http.StatusBadRequest, cloud.CodeInvalidParameter, "gallery's region")
}

func TestImageVersionPutAgainAndUpdate(t *testing.T) {
	f := newFixture(t)
	v := f.version("1.0.0")
	v.TargetRegions = []cloud.TargetRegion{{Name: "westeurope"}, {Name: "eastus"}, {Name: "northeurope"}}
	_, err := f.p.CreateImageVersion(ctx, v)
	require.NoError(t, err)

	// PUT with the same source (another SAS): an update.
	again := v
	again.Source.URI = f.vhd.URL() + "?sig=other"
	again.ExcludeFromLatest = true
	got, err := f.p.CreateImageVersion(ctx, again)
	require.NoError(t, err)
	assert.True(t, got.ExcludeFromLatest)

	// Source and storage account type are immutable.
	other := f.vhd
	other.Name = "other.vhd"
	f.upload(t, other, cloudtest.FixedVHD(vhdBytes))
	changed := v
	changed.Source.URI = other.URL()
	_, err = f.p.CreateImageVersion(ctx, changed)
	cloudtest.RequireError(t, err, http.StatusConflict, cloud.CodePropertyChangeNotAllowed, "Changing property 'source' is not allowed")
	_, err = f.p.UpdateImageVersion(ctx, changed)
	cloudtest.RequireError(t, err, http.StatusConflict, cloud.CodePropertyChangeNotAllowed, "'source'")
	changed = v
	changed.StorageAccountType = cloud.StoragePremiumLRS
	_, err = f.p.CreateImageVersion(ctx, changed)
	cloudtest.RequireError(t, err, http.StatusConflict, cloud.CodePropertyChangeNotAllowed, "'storageAccountType'")

	// Update: remove a region, change replicas, EOL, tags.
	eol := time.Date(2031, 6, 1, 0, 0, 0, 0, time.UTC)
	upd := cloud.ImageVersion{
		Name: "1.0.0", ResourceGroup: rgName, Gallery: galName, Definition: defName,
		TargetRegions: []cloud.TargetRegion{{Name: "westeurope"}, {Name: "northeurope", ReplicaCount: 4}},
		ReplicaCount:  2, EndOfLife: &eol, Tags: cloud.Tags{"k": "v"},
	}
	got, err = f.p.UpdateImageVersion(ctx, upd)
	require.NoError(t, err)
	assert.Equal(t, []string{"westeurope", "northeurope"}, got.RegionNames())
	assert.Equal(t, []cloud.RegionStatus{
		{Region: "westeurope", State: cloud.ReplicationCompleted, Progress: 100},
		{Region: "northeurope", State: cloud.ReplicationCompleted, Progress: 100},
	}, got.Replication)
	assert.Equal(t, 2, got.ReplicaCount)
	assert.Equal(t, 2, got.TargetRegions[0].ReplicaCount)
	assert.Equal(t, 4, got.TargetRegions[1].ReplicaCount)
	assert.False(t, got.ExcludeFromLatest)
	assert.Equal(t, eol, *got.EndOfLife)
	assert.Equal(t, cloud.Tags{"k": "v"}, got.Tags)
	assert.Equal(t, f.vhdSource(), got.Source, "the source is kept")

	// Same region checks on update.
	upd.TargetRegions = []cloud.TargetRegion{{Name: "eastus"}}
	_, err = f.p.UpdateImageVersion(ctx, upd)
	cloudtest.RequireError(t, err, http.StatusBadRequest, cloud.CodeInvalidParameter, "must contain the location")

	// PATCH semantics: unset fields stay.
	got, err = f.p.UpdateImageVersion(ctx, cloud.ImageVersion{Name: "1.0.0", ResourceGroup: rgName, Gallery: galName, Definition: defName, ExcludeFromLatest: true})
	require.NoError(t, err)
	assert.Equal(t, []string{"westeurope", "northeurope"}, got.RegionNames())
	assert.Equal(t, 2, got.ReplicaCount)
	assert.Equal(t, cloud.Tags{"k": "v"}, got.Tags)
	assert.True(t, got.ExcludeFromLatest)
}

func TestImageVersionVHDSource(t *testing.T) {
	f := newFixture(t)
	cases := map[string]struct {
		data     []byte
		status   int
		code     string
		fragment string
	}{
		"dynamic":       {cloudtest.VHD(vhdBytes, uint32(vhd.DiskTypeDynamic)), http.StatusBadRequest, cloud.CodeInvalidParameter, "is of Dynamic VHD type. Please retry with fixed VHD type"},
		"differencing":  {cloudtest.VHD(vhdBytes, uint32(vhd.DiskTypeDifferencing)), http.StatusBadRequest, cloud.CodeInvalidParameter, "Please retry with fixed VHD type"},
		"not a vhd":     {make([]byte, 1<<20), http.StatusBadRequest, cloud.CodeInvalidParameter, "conectix"},
		"unaligned":     {cloudtest.FixedVHD(vhdBytes + 512), http.StatusBadRequest, cloud.CodeInvalidParameter, "whole number (in MBs)"},
		"tiny":          {nil, http.StatusBadRequest, cloud.CodeInvalidParameter, "conectix"},
		"fixed is fine": {cloudtest.FixedVHD(2 << 20), 0, "", ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ref := cloud.BlobRef{Account: account, Container: "vhds", Name: name + ".vhd"}
			f.upload(t, ref, tc.data)
			v := f.version("1.0.0")
			v.Source = cloud.ImageSource{Kind: cloud.SourceVHD, URI: ref.URL()}
			got, err := f.p.CreateImageVersion(ctx, v)
			if tc.code == "" {
				require.NoError(t, err)
				assert.Equal(t, int64(2<<20), got.SizeBytes)
				require.NoError(t, f.p.DeleteImageVersion(ctx, rgName, galName, defName, "1.0.0"))
				return
			}
			cloudtest.RequireError(t, err, tc.status, tc.code, tc.fragment)
		})
	}

	v := f.version("1.0.0")
	v.Source.URI = cloud.BlobRef{Account: account, Container: "vhds", Name: "missing.vhd"}.URL()
	_, err := f.p.CreateImageVersion(ctx, v)
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeBlobNotFound)

	v.Source.URI = cloud.BlobRef{Account: "nosuchaccount", Container: "vhds", Name: "a.vhd"}.URL()
	_, err = f.p.CreateImageVersion(ctx, v)
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeResourceNotFound, "storage account nosuchaccount not found")

	v = f.version("1.0.0")
	v.Source.StorageAccountID = cloud.StorageAccountID(f.sub, rgName, "elsewhere")
	_, err = f.p.CreateImageVersion(ctx, v)
	cloudtest.RequireError(t, err, http.StatusBadRequest, cloud.CodeInvalidParameter, "does not match")
}

func TestImageVersionImageSources(t *testing.T) {
	f := newFixture(t)
	_, err := f.p.CreateImageVersion(ctx, f.version("1.0.0"))
	require.NoError(t, err)
	verID := cloud.ImageVersionID(f.sub, rgName, galName, defName, "1.0.0")

	// From another version: definitions must match.
	d2 := f.def
	d2.Name, d2.SKU = "copy", "copy"
	_, err = f.p.CreateImageDefinition(ctx, d2)
	require.NoError(t, err)
	v := cloud.ImageVersion{Name: "1.0.0", ResourceGroup: rgName, Gallery: galName, Definition: "copy",
		Source: cloud.ImageSource{Kind: cloud.SourceImageVersion, ID: verID}}
	got, err := f.p.CreateImageVersion(ctx, v)
	require.NoError(t, err)
	assert.Equal(t, int64(vhdBytes), got.SizeBytes)

	for name, change := range map[string]func(*cloud.ImageDefinition){
		"OS type":            func(d *cloud.ImageDefinition) { d.OSType = cloud.OSTypeWindows },
		"Hyper-V generation": func(d *cloud.ImageDefinition) { d.HyperVGeneration = cloud.HyperVGenV1 },
		"architecture":       func(d *cloud.ImageDefinition) { d.Architecture = cloud.ArchArm64 },
	} {
		d := f.def
		d.Name, d.SKU = "bad", "bad"+name
		change(&d)
		_ = f.p.DeleteImageDefinition(ctx, rgName, galName, "bad") // from the previous case
		_, err := f.p.CreateImageDefinition(ctx, d)
		require.NoError(t, err)
		v := v
		v.Definition = "bad"
		_, err = f.p.CreateImageVersion(ctx, v)
		cloudtest.RequireError(t, err, http.StatusBadRequest, cloud.CodeInvalidParameter, name)
	}

	v.Name = "2.0.0"
	v.Source.ID = cloud.ImageVersionID(f.sub, rgName, galName, defName, "9.9.9")
	_, err = f.p.CreateImageVersion(ctx, v)
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeResourceNotFound)

	// From a managed image.
	img, err := f.p.CreateManagedImage(ctx, cloud.ManagedImage{Name: "img", ResourceGroup: rgName,
		OSType: cloud.OSTypeLinux, HyperVGeneration: cloud.HyperVGenV2, Source: f.vhdSource()})
	require.NoError(t, err)
	v.Source = cloud.ImageSource{Kind: cloud.SourceManagedImage, ID: img.ID}
	_, err = f.p.CreateImageVersion(ctx, v)
	require.NoError(t, err)

	gen1, err := f.p.CreateManagedImage(ctx, cloud.ManagedImage{Name: "gen1", ResourceGroup: rgName,
		OSType: cloud.OSTypeLinux, Source: f.vhdSource()})
	require.NoError(t, err)
	assert.Equal(t, cloud.HyperVGenV1, gen1.HyperVGeneration)
	v.Name = "3.0.0"
	v.Source.ID = gen1.ID
	_, err = f.p.CreateImageVersion(ctx, v)
	cloudtest.RequireError(t, err, http.StatusBadRequest, cloud.CodeInvalidParameter, "Hyper-V generation")

	v.Source.ID = cloud.ManagedImageID(f.sub, rgName, "missing")
	_, err = f.p.CreateImageVersion(ctx, v)
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeResourceNotFound)
}
