package cloud

import "strings"

// Capture is what a build VM is turned into: Azure's rules for capturing a
// VM as a managed image or publishing it straight to a gallery image
// version (packer's azure-arm builder does one or the other).
type Capture struct {
	// Architecture is the VM's CPU architecture (x64 or Arm64; "" when
	// unknown, e.g. a marketplace image not checked locally).
	Architecture string
	// SecurityType is the VM's security type: "", TrustedLaunch or
	// ConfidentialVM.
	SecurityType string
	// ManagedImage says the VM is captured as a managed image first (and
	// the image, if any gallery version, published from it).
	ManagedImage bool
	// Specialized says the VM is published as is, not generalized
	// (packer's shared_image_gallery_destination.specialized).
	Specialized bool
}

// ValidateCapture applies Azure's rules for capturing the VM described by
// c, and, when dest is not nil, for publishing it as a version of the
// gallery image definition dest. Every broken rule is reported, each with
// its fix.
func ValidateCapture(c Capture, dest *ImageDefinition) error {
	var p problemList
	arm64 := strings.EqualFold(c.Architecture, ArchArm64)
	cvm := strings.EqualFold(c.SecurityType, securityConfidentialVM)
	if c.ManagedImage && arm64 {
		// OperationNotAllowed "… CPU Architecture 'Arm64' is not supported"
		// (hashicorp/packer-plugin-azure#287).
		p.add(invalid("capture", "managed image", "Azure cannot capture a managed image from an Arm64 VM",
			"publish straight to the gallery: remove managed_image_name and managed_image_resource_group_name and keep shared_image_gallery_destination"))
	}
	if c.ManagedImage && cvm {
		p.add(invalid("capture", "managed image", "a ConfidentialVM is never captured as a managed image: its OS disk carries the VM guest state",
			"publish straight to the gallery as a Specialized image: remove the managed_image_* keys and set shared_image_gallery_destination.specialized = true"))
	}
	if dest == nil {
		return p.err()
	}
	defSpecialized := strings.EqualFold(dest.OSState, OSStateSpecialized)
	switch {
	case c.Specialized && !defSpecialized:
		p.add(invalid("os state", OSStateSpecialized, "the build publishes a specialized VM, but gallery image definition "+dest.Name+" is "+dest.OSState,
			"publish into a definition with os_state = \"Specialized\", or generalize the VM (remove shared_image_gallery_destination.specialized)"))
	case !c.Specialized && defSpecialized:
		p.add(invalid("os state", OSStateGeneralized, "the build publishes a generalized VM, but gallery image definition "+dest.Name+" is Specialized",
			"set shared_image_gallery_destination.specialized = true, or publish into a Generalized definition"))
	}
	defArch := dest.Architecture
	if defArch == "" {
		defArch = ArchX64 // Azure's default
	}
	if c.Architecture != "" && !strings.EqualFold(c.Architecture, defArch) {
		p.add(invalid("architecture", c.Architecture, "the build VM is "+c.Architecture+", but gallery image definition "+dest.Name+" is "+defArch,
			"publish into a definition with architecture = \""+c.Architecture+"\", or build from an image of architecture "+defArch))
	}
	if cvm && !strings.HasPrefix(dest.Features[featureSecurityType], securityConfidentialVM) && dest.Features[featureSecurityType] != securityTrustedLaunchAndCVM {
		p.add(invalid("feature SecurityType", dest.Features[featureSecurityType], "a ConfidentialVM image needs a definition whose SecurityType is ConfidentialVM (or ConfidentialVMSupported)",
			"publish into a definition with features = {\"SecurityType\": \"ConfidentialVM\"}"))
	}
	return p.err()
}
