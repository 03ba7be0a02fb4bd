package azrules_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
)

func testVersion() cloud.ImageVersion {
	return cloud.ImageVersion{ID: "/v", Name: "1.0.0", Location: "westeurope", StorageAccountType: cloud.StorageStandardLRS, ReplicaCount: 1}
}

func TestTargetRegions(t *testing.T) {
	for name, tc := range map[string]struct {
		req      []cloud.TargetRegion
		want     []cloud.TargetRegion
		fragment string
	}{
		"none means the version's region": {nil, []cloud.TargetRegion{{Name: "westeurope", ReplicaCount: 2, StorageAccountType: cloud.StorageStandardLRS}}, ""},
		"canonical names, inherited defaults": {
			[]cloud.TargetRegion{{Name: "West Europe"}, {Name: "East US", ReplicaCount: 3, StorageAccountType: "Premium_LRS"}},
			[]cloud.TargetRegion{{Name: "westeurope", ReplicaCount: 2, StorageAccountType: cloud.StorageStandardLRS}, {Name: "eastus", ReplicaCount: 3, StorageAccountType: "Premium_LRS"}}, ""},
		"missing own region": {[]cloud.TargetRegion{{Name: "eastus"}}, nil, "must contain the location of the image version ('westeurope')"},
		"duplicate":          {[]cloud.TargetRegion{{Name: "westeurope"}, {Name: "eastus"}, {Name: "East US"}}, nil, "Target region 'eastus' is listed more than once"},
		"unknown":            {[]cloud.TargetRegion{{Name: "westeurope"}, {Name: "marsnorth"}}, nil, "'marsnorth' of gallery image version '1.0.0' is not an available region"},
		"logical":            {[]cloud.TargetRegion{{Name: "westeurope"}, {Name: "europe"}}, nil, "'europe' of gallery image version '1.0.0' is a logical geography"},
	} {
		t.Run(name, func(t *testing.T) {
			v := testVersion()
			v.ReplicaCount = 2
			got, err := azrules.TargetRegions(testRegions, &v, tc.req)
			if tc.fragment != "" {
				requireRefusal(t, err, cloud.CodeInvalidParameter, "/v", tc.fragment)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestApplyPublishingPut(t *testing.T) {
	eol := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	exclude := true
	v := testVersion()
	v.ReplicaCount, v.EndOfLife, v.Tags, v.ExcludeFromLatest = 5, &eol, cloud.Tags{"old": "1"}, true
	v.TargetRegions = []cloud.TargetRegion{{Name: "westeurope"}, {Name: "eastus"}}

	require.NoError(t, azrules.ApplyPublishing(testRegions, &v, azrules.Publishing{}, true))
	assert.Equal(t, 1, v.ReplicaCount, "PUT: absent means one replica")
	assert.Equal(t, []cloud.TargetRegion{{Name: "westeurope", ReplicaCount: 1, StorageAccountType: cloud.StorageStandardLRS}}, v.TargetRegions,
		"PUT: absent means the version's region")
	assert.Nil(t, v.EndOfLife)
	assert.Nil(t, v.Tags)
	assert.False(t, v.ExcludeFromLatest)

	in := azrules.Publishing{ReplicaCount: 3, TargetRegions: []cloud.TargetRegion{{Name: "westeurope"}, {Name: "northeurope", ReplicaCount: 1}},
		ExcludeFromLatest: &exclude, EndOfLife: &eol, Tags: cloud.Tags{"k": "v"}}
	require.NoError(t, azrules.ApplyPublishing(testRegions, &v, in, true))
	assert.Equal(t, 3, v.ReplicaCount)
	assert.Equal(t, []cloud.TargetRegion{{Name: "westeurope", ReplicaCount: 3, StorageAccountType: cloud.StorageStandardLRS},
		{Name: "northeurope", ReplicaCount: 1, StorageAccountType: cloud.StorageStandardLRS}}, v.TargetRegions,
		"regions take the new replica count as default")
	assert.Equal(t, eol, *v.EndOfLife)
	assert.Equal(t, cloud.Tags{"k": "v"}, v.Tags)
	assert.True(t, v.ExcludeFromLatest)
	in.Tags["k"] = "changed"
	assert.Equal(t, "v", v.Tags["k"], "tags are copied")
}

func TestApplyPublishingPatch(t *testing.T) {
	eol := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	v := testVersion()
	v.ReplicaCount, v.EndOfLife, v.Tags, v.ExcludeFromLatest = 2, &eol, cloud.Tags{"k": "v"}, true
	v.TargetRegions = []cloud.TargetRegion{{Name: "westeurope", ReplicaCount: 2}, {Name: "eastus", ReplicaCount: 2}}
	before := v

	require.NoError(t, azrules.ApplyPublishing(testRegions, &v, azrules.Publishing{}, false))
	assert.Equal(t, before, v, "PATCH: absent values keep the current ones")

	notExcluded := false
	require.NoError(t, azrules.ApplyPublishing(testRegions, &v, azrules.Publishing{ExcludeFromLatest: &notExcluded,
		TargetRegions: []cloud.TargetRegion{{Name: "westeurope"}}}, false))
	assert.False(t, v.ExcludeFromLatest)
	assert.Equal(t, []cloud.TargetRegion{{Name: "westeurope", ReplicaCount: 2, StorageAccountType: cloud.StorageStandardLRS}}, v.TargetRegions)
	assert.Equal(t, 2, v.ReplicaCount)
	assert.Equal(t, cloud.Tags{"k": "v"}, v.Tags)
}

func TestApplyPublishingRefusals(t *testing.T) {
	for name, tc := range map[string]struct {
		in       azrules.Publishing
		fragment string
	}{
		"too many replicas": {azrules.Publishing{ReplicaCount: 101}, "The replica count 101 of gallery image version '1.0.0' must be between 1 and 100"},
		"negative replicas": {azrules.Publishing{ReplicaCount: -1}, "must be between 1 and 100"},
		"bad region":        {azrules.Publishing{ReplicaCount: 4, TargetRegions: []cloud.TargetRegion{{Name: "eastus"}}}, "must contain the location"},
	} {
		t.Run(name, func(t *testing.T) {
			v := testVersion()
			before := v
			err := azrules.ApplyPublishing(testRegions, &v, tc.in, true)
			requireRefusal(t, err, cloud.CodeInvalidParameter, "/v", tc.fragment)
			assert.Equal(t, before, v, "a refused request changes nothing")
		})
	}
	v := testVersion()
	require.NoError(t, azrules.ApplyPublishing(testRegions, &v, azrules.Publishing{ReplicaCount: azrules.MaxReplicaCount}, true))
	assert.Equal(t, 100, v.ReplicaCount)
}

func TestPublishReplicatesAtOnce(t *testing.T) {
	v := testVersion()
	in := testVersion()
	in.TargetRegions = []cloud.TargetRegion{{Name: "westeurope"}, {Name: "eastus"}}
	in.ExcludeFromLatest = true
	require.NoError(t, azrules.Publish(testRegions, &v, in, true))
	assert.True(t, v.ExcludeFromLatest, "the Provider interface always gives ExcludeFromLatest")
	assert.Equal(t, cloud.ProvisioningSucceeded, v.ProvisioningState)
	assert.Equal(t, []cloud.RegionStatus{
		{Region: "westeurope", State: cloud.ReplicationCompleted, Progress: 100},
		{Region: "eastus", State: cloud.ReplicationCompleted, Progress: 100},
	}, v.Replication)

	in.ExcludeFromLatest = false
	in.TargetRegions = nil
	require.NoError(t, azrules.Publish(testRegions, &v, in, false))
	assert.False(t, v.ExcludeFromLatest)
	assert.Len(t, v.TargetRegions, 2, "PATCH keeps the regions")
}

func TestCheckVersionUnchanged(t *testing.T) {
	v := testVersion()
	v.Source = cloud.ImageSource{Kind: cloud.SourceVHD, URI: "https://acct.blob.core.windows.net/vhds/a.vhd?sig=old"}
	fresh := cloud.ImageSource{Kind: cloud.SourceVHD, URI: "https://ACCT.blob.core.windows.net/vhds/a.vhd?sig=new"}
	other := cloud.ImageSource{Kind: cloud.SourceVHD, URI: "https://acct.blob.core.windows.net/vhds/b.vhd"}

	require.NoError(t, azrules.CheckVersionUnchanged(&v, fresh, "standard_lrs", true), "a fresh SAS names the same source")
	requireRefusal(t, azrules.CheckVersionUnchanged(&v, other, cloud.StorageStandardLRS, true), cloud.CodePropertyChangeNotAllowed, "/v",
		"Changing property 'source' is not allowed")
	requireRefusal(t, azrules.CheckVersionUnchanged(&v, fresh, "Premium_LRS", true), cloud.CodePropertyChangeNotAllowed, "/v",
		"Changing property 'storageAccountType' is not allowed")
	requireRefusal(t, azrules.CheckVersionUnchanged(&v, cloud.ImageSource{}, cloud.StorageStandardLRS, true), cloud.CodePropertyChangeNotAllowed, "/v",
		"'source'")
	require.NoError(t, azrules.CheckVersionUnchanged(&v, cloud.ImageSource{}, "", false), "PATCH: absent is no change")
	requireRefusal(t, azrules.CheckVersionUnchanged(&v, other, "", false), cloud.CodePropertyChangeNotAllowed, "/v", "'source'")
}

// fakeSources holds one of each source kind.
type fakeSources struct {
	accounts map[string]bool
	vhdErr   error
}

const (
	imageID   = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/images/img"
	versionID = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/galleries/g/images/d/versions/1.0.0"
	accountID = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Storage/storageAccounts/acct"
	vhdURL    = "https://acct.blob.core.windows.net/vhds/a.vhd?sig=secret"
)

var errMissing = azrules.ResourceNotFound("/x", "Microsoft.Compute/images", "x", "rg")

func (s fakeSources) ManagedImage(id, resource string) (*cloud.ManagedImage, error) {
	if id != imageID {
		return nil, errMissing
	}
	return &cloud.ManagedImage{ID: id, OSType: cloud.OSTypeLinux, HyperVGeneration: cloud.HyperVGenV1, SizeBytes: 10}, nil
}

func (s fakeSources) ImageVersion(id, resource string) (*cloud.ImageDefinition, *cloud.ImageVersion, error) {
	if id != versionID {
		return nil, nil, errMissing
	}
	d := testDefinition()
	d.Architecture = cloud.ArchArm64
	return &d, &cloud.ImageVersion{ID: id, SizeBytes: 20}, nil
}

func (s fakeSources) VHD(uri, resource string) (int64, cloud.BlobRef, error) {
	ref, err := cloud.ParseBlobURL(uri)
	if err != nil {
		return 0, ref, err
	}
	return 30, ref, s.vhdErr
}

func (s fakeSources) StorageAccountExists(id string) (bool, error) {
	return s.accounts[strings.ToLower(id)], nil
}

func TestCheckVersionSource(t *testing.T) {
	d := testDefinition() // Linux, V2, x64
	srcs := fakeSources{accounts: map[string]bool{strings.ToLower(accountID): true}}
	for name, tc := range map[string]struct {
		src      cloud.ImageSource
		def      func(*cloud.ImageDefinition)
		size     int64
		code     string
		fragment string
	}{
		"managed image":        {src: cloud.ImageSource{Kind: cloud.SourceManagedImage, ID: imageID}, def: func(d *cloud.ImageDefinition) { d.HyperVGeneration = "v1" }, size: 10},
		"managed image, gen":   {src: cloud.ImageSource{Kind: cloud.SourceManagedImage, ID: imageID}, code: cloud.CodeInvalidParameter, fragment: "The Hyper-V generation 'V1' of source image " + imageID + " does not match the Hyper-V generation 'V2' of gallery image definition 'flatcar'"},
		"missing image":        {src: cloud.ImageSource{Kind: cloud.SourceManagedImage, ID: imageID + "x"}, code: cloud.CodeResourceNotFound},
		"image version":        {src: cloud.ImageSource{Kind: cloud.SourceImageVersion, ID: versionID}, def: func(d *cloud.ImageDefinition) { d.Architecture = "ARM64" }, size: 20},
		"image version, arch":  {src: cloud.ImageSource{Kind: cloud.SourceImageVersion, ID: versionID}, code: cloud.CodeInvalidParameter, fragment: "The architecture 'Arm64' of source image version " + versionID},
		"image version, os":    {src: cloud.ImageSource{Kind: cloud.SourceImageVersion, ID: versionID}, def: func(d *cloud.ImageDefinition) { d.OSType = cloud.OSTypeWindows }, code: cloud.CodeInvalidParameter, fragment: "The OS type 'Linux'"},
		"vhd":                  {src: cloud.ImageSource{Kind: cloud.SourceVHD, URI: vhdURL}, size: 30},
		"vhd with its account": {src: cloud.ImageSource{Kind: cloud.SourceVHD, URI: vhdURL, StorageAccountID: strings.ToUpper(accountID)}, size: 30},
		"vhd, other account": {src: cloud.ImageSource{Kind: cloud.SourceVHD, URI: vhdURL, StorageAccountID: strings.Replace(accountID, "/acct", "/other", 1)},
			code: cloud.CodeInvalidParameter, fragment: "does not match the account of the source VHD https://acct.blob.core.windows.net/vhds/a.vhd."},
		"vhd, missing account": {src: cloud.ImageSource{Kind: cloud.SourceVHD, URI: vhdURL, StorageAccountID: strings.Replace(accountID, "/rg/", "/rg2/", 1)},
			code: cloud.CodeInvalidParameter, fragment: "Storage account id"},
		"vhd, not an account id": {src: cloud.ImageSource{Kind: cloud.SourceVHD, URI: vhdURL, StorageAccountID: imageID},
			code: cloud.CodeInvalidParameter, fragment: "Storage account id"},
		"unknown kind": {src: cloud.ImageSource{Kind: "snapshot"}, code: cloud.CodeInvalidParameter, fragment: "The image version source kind 'snapshot' is not supported"},
	} {
		t.Run(name, func(t *testing.T) {
			d := d
			if tc.def != nil {
				tc.def(&d)
			}
			size, err := azrules.CheckVersionSource(srcs, &d, tc.src, "/v")
			if tc.code != "" {
				requireRefusal(t, err, tc.code, "", tc.fragment)
				assert.NotContains(t, err.Error(), "secret", "no SAS in errors")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.size, size)
		})
	}
	vhdFails := errors.New("read failed")
	_, err := azrules.CheckVersionSource(fakeSources{vhdErr: vhdFails}, &d, cloud.ImageSource{Kind: cloud.SourceVHD, URI: vhdURL}, "/v")
	assert.ErrorIs(t, err, vhdFails)
}

func TestInheritImageField(t *testing.T) {
	field := ""
	require.NoError(t, azrules.InheritImageField("/img", "OS type", &field, "Linux", versionID))
	assert.Equal(t, "Linux", field, "unset takes the source's")
	field = "linux"
	require.NoError(t, azrules.InheritImageField("/img", "OS type", &field, "Linux", versionID))
	assert.Equal(t, "linux", field, "same but for case is kept")
	field = "Windows"
	requireRefusal(t, azrules.InheritImageField("/img", "OS type", &field, "Linux", versionID), cloud.CodeInvalidParameter, "/img",
		"The OS type 'Windows' does not match the OS type 'Linux' of source image version "+versionID)
}
