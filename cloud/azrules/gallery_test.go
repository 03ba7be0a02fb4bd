package azrules_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/cloud/cloudtest"
)

func TestCheckGalleryRegion(t *testing.T) {
	for name, tc := range map[string]struct {
		location string
		ok       bool
	}{
		"empty means the gallery's": {"", true},
		"the gallery's":             {"westeurope", true},
		"by display name":           {"West Europe", true},
		"another region":            {"eastus", false},
		"logical":                   {"europe", false},
		"unknown":                   {"marsnorth", false},
	} {
		t.Run(name, func(t *testing.T) {
			err := azrules.CheckGalleryRegion(testRegions, "westeurope", tc.location, "/def", "image definitions")
			if tc.ok {
				require.NoError(t, err)
				return
			}
			requireRefusal(t, err, cloud.CodeInvalidParameter, "/def",
				"Location '"+tc.location+"' is invalid", "image definitions must be in the gallery's region 'westeurope'")
		})
	}
}

func TestCheckCommunityFeatures(t *testing.T) {
	for name, tc := range map[string]struct {
		community bool
		features  map[string]string
		bad       string
	}{
		"private gallery takes TrustedLaunch": {false, map[string]string{"SecurityType": "TrustedLaunch"}, ""},
		"community refuses TrustedLaunch":     {true, map[string]string{"SecurityType": "TrustedLaunch"}, "TrustedLaunch"},
		"community refuses ConfidentialVM":    {true, map[string]string{"securitytype": "confidentialvm"}, "confidentialvm"},
		"community takes ...Supported":        {true, map[string]string{"SecurityType": "TrustedLaunchSupported"}, ""},
		"community takes other features":      {true, map[string]string{"IsAcceleratedNetworkSupported": "True"}, ""},
		"no features":                         {true, nil, ""},
	} {
		t.Run(name, func(t *testing.T) {
			err := azrules.CheckCommunityFeatures("/def", "gal", tc.community, tc.features)
			if tc.bad == "" {
				require.NoError(t, err)
				return
			}
			requireRefusal(t, err, cloud.CodeInvalidParameter, "/def",
				"SecurityType '"+tc.bad+"' is not supported in community gallery 'gal'", "TrustedLaunchSupported")
		})
	}
}

func TestCheckShareable(t *testing.T) {
	community := &cloud.CommunityInfo{PublicNamePrefix: "flatcar"}
	cvm := cloud.ImageDefinition{Name: "cvm", Features: map[string]string{"SecurityType": "ConfidentialVM"}}
	plain := cloud.ImageDefinition{Name: "plain", Features: map[string]string{"SecurityType": "ConfidentialVMSupported"}}

	err := azrules.CheckShareable(&cloud.Gallery{ID: "/g", Name: "g"}, nil)
	requireRefusal(t, err, cloud.CodeInvalidParameter, "/g", "Gallery 'g' is not a community gallery")

	err = azrules.CheckShareable(&cloud.Gallery{ID: "/g", Name: "g", Community: community}, []cloud.ImageDefinition{plain, cvm})
	requireRefusal(t, err, cloud.CodeInvalidParameter, "/g", "image definition 'cvm'", "SecurityType 'ConfidentialVM'")

	require.NoError(t, azrules.CheckShareable(&cloud.Gallery{ID: "/g", Name: "g", Community: community}, []cloud.ImageDefinition{plain}))
	require.NoError(t, azrules.CheckShareable(&cloud.Gallery{ID: "/g", Name: "g", Community: community, CommunityEnabled: true},
		[]cloud.ImageDefinition{cvm}), "an already shared gallery stays shared")
}

func TestDefinitionDefaults(t *testing.T) {
	d := cloud.ImageDefinition{}
	azrules.DefinitionDefaults(&d)
	assert.Equal(t, cloud.HyperVGenV1, d.HyperVGeneration)
	assert.Equal(t, cloud.ArchX64, d.Architecture)
	d = cloud.ImageDefinition{HyperVGeneration: cloud.HyperVGenV2, Architecture: cloud.ArchArm64}
	azrules.DefinitionDefaults(&d)
	assert.Equal(t, cloud.HyperVGenV2, d.HyperVGeneration, "given values stay")
	assert.Equal(t, cloud.ArchArm64, d.Architecture)
}

func testDefinition() cloud.ImageDefinition {
	d := cloudtest.Definition("", "", "flatcar", "flatcar-stable")
	d.ID = "/def"
	return d
}

func TestImmutableDefinitionFields(t *testing.T) {
	old := testDefinition()

	same := old
	same.Publisher, same.OSType = "KINVOLK", "linux"
	same.Description, same.Features, same.Tags = "changed", map[string]string{"a": "b"}, cloud.Tags{"k": "v"}
	require.NoError(t, azrules.ImmutableDefinitionFields(&old, &same), "case and mutable fields are not changes")

	in := old
	in.OSType, in.HyperVGeneration, in.Offer = cloud.OSTypeWindows, cloud.HyperVGenV1, "beta"
	ce := requireRefusal(t, azrules.ImmutableDefinitionFields(&old, &in), cloud.CodePropertyChangeNotAllowed, "/def",
		"'osType'", "'Linux' -> 'Windows'", "'hyperVGeneration'", "'V2' -> 'V1'", "'identifier.offer'", "'stable' -> 'beta'")
	assert.NotContains(t, ce.Message, "osState")

	for prop, change := range map[string]func(*cloud.ImageDefinition){
		"osState":              func(d *cloud.ImageDefinition) { d.OSState = cloud.OSStateSpecialized },
		"identifier.publisher": func(d *cloud.ImageDefinition) { d.Publisher = "other" },
		"identifier.sku":       func(d *cloud.ImageDefinition) { d.SKU = "other" },
		"architecture":         func(d *cloud.ImageDefinition) { d.Architecture = cloud.ArchArm64 },
	} {
		in := old
		change(&in)
		requireRefusal(t, azrules.ImmutableDefinitionFields(&old, &in), cloud.CodePropertyChangeNotAllowed, "/def",
			"Changing property '"+prop+"' is not allowed")
	}
}

func TestUniqueIdentifier(t *testing.T) {
	existing := testDefinition()
	in := existing
	in.Name, in.SKU = "copy", "FLATCAR-STABLE"
	requireRefusal(t, azrules.UniqueIdentifier("/copy", "gal", &in, []cloud.ImageDefinition{existing}), cloud.CodeConflict, "/copy",
		"Image definition 'flatcar' in gallery 'gal' already uses publisher 'kinvolk', offer 'stable' and SKU 'flatcar-stable'")

	in.SKU = "copy"
	require.NoError(t, azrules.UniqueIdentifier("/copy", "gal", &in, []cloud.ImageDefinition{existing}), "two of three may repeat")
	again := existing
	require.NoError(t, azrules.UniqueIdentifier("/def", "gal", &again, []cloud.ImageDefinition{existing}), "a definition does not clash with itself")
}

func TestDiskSecurityType(t *testing.T) {
	for in, want := range map[string]string{
		"": "", "TrustedLaunch": "TrustedLaunch", "trustedlaunch": "TrustedLaunch", "CONFIDENTIALVM": "ConfidentialVM",
	} {
		got, err := azrules.DiskSecurityType("/disk", in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	_, err := azrules.DiskSecurityType("/disk", "Standard")
	requireRefusal(t, err, cloud.CodeInvalidParameter, "/disk", "'Standard'", "TrustedLaunch or ConfidentialVM")
}
