package azrules

import (
	"fmt"
	"strings"

	"github.com/imgflow/imgflow/cloud"
)

// CheckGalleryRegion refuses a nested resource (what, e.g. "image
// definitions") whose location is not its gallery's region; an empty
// location means the gallery's.
func CheckGalleryRegion(regions Regions, galleryLocation, location, id, what string) error {
	if location == "" {
		return nil
	}
	if loc, ok := regions.Physical(location); !ok || !strings.EqualFold(loc, galleryLocation) {
		return InvalidParameter(id, "Location '%s' is invalid: %s must be in the gallery's region '%s'.", location, what, galleryLocation)
	}
	return nil
}

// CheckCommunityFeatures refuses, in a gallery shared with the community,
// a definition whose SecurityType feature only private galleries support.
func CheckCommunityFeatures(id, gallery string, communityEnabled bool, features map[string]string) error {
	if !communityEnabled {
		return nil
	}
	if sec, bad := cloud.PrivateOnlySecurityType(features); bad {
		return InvalidParameter(id,
			"SecurityType '%s' is not supported in community gallery '%s'; use TrustedLaunchSupported, ConfidentialVMSupported or TrustedLaunchAndConfidentialVmSupported.",
			sec, gallery)
	}
	return nil
}

// CheckShareable refuses sharing gallery g with the community when it is
// not a community gallery or holds a definition (of defs) with a
// private-only SecurityType. Sharing an already shared gallery is fine.
func CheckShareable(g *cloud.Gallery, defs []cloud.ImageDefinition) error {
	if g.Community == nil {
		return InvalidParameter(g.ID,
			"Gallery '%s' is not a community gallery: only a gallery created with sharingProfile.permissions 'Community' and communityGalleryInfo can be shared with the community.", g.Name)
	}
	if g.CommunityEnabled {
		return nil
	}
	for _, d := range defs {
		if sec, bad := cloud.PrivateOnlySecurityType(d.Features); bad {
			return InvalidParameter(g.ID,
				"Gallery '%s' cannot be shared with the community: image definition '%s' has SecurityType '%s', which is only supported in private galleries.",
				g.Name, d.Name, sec)
		}
	}
	return nil
}

// DefinitionDefaults fills what Azure defaults in an image definition
// PUT, for the API version imgflow uses.
func DefinitionDefaults(in *cloud.ImageDefinition) {
	if in.HyperVGeneration == "" {
		in.HyperVGeneration = cloud.HyperVGenV1
	}
	if in.Architecture == "" {
		in.Architecture = cloud.ArchX64
	}
}

// ImmutableDefinitionFields refuses a PUT changing an existing
// definition's identity, naming every changed property as Azure does.
func ImmutableDefinitionFields(old, in *cloud.ImageDefinition) error {
	fields := []struct{ name, old, new string }{
		{"osType", old.OSType, in.OSType},
		{"osState", old.OSState, in.OSState},
		{"hyperVGeneration", old.HyperVGeneration, in.HyperVGeneration},
		{"identifier.publisher", old.Publisher, in.Publisher},
		{"identifier.offer", old.Offer, in.Offer},
		{"identifier.sku", old.SKU, in.SKU},
		{"architecture", old.Architecture, in.Architecture},
	}
	var changed []string
	for _, f := range fields {
		if !strings.EqualFold(f.old, f.new) {
			changed = append(changed, fmt.Sprintf("Changing property '%s' is not allowed ('%s' -> '%s').", f.name, f.old, f.new))
		}
	}
	if len(changed) == 0 {
		return nil
	}
	return cloud.Errorf(cloud.CodePropertyChangeNotAllowed, old.ID, "%s", strings.Join(changed, " "))
}

// UniqueIdentifier refuses definition in (with ARM id id) when another
// definition of its gallery (of others; in itself is skipped by name)
// has the same (publisher, offer, sku).
func UniqueIdentifier(id, gallery string, in *cloud.ImageDefinition, others []cloud.ImageDefinition) error {
	for _, o := range others {
		if strings.EqualFold(o.Name, in.Name) {
			continue
		}
		if strings.EqualFold(o.Publisher, in.Publisher) && strings.EqualFold(o.Offer, in.Offer) && strings.EqualFold(o.SKU, in.SKU) {
			return cloud.Errorf(cloud.CodeConflict, id,
				"Image definition '%s' in gallery '%s' already uses publisher '%s', offer '%s' and SKU '%s'; the (publisher, offer, sku) identifier must be unique within a gallery.",
				o.Name, gallery, o.Publisher, o.Offer, o.SKU)
		}
	}
	return nil
}

// Disk security types (DiskSecurityTypes) the simulated targets support.
const (
	SecurityTrustedLaunch  = "TrustedLaunch"
	SecurityConfidentialVM = "ConfidentialVM"
)

// DiskSecurityType canonicalises the security type s of disk id ("" is a
// standard disk) and refuses one the simulated targets do not support.
func DiskSecurityType(id, s string) (string, error) {
	for _, t := range []string{"", SecurityTrustedLaunch, SecurityConfidentialVM} {
		if strings.EqualFold(s, t) {
			return t, nil
		}
	}
	return "", InvalidParameter(id, "The value '%s' of securityProfile.securityType is not supported; use %s or %s, or none for a standard disk.",
		s, SecurityTrustedLaunch, SecurityConfidentialVM)
}
