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

// CheckVMOSProfilePresence refuses VM id whose osProfile does not fit
// its image's OS state: a generalized image needs one (the admin account
// the VM is provisioned with), a specialized one keeps the account it was
// captured with and must not have one.
func CheckVMOSProfilePresence(id, osState string, hasOSProfile bool) error {
	specialized := strings.EqualFold(osState, cloud.OSStateSpecialized)
	switch {
	case specialized && hasOSProfile:
		return InvalidParameter(id, "Parameter 'osProfile' is not allowed with a specialized image.")
	case !specialized && !hasOSProfile:
		return InvalidParameter(id, "Required parameter 'osProfile' is missing (null).")
	}
	return nil
}

// CheckVMLocation refuses the PUT of a new VM id without a location.
func CheckVMLocation(id, location string) error {
	if location == "" {
		return cloud.Errorf(cloud.CodeLocationRequired, id, "The location property is required for this definition.")
	}
	return nil
}

// NICConfig is a VM's network interface configuration as the network
// rule sees it: its name and the subnet id of each IP configuration (""
// for one without a subnet).
type NICConfig struct {
	Name    string
	Subnets []string
}

// CheckVMNetwork refuses VM id's network profile unless it has a network
// interface (nics existing ones, or configs to make), names
// networkApiVersion with configurations, and every subnet is one of an
// existing virtual network (vnetExists, given the lowercased vnet id).
func CheckVMNetwork(id string, nics int, configs []NICConfig, networkAPIVersion string, vnetExists func(vnetID string) bool) error {
	if nics == 0 && len(configs) == 0 {
		return InvalidParameter(id, "Required parameter 'networkProfile' is missing (null): a VM needs a network interface.")
	}
	if len(configs) > 0 && networkAPIVersion == "" {
		return InvalidParameter(id, "networkProfile.networkApiVersion is required with networkInterfaceConfigurations.")
	}
	for _, nic := range configs {
		for _, subnet := range nic.Subnets {
			if subnet == "" {
				return InvalidParameter(id, "Required parameter 'ipConfigurations.subnet' is missing (null).")
			}
			vnet, _, ok := strings.Cut(strings.ToLower(subnet), "/subnets/")
			if !ok || !vnetExists(vnet) {
				return cloud.Errorf(cloud.CodeInvalidResourceReference, id, "Resource %s referenced by resource %s was not found.", subnet, nic.Name)
			}
		}
	}
	return nil
}

// GalleryImageNotFound is ARM's answer to VM id of a gallery image (a
// version, or a definition's latest) that does not exist or is not
// replicated to the VM's location; Azure does not tell which
// (testdata/azure/contract/vm/10_vm_create_not_replicated.json).
func GalleryImageNotFound(id, image, location string) *cloud.Error {
	return cloud.Errorf(cloud.CodeGalleryImageNotFound, id,
		"The gallery image %s is not available in %s region. Please contact image owner to replicate to this region, or change your requested region.", image, location)
}

// MaxWindowsComputerName is how long a Windows VM's
// osProfile.computerName may be (NetBIOS); Linux allows 64.
const MaxWindowsComputerName = 15

// CheckVMOSProfile refuses VM id's osProfile for an image of osType as ARM
// does: a Windows image takes windowsConfiguration and an admin password
// of 8 to 123 characters with three of lower case, upper case, digit and
// other (no control characters), and a computer name of at most 15
// characters; a Linux image takes no windowsConfiguration
// (VirtualMachine_Create_WindowsVmWithPatchSettingModeOfManual and
// VirtualMachine_Create_WithSshAuthentication in the Compute REST
// examples).
func CheckVMOSProfile(id, osType, computerName, password string, linuxConfig, windowsConfig bool) error {
	if !strings.EqualFold(osType, cloud.OSTypeWindows) {
		if windowsConfig {
			return InvalidParameter(id, "Parameter 'osProfile.windowsConfiguration' is not allowed for a Linux image.")
		}
		return nil
	}
	if linuxConfig {
		return InvalidParameter(id, "Parameter 'osProfile.linuxConfiguration' is not allowed for a Windows image.")
	}
	if password == "" {
		return InvalidParameter(id, "Required parameter 'adminPassword' is missing (null).")
	}
	if !windowsPasswordOK(password) {
		return InvalidParameter(id, "The supplied password must be between 8-123 characters long and must satisfy at least 3 of password complexity requirements from the following: 1) Contains an uppercase character 2) Contains a lowercase character 3) Contains a numeric digit 4) Contains a special character 5) Control characters are not allowed")
	}
	if len(computerName) > MaxWindowsComputerName || strings.Trim(computerName, "0123456789") == "" {
		return InvalidParameter(id, "Windows computer name cannot be more than 15 characters long, be entirely numeric, or contain the following characters: ` ~ ! @ # $ %% ^ & * ( ) = + _ [ ] { } \\ | ; : . ' \" , < > / ?.")
	}
	return nil
}

func windowsPasswordOK(pw string) bool {
	if len(pw) < 8 || len(pw) > 123 {
		return false
	}
	var lower, upper, digit, other bool
	for _, r := range pw {
		switch {
		case r < 0x20 || r == 0x7f:
			return false
		case r >= 'a' && r <= 'z':
			lower = true
		case r >= 'A' && r <= 'Z':
			upper = true
		case r >= '0' && r <= '9':
			digit = true
		default:
			other = true
		}
	}
	n := 0
	for _, b := range []bool{lower, upper, digit, other} {
		if b {
			n++
		}
	}
	return n >= 3
}
