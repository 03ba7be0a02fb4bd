package cloud

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// vcase is one input of a single-string rule: want "" means accepted,
// otherwise the error must contain want.
type vcase struct {
	in   string
	want string
}

// runCases checks fn against each case and that every rejection is a
// *ValidationError.
func runCases(t *testing.T, fn func(string) error, cases []vcase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			err := fn(c.in)
			if c.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.ErrorContains(t, err, c.want)
			var ve *ValidationError
			assert.True(t, errors.As(err, &ve), "want a *ValidationError, got %T", err)
		})
	}
}

func TestValidationErrorFormat(t *testing.T) {
	e := &ValidationError{Field: "gallery name", Value: "a-b", Problem: "contains '-'", Fix: "use '_'"}
	assert.Equal(t, `invalid gallery name "a-b": contains '-'; use '_'`, e.Error())
	e.Fix = ""
	assert.Equal(t, `invalid gallery name "a-b": contains '-'`, e.Error())
}

func TestValidateResourceGroupName(t *testing.T) {
	runCases(t, ValidateResourceGroupName, []vcase{
		{"flatcar-images", ""},
		{"rg_1.(prod)", ""},
		{"Flatcar", ""},
		{strings.Repeat("r", 90), ""},
		{"", "is empty"},
		{strings.Repeat("r", 91), "maximum is 90"},
		{"rg.", "must not end with '.'"},
		{"rg/x", "contains '/'"},
		{"my rg", "contains ' '"},
	})
}

func TestValidateLocationName(t *testing.T) {
	runCases(t, ValidateLocationName, []vcase{
		{"westeurope", ""},
		{"westus2", ""},
		{"", "is empty"},
		{"West Europe", `not its display name (westeurope, not "West Europe")`},
		{"West Europe", `here "westeurope"`},
		{"WestEurope", "contains 'W', 'E'"},
		{"west-europe", "contains '-'"},
		{strings.Repeat("a", 41), "maximum is 40"},
	})
}

func TestValidateGalleryName(t *testing.T) {
	runCases(t, ValidateGalleryName, []vcase{
		{"flatcar_staging", ""},
		{"flatcar", ""},
		{"flatcar4capi", ""},
		{"a.b_c", ""},
		{"a", ""},
		{strings.Repeat("g", 80), ""},
		{"flatcar-staging", "use '_' instead of '-', e.g. flatcar_staging"},
		{"flatcar4capi-staging", "e.g. flatcar4capi_staging"},
		{"_x", "must start and end with a letter or digit"},
		{"x.", "must start and end with a letter or digit"},
		{"x_", "must start and end with a letter or digit"},
		{"", "is empty"},
		{strings.Repeat("g", 81), "is 81 characters long; the maximum is 80"},
		{"gal lery", "contains ' '"},
		{"galerie-é", "contains '-', 'é'"},
	})
}

func TestValidateImageDefinitionName(t *testing.T) {
	runCases(t, ValidateImageDefinitionName, []vcase{
		{"flatcar-stable-amd64", ""},
		{"flatcar-stable-amd64-capi-v1.31.1", ""},
		{"a_b.c-d", ""},
		{strings.Repeat("d", 80), ""},
		{"", "is empty"},
		{"-flatcar", "must start and end with a letter or digit"},
		{"flatcar.", "must start and end with a letter or digit"},
		{"flatcar-", "e.g. flatcar"},
		{"flat car", "contains ' '"},
		{strings.Repeat("d", 81), "maximum is 80"},
	})
}

func TestValidatePublisherOfferSKU(t *testing.T) {
	runCases(t, ValidatePublisher, []vcase{
		{"flatcar", ""},
		{"kinvolk-io.flatcar_1", ""},
		{strings.Repeat("p", 128), ""},
		{strings.Repeat("p", 129), "maximum is 128"},
		{"", "is empty"},
		{"flatcar.", "must not end with '.'"},
		{"flatcar.", "e.g. flatcar"},
		{"flat car", "contains ' '"},
	})
	runCases(t, ValidateOffer, []vcase{
		{"stable", ""},
		{"stable-capi", ""},
		{strings.Repeat("o", 64), ""},
		{strings.Repeat("o", 65), "maximum is 64"},
		{"stable.", "invalid offer"},
		{"", "invalid offer"},
	})
	runCases(t, ValidateSKU, []vcase{
		{"flatcar-stable-amd64", ""},
		{strings.Repeat("s", 64), ""},
		{strings.Repeat("s", 65), "maximum is 64"},
		{"sku/1", "invalid SKU"},
	})
}

func TestValidateVersion(t *testing.T) {
	runCases(t, ValidateVersion, []vcase{
		{"4152.2.3", ""},
		{"0.0.0", ""},
		{"2147483647.0.0", ""},
		{"1.0.261202", ""},
		{"2147483648.0.0", "exceeds 2147483647"},
		{"1.0.202612021200", "exceeds 2147483647 (2^31-1"},
		{"1.0.202612021200", "YYMMDD"},
		{"1.2", "has 2 part(s)"},
		{"1.2", "e.g. 1.2.0"},
		{"1.2.3.4", "has 4 part(s)"},
		{"1.2.3.4", "e.g. 1.2.3"},
		{"1.2.x", `Patch part "x" is not a decimal integer`},
		{"+1.2.3", "is not a decimal integer"},
		{"-1.2.3", "is not a decimal integer"},
		{"1..3", "Minor part is empty"},
		{"", "is empty"},
		{"latest", "reference alias"},
	})
}

func TestParseVersion(t *testing.T) {
	v, err := ParseVersion("4152.2.3")
	require.NoError(t, err)
	assert.Equal(t, [3]int32{4152, 2, 3}, v)

	v, err = ParseVersion("2147483647.0.1")
	require.NoError(t, err)
	assert.Equal(t, [3]int32{2147483647, 0, 1}, v)

	_, err = ParseVersion("1.x.99999999999")
	require.Error(t, err)
	assert.ErrorContains(t, err, `Minor part "x"`)
	assert.ErrorContains(t, err, `Patch part "99999999999" exceeds 2147483647`)
}

func TestCompareVersions(t *testing.T) {
	cases := []struct {
		a, b string
		want int
	}{
		{"1.2.3", "1.2.3", 0},
		{"1.2.3", "1.2.4", -1},
		{"1.10.0", "1.9.9", 1},
		{"4152.2.3", "4081.2.0", 1},
		{"2.0.0", "10.0.0", -1},
		{"1.02.3", "1.2.3", 0},
		{"bogus", "1.0.0", -1},
		{"1.0.0", "bogus", 1},
		{"a", "b", -1},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, CompareVersions(c.a, c.b), "%s vs %s", c.a, c.b)
	}
}

func TestValidateCommunityInfo(t *testing.T) {
	good := CommunityInfo{
		PublicNamePrefix: "flatcar4capi",
		PublisherURI:     "https://www.flatcar.org",
		PublisherContact: "maintainers@flatcar.org",
		EULA:             "https://www.flatcar.org/eula",
	}
	require.NoError(t, ValidateCommunityInfo(good))

	cases := []struct {
		name   string
		change func(*CommunityInfo)
		want   []string
	}{
		{"prefix ok 5", func(c *CommunityInfo) { c.PublicNamePrefix = "abcde" }, nil},
		{"prefix ok 16", func(c *CommunityInfo) { c.PublicNamePrefix = strings.Repeat("a", 16) }, nil},
		{"prefix flatcar", func(c *CommunityInfo) { c.PublicNamePrefix = "flatcar" }, nil},
		{"prefix dash", func(c *CommunityInfo) { c.PublicNamePrefix = "flatcar-capi" },
			[]string{`invalid community prefix "flatcar-capi"`, "alphanumeric, 5–16 characters, no '-'", "e.g. flatcar4capi instead of flatcar-capi"}},
		{"prefix short", func(c *CommunityInfo) { c.PublicNamePrefix = "abcd" }, []string{"it is 4 characters long"}},
		{"prefix long", func(c *CommunityInfo) { c.PublicNamePrefix = strings.Repeat("a", 17) }, []string{"it is 17 characters long"}},
		{"http ok", func(c *CommunityInfo) { c.PublisherURI = "http://example.org/x" }, nil},
		{"uri sas", func(c *CommunityInfo) { c.EULA = "https://acct.blob.core.windows.net/c/eula.txt?sv=2022&sig=SECRET" },
			[]string{"EULA URL", "has a query string", "e.g. https://acct.blob.core.windows.net/c/eula.txt"}},
		{"uri relative", func(c *CommunityInfo) { c.PublisherURI = "www.flatcar.org" }, []string{"publisher URI", "is not an absolute URL"}},
		{"uri ftp", func(c *CommunityInfo) { c.PublisherURI = "ftp://flatcar.org" }, []string{`scheme "ftp"`}},
		{"uri creds", func(c *CommunityInfo) { c.PublisherURI = "https://user:pw@flatcar.org" }, []string{"contains credentials"}},
		{"email bad", func(c *CommunityInfo) { c.PublisherContact = "not-an-email" }, []string{"publisher e-mail", "is not an e-mail address"}},
		{"email named", func(c *CommunityInfo) { c.PublisherContact = "Flatcar <maintainers@flatcar.org>" },
			[]string{"must be a bare e-mail address", "use maintainers@flatcar.org"}},
		{"all missing", func(c *CommunityInfo) { *c = CommunityInfo{} },
			[]string{`invalid community prefix ""`, `invalid publisher URI ""`, `invalid publisher e-mail ""`, `invalid EULA URL ""`, "is required for a community gallery"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			info := good
			c.change(&info)
			err := ValidateCommunityInfo(info)
			if c.want == nil {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, w := range c.want {
				assert.ErrorContains(t, err, w)
			}
			var ve *ValidationError
			assert.True(t, errors.As(err, &ve))
		})
	}

	t.Run("sas never echoed", func(t *testing.T) {
		info := good
		info.EULA = "https://x.example/eula?sig=SECRET"
		err := ValidateCommunityInfo(info)
		require.Error(t, err)
		assert.NotContains(t, err.Error(), "SECRET")
	})
	t.Run("every missing one reported", func(t *testing.T) {
		err := ValidateCommunityInfo(CommunityInfo{})
		require.Error(t, err)
		joined, ok := err.(interface{ Unwrap() []error })
		require.True(t, ok)
		assert.Len(t, joined.Unwrap(), 4)
	})
}

func TestValidateEnums(t *testing.T) {
	runCases(t, ValidateOSType, []vcase{
		{"Linux", ""}, {"Windows", ""},
		{"linux", "did you mean Linux?"},
		{"", "is required"},
		{"BSD", "is not one of Linux, Windows"},
	})
	runCases(t, ValidateOSState, []vcase{
		{"Generalized", ""}, {"Specialized", ""},
		{"generalized", "did you mean Generalized?"},
		{"Generalised", "is not one of"},
	})
	runCases(t, ValidateHyperVGeneration, []vcase{
		{"V1", ""}, {"V2", ""},
		{"v2", "did you mean V2?"},
		{"Gen2", "did you mean V2?"},
		{"V3", "is not one of V1, V2"},
	})
	runCases(t, ValidateArchitecture, []vcase{
		{"x64", ""}, {"Arm64", ""},
		{"arm64", "did you mean Arm64?"},
		{"ARM64", "did you mean Arm64?"},
		{"X64", "did you mean x64?"},
		{"amd64", "did you mean x64?"},
		{"aarch64", "did you mean Arm64?"},
		{"riscv64", "is not one of x64, Arm64"},
	})
	runCases(t, ValidateStorageAccountType, []vcase{
		{"Standard_LRS", ""}, {"Standard_ZRS", ""}, {"Premium_LRS", ""},
		{"standard_lrs", "did you mean Standard_LRS?"},
		{"Premium_ZRS", "is not one of"},
	})
}

func TestValidateReplicaCount(t *testing.T) {
	for _, n := range []int{0, 1, 50, 100} {
		assert.NoError(t, ValidateReplicaCount(n), n)
	}
	for _, n := range []int{-1, 101} {
		err := ValidateReplicaCount(n)
		assert.ErrorContains(t, err, "must be between 1 and 100", n)
		var ve *ValidationError
		assert.True(t, errors.As(err, &ve))
	}
}

var testNow = time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)

func goodDefinition() ImageDefinition {
	return ImageDefinition{
		Name:             "flatcar-stable-amd64",
		ResourceGroup:    "flatcar-images",
		Gallery:          "flatcar_staging",
		Location:         "westeurope",
		Publisher:        "flatcar",
		Offer:            "stable",
		SKU:              "flatcar-stable-amd64",
		OSType:           OSTypeLinux,
		OSState:          OSStateGeneralized,
		HyperVGeneration: HyperVGenV2,
		Architecture:     ArchX64,
		Features: map[string]string{
			"SecurityType":                  "TrustedLaunchAndConfidentialVmSupported",
			"IsAcceleratedNetworkSupported": "true",
			"DiskControllerTypes":           "NVMe,SCSI",
		},
	}
}

func TestValidateImageDefinition(t *testing.T) {
	past := testNow.Add(-time.Hour)
	future := testNow.AddDate(1, 0, 0)
	cases := []struct {
		name      string
		community bool
		change    func(*ImageDefinition)
		want      []string
	}{
		{"ok", false, func(*ImageDefinition) {}, nil},
		{"ok community", true, func(*ImageDefinition) {}, nil},
		{"ok arm64 v2", false, func(d *ImageDefinition) { d.Architecture = ArchArm64 }, nil},
		{"ok minimal", false, func(d *ImageDefinition) {
			d.Features, d.Architecture, d.HyperVGeneration, d.Gallery, d.ResourceGroup, d.Location = nil, "", "", "", "", ""
		}, nil},
		{"ok future eol", false, func(d *ImageDefinition) { d.EndOfLife = &future }, nil},
		{"ok scsi", false, func(d *ImageDefinition) { d.Features["DiskControllerTypes"] = "SCSI" }, nil},
		{"ok scsi nvme", false, func(d *ImageDefinition) { d.Features["DiskControllerTypes"] = "SCSI,NVMe" }, nil},
		{"ok hibernate", false, func(d *ImageDefinition) { d.Features["IsHibernateSupported"] = "false" }, nil},
		{"ok TrustedLaunch private", false, func(d *ImageDefinition) { d.Features["SecurityType"] = "TrustedLaunch" }, nil},
		{"ok TrustedLaunchSupported community", true, func(d *ImageDefinition) { d.Features["SecurityType"] = "TrustedLaunchSupported" }, nil},

		{"arm64 v1", false, func(d *ImageDefinition) {
			d.Architecture, d.HyperVGeneration = ArchArm64, HyperVGenV1
			delete(d.Features, "SecurityType")
		}, []string{"Arm64 images are Generation 2 only", `set hyper_v_generation="V2"`}},
		{"arm64 no generation", false, func(d *ImageDefinition) {
			d.Architecture, d.HyperVGeneration = ArchArm64, ""
			delete(d.Features, "SecurityType")
		}, []string{"Arm64 images are Generation 2 only"}},
		{"TrustedLaunch community", true, func(d *ImageDefinition) { d.Features["SecurityType"] = "TrustedLaunch" },
			[]string{"private galleries only", "use TrustedLaunchSupported in a community gallery"}},
		{"ConfidentialVM community", true, func(d *ImageDefinition) { d.Features["SecurityType"] = "ConfidentialVM" },
			[]string{"private galleries only", "use ConfidentialVMSupported"}},
		{"security type v1", false, func(d *ImageDefinition) { d.HyperVGeneration = HyperVGenV1 },
			[]string{`invalid feature SecurityType "TrustedLaunchAndConfidentialVmSupported": requires a Generation 2 image`}},
		{"security type bad", false, func(d *ImageDefinition) { d.Features["SecurityType"] = "Standard" }, []string{"is not one of TrustedLaunchSupported"}},
		{"security type case", false, func(d *ImageDefinition) { d.Features["SecurityType"] = "trustedlaunchsupported" },
			[]string{"did you mean TrustedLaunchSupported?"}},
		{"unknown feature", false, func(d *ImageDefinition) { d.Features["IsSecureBootSupported"] = "true" },
			[]string{`invalid feature "IsSecureBootSupported"`, "use one of SecurityType"}},
		{"feature case", false, func(d *ImageDefinition) { d.Features["securityType"] = "TrustedLaunchSupported" },
			[]string{"did you mean SecurityType?"}},
		{"bool feature", false, func(d *ImageDefinition) { d.Features["IsAcceleratedNetworkSupported"] = "yes" },
			[]string{"feature IsAcceleratedNetworkSupported", "is not one of true, false"}},
		{"disk controllers spaced", false, func(d *ImageDefinition) { d.Features["DiskControllerTypes"] = "SCSI, NVMe" },
			[]string{"did you mean SCSI,NVMe?"}},
		{"disk controllers nvme only", false, func(d *ImageDefinition) { d.Features["DiskControllerTypes"] = "NVMe" },
			[]string{"is not one of SCSI, SCSI,NVMe"}},
		{"past eol", false, func(d *ImageDefinition) { d.EndOfLife = &past }, []string{"end of life", "is not in the future"}},
		{"names", false, func(d *ImageDefinition) {
			d.Name, d.Gallery, d.Publisher, d.Offer, d.SKU = "-x", "a-b", "", "o.", strings.Repeat("s", 65)
		}, []string{"image definition name", "gallery name", `invalid publisher ""`, "invalid offer", "invalid SKU"}},
		{"enums", false, func(d *ImageDefinition) { d.OSType, d.OSState, d.Architecture = "", "generalized", "arm64" },
			[]string{"invalid os type", "did you mean Generalized?", "did you mean Arm64?"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := goodDefinition()
			c.change(&d)
			err := ValidateImageDefinition(d, c.community, testNow)
			if c.want == nil {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, w := range c.want {
				assert.ErrorContains(t, err, w)
			}
			var ve *ValidationError
			assert.True(t, errors.As(err, &ve))
		})
	}
}

const testSub = "00000000-0000-0000-0000-000000000000"

func goodVersion() ImageVersion {
	return ImageVersion{
		Name:          "4152.2.3",
		ResourceGroup: "flatcar-images",
		Gallery:       "flatcar_staging",
		Definition:    "flatcar-stable-amd64",
		Location:      "westeurope",
		Source: ImageSource{
			Kind:             SourceVHD,
			URI:              "https://flatcarimages.blob.core.windows.net/vhds/flatcar-linux-4152.2.3-stable-amd64.vhd",
			StorageAccountID: StorageAccountID(testSub, "flatcar-images", "flatcarimages"),
		},
		TargetRegions: []TargetRegion{{Name: "westeurope"}, {Name: "eastus", ReplicaCount: 3, StorageAccountType: StorageStandardZRS}},
	}
}

func TestValidateImageVersion(t *testing.T) {
	past := testNow.Add(-time.Minute)
	versionID := ImageVersionID(testSub, "rg", "flatcar_staging", "flatcar-stable-amd64", "4152.2.3")
	cases := []struct {
		name   string
		change func(*ImageVersion)
		want   []string
	}{
		{"ok vhd", func(*ImageVersion) {}, nil},
		{"ok version source", func(v *ImageVersion) { v.Source = ImageSource{Kind: SourceImageVersion, ID: versionID} }, nil},
		{"ok managed image", func(v *ImageVersion) {
			v.Source = ImageSource{Kind: SourceManagedImage, ID: ManagedImageID(testSub, "rg", "img")}
		}, nil},
		{"ok emulator vhd", func(v *ImageVersion) {
			v.Source.URI = "http://127.0.0.1:10000/devstoreaccount1/vhds/f.vhd"
			v.Source.StorageAccountID = StorageAccountID(testSub, "rg", "devstoreaccount1")
		}, nil},
		{"ok replicas", func(v *ImageVersion) { v.ReplicaCount, v.StorageAccountType = 100, StoragePremiumLRS }, nil},

		{"bad version", func(v *ImageVersion) { v.Name = "1.0.202612021200" }, []string{"exceeds 2147483647"}},
		{"replicas", func(v *ImageVersion) { v.ReplicaCount = 101 }, []string{`invalid replica count "101"`}},
		{"storage type", func(v *ImageVersion) { v.StorageAccountType = "standard_zrs" }, []string{"did you mean Standard_ZRS?"}},
		{"eol", func(v *ImageVersion) { v.EndOfLife = &past }, []string{"is not in the future"}},
		{"no source", func(v *ImageVersion) { v.Source = ImageSource{} }, []string{`invalid source ""`, "is required"}},
		{"bad kind", func(v *ImageVersion) { v.Source.Kind = "iso" }, []string{"is not a known source kind"}},
		{"vhd missing all", func(v *ImageVersion) { v.Source = ImageSource{Kind: SourceVHD} },
			[]string{"invalid source uri", "invalid source storage account id"}},
		{"vhd wrong account type", func(v *ImageVersion) { v.Source.StorageAccountID = ManagedImageID(testSub, "rg", "x") },
			[]string{"is a Microsoft.Compute/images resource, not a storage account (Microsoft.Storage/storageAccounts)"}},
		{"vhd account mismatch", func(v *ImageVersion) { v.Source.StorageAccountID = StorageAccountID(testSub, "rg", "other") },
			[]string{`names account "other" but the source uri is in account "flatcarimages"`}},
		{"vhd sas", func(v *ImageVersion) { v.Source.URI += "?sig=SECRET" }, []string{"carries a query string"}},
		{"vhd not vhd", func(v *ImageVersion) { v.Source.URI = "https://flatcarimages.blob.core.windows.net/vhds/flatcar.img" },
			[]string{"does not end with .vhd"}},
		{"vhd bad container", func(v *ImageVersion) { v.Source.URI = "https://flatcarimages.blob.core.windows.net/VHDs/f.vhd" },
			[]string{"invalid container name"}},
		{"vhd not a url", func(v *ImageVersion) { v.Source.URI = "flatcar.vhd" }, []string{"is not a blob URL"}},
		{"version id wrong type", func(v *ImageVersion) {
			v.Source = ImageSource{Kind: SourceImageVersion, ID: ImageDefinitionID(testSub, "rg", "g", "d")}
		}, []string{"is a Microsoft.Compute/galleries/images resource, not a gallery image version"}},
		{"managed image id is a version", func(v *ImageVersion) { v.Source = ImageSource{Kind: SourceManagedImage, ID: versionID} },
			[]string{"set the source kind to image_version"}},
		{"id not arm", func(v *ImageVersion) { v.Source = ImageSource{Kind: SourceManagedImage, ID: "img"} },
			[]string{"is not an ARM resource id"}},
		{"id missing", func(v *ImageVersion) { v.Source = ImageSource{Kind: SourceImageVersion} },
			[]string{"is required for a gallery image version source"}},
		{"source region missing", func(v *ImageVersion) { v.TargetRegions = []TargetRegion{{Name: "eastus"}} },
			[]string{"add westeurope: Azure requires the image version's own region among its target regions"}},
		{"parents", func(v *ImageVersion) { v.Gallery, v.Definition = "a-b", "-d" },
			[]string{"invalid gallery name", "invalid image definition name"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := goodVersion()
			c.change(&v)
			err := ValidateImageVersion(v, testNow)
			if c.want == nil {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, w := range c.want {
				assert.ErrorContains(t, err, w)
			}
			assert.NotContains(t, err.Error(), "SECRET")
			var ve *ValidationError
			assert.True(t, errors.As(err, &ve))
		})
	}
}

var testLocations = []Location{
	{Name: "westeurope", DisplayName: "West Europe", RegionType: RegionTypePhysical},
	{Name: "northeurope", DisplayName: "North Europe", RegionType: RegionTypePhysical},
	{Name: "eastus", DisplayName: "East US", RegionType: RegionTypePhysical},
	{Name: "eastus2", DisplayName: "East US 2", RegionType: RegionTypePhysical},
	{Name: "westus", DisplayName: "West US", RegionType: RegionTypePhysical},
	{Name: "europe", DisplayName: "Europe", RegionType: RegionTypeLogical},
	{Name: "edgezone", DisplayName: "Edge", RegionType: "Extended"},
}

func regions(names ...string) []TargetRegion {
	out := make([]TargetRegion, len(names))
	for i, n := range names {
		out[i] = TargetRegion{Name: n}
	}
	return out
}

func TestValidateTargetRegions(t *testing.T) {
	cases := []struct {
		name    string
		source  string
		regions []TargetRegion
		known   []Location
		want    []string
	}{
		{"ok", "westeurope", regions("westeurope", "eastus"), nil, nil},
		{"ok known", "westeurope", regions("eastus", "westeurope", "northeurope"), testLocations, nil},
		{"ok replicas", "westeurope", []TargetRegion{{Name: "westeurope", ReplicaCount: 100, StorageAccountType: StoragePremiumLRS}}, nil, nil},

		{"missing source", "westeurope", regions("eastus", "northeurope"), nil,
			[]string{`invalid target regions "eastus,northeurope": do not include the source region "westeurope"`,
				"add westeurope: Azure requires the image version's own region among its target regions"}},
		{"empty", "westeurope", nil, nil, []string{"add westeurope"}},
		{"no source", "", regions("westeurope"), nil, []string{`invalid location ""`, "is required"}},
		{"duplicate", "westeurope", regions("westeurope", "WestEurope"), nil,
			[]string{`invalid target regions "WestEurope": is a duplicate of entry 1 ("westeurope")`, "remove one of them"}},
		{"duplicate exact", "westeurope", regions("westeurope", "eastus", "eastus"), nil, []string{`"eastus": is a duplicate of entry 2`}},
		{"syntax", "westeurope", regions("westeurope", "East US"), nil,
			[]string{`invalid target region "East US"`, "not its display name", `here "eastus"`}},
		{"logical", "westeurope", regions("westeurope", "europe"), testLocations,
			[]string{`invalid target region "europe": is a geography, not a region`}},
		{"extended", "westeurope", regions("westeurope", "edgezone"), testLocations, []string{`has region type "Extended"`}},
		{"unknown", "westeurope", regions("westeurope", "westeuroep"), testLocations,
			[]string{`invalid target region "westeuroep": is not a location of this subscription`, "did you mean westeurope?"}},
		{"unknown several", "westeurope", regions("westeurope", "eastus3"), testLocations,
			[]string{"did you mean eastus or eastus2?"}},
		{"unknown far", "westeurope", regions("westeurope", "antarcticasouth"), testLocations,
			[]string{"az account list-locations"}},
		{"known empty", "westeurope", regions("westeurope"), []Location{}, []string{"is not a location of this subscription"}},
		{"replicas", "westeurope", []TargetRegion{{Name: "westeurope", ReplicaCount: 101}, {Name: "eastus", ReplicaCount: -1}}, nil,
			[]string{`invalid replica count "101": of target region "westeurope"`, `invalid replica count "-1"`}},
		{"storage type", "westeurope", []TargetRegion{{Name: "westeurope", StorageAccountType: "Premium_ZRS"}}, nil,
			[]string{`invalid storage account type "Premium_ZRS": (target region "westeurope") is not one of`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := ValidateTargetRegions(c.source, c.regions, c.known)
			if c.want == nil {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, w := range c.want {
				assert.ErrorContains(t, err, w)
			}
			var ve *ValidationError
			assert.True(t, errors.As(err, &ve))
		})
	}
}

func TestSuggestRegions(t *testing.T) {
	known := []Location{
		{Name: "eastus", RegionType: RegionTypePhysical},
		{Name: "eastus2", RegionType: RegionTypePhysical},
		{Name: "eastus3", RegionType: RegionTypePhysical},
		{Name: "eastus4", RegionType: RegionTypePhysical},
		{Name: "eastusx", RegionType: RegionTypeLogical},
		{Name: "westeurope", DisplayName: "West Europe", RegionType: RegionTypePhysical},
	}
	assert.Equal(t, []string{"eastus", "eastus2", "eastus3"}, suggestRegions("eastus5", known, 3))
	assert.Equal(t, []string{"westeurope"}, suggestRegions("West Europe", known, 3))
	assert.Empty(t, suggestRegions("brazilsouth", known, 3))
}

func TestEditDistance(t *testing.T) {
	assert.Equal(t, 0, editDistance("", ""))
	assert.Equal(t, 3, editDistance("", "abc"))
	assert.Equal(t, 2, editDistance("westeuroep", "westeurope"))
	assert.Equal(t, 1, editDistance("eastus3", "eastus2"))
	assert.Equal(t, 3, editDistance("kitten", "sitting"))
}

func TestValidateStorageNames(t *testing.T) {
	runCases(t, ValidateStorageAccountName, []vcase{
		{"flatcarimages", ""},
		{"abc", ""},
		{strings.Repeat("a", 24), ""},
		{"ab", "is 2 characters long; it must be 3–24"},
		{strings.Repeat("a", 25), "it must be 3–24"},
		{"FlatcarImages", "use lowercase: flatcarimages"},
		{"flatcar-images", "contains '-'"},
	})
	runCases(t, ValidateContainerName, []vcase{
		{"vhds", ""},
		{"flatcar-vhds-2", ""},
		{"1ab", ""},
		{strings.Repeat("c", 63), ""},
		{"ab", "it must be 3–63"},
		{strings.Repeat("c", 64), "it must be 3–63"},
		{"-vhds", "must start with a letter or digit"},
		{"vhds-", "must not end with '-'"},
		{"a--b", `contains "--"`},
		{"VHDs", "use lowercase: vhds"},
		{"vh_ds", "contains '_'"},
	})
	runCases(t, ValidateBlobName, []vcase{
		{"flatcar.vhd", ""},
		{"dir/sub/flatcar.img", ""},
		{strings.Repeat("b", 1024), ""},
		{"", "is empty"},
		{strings.Repeat("b", 1025), "maximum is 1024"},
		{"flatcar.", "must not end with '.' or '/'"},
		{"dir/", "must not end with '.' or '/'"},
	})
	runCases(t, ValidateVHDBlobName, []vcase{
		{"flatcar-linux-4152.2.3-stable-amd64.vhd", ""},
		{"images/FLATCAR.VHD", ""},
		{"flatcar.img", "does not end with .vhd"},
		{"flatcar", "e.g. flatcar.vhd"},
		{"flatcar.vhd/", "must not end with '.' or '/'"},
	})
}

func TestParseEndOfLife(t *testing.T) {
	got, err := ParseEndOfLife("2027-01-31", testNow)
	require.NoError(t, err)
	assert.Equal(t, time.Date(2027, 1, 31, 12, 59, 59, 0, time.UTC), got)

	got, err = ParseEndOfLife("2027-01-31T08:00:00+02:00", testNow)
	require.NoError(t, err)
	assert.Equal(t, time.Date(2027, 1, 31, 6, 0, 0, 0, time.UTC), got)

	// Today's bare date is still in the future until 12:59:59Z.
	_, err = ParseEndOfLife("2026-06-01", testNow)
	require.NoError(t, err)

	for in, want := range map[string]string{
		"2026-05-31":           "is not in the future",
		"2026-06-01T10:00:00Z": "is not in the future",
		"31/01/2027":           "is neither an RFC 3339 time nor a yyyy-MM-dd date",
		"2027-01-31 10:00":     "is neither",
		"":                     "is neither",
	} {
		_, err := ParseEndOfLife(in, testNow)
		assert.ErrorContains(t, err, want, in)
		assert.ErrorContains(t, err, `invalid end of life "`+in+`"`, in)
		var ve *ValidationError
		assert.True(t, errors.As(err, &ve), in)
	}
}
