package cloud

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValidateCaptureAppliesAzureRules(t *testing.T) {
	x64 := &ImageDefinition{Name: "x64def", OSState: OSStateGeneralized, Architecture: ArchX64}
	arm := &ImageDefinition{Name: "armdef", OSState: OSStateGeneralized, Architecture: ArchArm64}
	noArch := &ImageDefinition{Name: "plain", OSState: OSStateGeneralized}
	cvmDef := &ImageDefinition{Name: "cvmdef", OSState: OSStateSpecialized, Architecture: ArchX64, Features: map[string]string{"SecurityType": "ConfidentialVM"}}
	for name, tc := range map[string]struct {
		c    Capture
		dest *ImageDefinition
		want []string
	}{
		"x64 through a managed image":                {Capture{Architecture: ArchX64, ManagedImage: true}, x64, nil},
		"unknown arch, managed image":                {Capture{ManagedImage: true}, x64, nil},
		"arm64 straight to the gallery":              {Capture{Architecture: ArchArm64}, arm, nil},
		"cvm straight to the gallery":                {Capture{SecurityType: "ConfidentialVM", Specialized: true}, cvmDef, nil},
		"default architecture is x64":                {Capture{Architecture: ArchX64}, noArch, nil},
		"arm64 managed image":                        {Capture{Architecture: ArchArm64, ManagedImage: true}, arm, []string{"Azure cannot capture a managed image from an Arm64 VM", "remove managed_image_name"}},
		"arm64 managed image, no dest":               {Capture{Architecture: ArchArm64, ManagedImage: true}, nil, []string{"Azure cannot capture a managed image from an Arm64 VM"}},
		"cvm managed image":                          {Capture{SecurityType: "ConfidentialVM", ManagedImage: true, Specialized: true}, cvmDef, []string{"ConfidentialVM is never captured as a managed image", "specialized = true"}},
		"specialized into generalized":               {Capture{Architecture: ArchX64, Specialized: true}, x64, []string{"publishes a specialized VM, but gallery image definition x64def is Generalized"}},
		"generalized into specialized":               {Capture{SecurityType: "ConfidentialVM"}, cvmDef, []string{"publishes a generalized VM, but gallery image definition cvmdef is Specialized", "set shared_image_gallery_destination.specialized = true"}},
		"arm64 into x64":                             {Capture{Architecture: ArchArm64}, x64, []string{"the build VM is Arm64, but gallery image definition x64def is x64"}},
		"arm64 into default x64":                     {Capture{Architecture: ArchArm64}, noArch, []string{"gallery image definition plain is x64"}},
		"x64 into arm64":                             {Capture{Architecture: ArchX64, ManagedImage: true}, arm, []string{"the build VM is x64, but gallery image definition armdef is Arm64"}},
		"cvm into a definition with no SecurityType": {Capture{SecurityType: "ConfidentialVM", Specialized: true}, &ImageDefinition{Name: "d", OSState: OSStateSpecialized}, []string{"needs a definition whose SecurityType is ConfidentialVM"}},
	} {
		t.Run(name, func(t *testing.T) {
			err := ValidateCapture(tc.c, tc.dest)
			if tc.want == nil {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, w := range tc.want {
				assert.ErrorContains(t, err, w)
			}
			var ve *ValidationError
			assert.True(t, errors.As(err, &ve), "want a *ValidationError, got %T", err)
		})
	}
}

func TestValidateCaptureReportsEveryRule(t *testing.T) {
	x64 := &ImageDefinition{Name: "x64def", OSState: OSStateGeneralized, Architecture: ArchX64}
	err := ValidateCapture(Capture{Architecture: ArchArm64, ManagedImage: true, Specialized: true}, x64)
	require.Error(t, err)
	assert.ErrorContains(t, err, "Arm64 VM")
	assert.ErrorContains(t, err, "specialized VM")
	assert.ErrorContains(t, err, "the build VM is Arm64")
}
