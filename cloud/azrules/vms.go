package azrules

import (
	"strings"

	"github.com/imgflow/imgflow/cloud"
)

// CheckVMSize refuses VM id without a size (hardwareProfile.vmSize).
func CheckVMSize(id, size string) error {
	if size == "" {
		return InvalidParameter(id, "Required parameter 'hardwareProfile.vmSize' is missing (null).")
	}
	return nil
}

// CheckVMSecurity refuses VM id with a security type (TrustedLaunch,
// ConfidentialVM) booting imageID of Hyper-V generation V1.
func CheckVMSecurity(id, security, imageID, hyperV string) error {
	if security != "" && strings.EqualFold(hyperV, cloud.HyperVGenV1) {
		return InvalidParameter(id, "Security type '%s' requires a Hyper-V generation V2 image, but %s is %s.", security, imageID, hyperV)
	}
	return nil
}

// CheckVMImageLocation refuses VM id in location from a managed image
// in another region (a managed image is not replicated).
func CheckVMImageLocation(id, imageID, imageLocation, location string) error {
	if !strings.EqualFold(imageLocation, location) {
		return InvalidParameter(id, "The managed image %s is in %s; a VM in %s cannot use it.", imageID, imageLocation, location)
	}
	return nil
}
