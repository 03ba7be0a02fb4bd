package azrules

import (
	"strings"

	"github.com/imgflow/imgflow/cloud"
)

// Regions is a subscription's location list, looked up the way ARM reads
// a location: by name or display name, ignoring case and spaces
// ("West Europe" is "westeurope").
type Regions struct {
	byName map[string]cloud.Location
}

// NewRegions indexes locs.
func NewRegions(locs []cloud.Location) Regions {
	idx := make(map[string]cloud.Location, 2*len(locs))
	for _, l := range locs {
		idx[fold(l.Name)] = l
		if l.DisplayName != "" {
			idx[fold(l.DisplayName)] = l
		}
	}
	return Regions{byName: idx}
}

func fold(s string) string { return strings.ToLower(strings.ReplaceAll(s, " ", "")) }

// Lookup finds a location by name or display name.
func (r Regions) Lookup(name string) (cloud.Location, bool) {
	l, ok := r.byName[fold(name)]
	return l, ok
}

// Physical resolves a location to its canonical physical region name; ok
// is false for unknown and logical locations, where nothing can be
// deployed.
func (r Regions) Physical(name string) (string, bool) {
	l, ok := r.Lookup(name)
	if !ok || l.RegionType == cloud.RegionTypeLogical {
		return "", false
	}
	return l.Name, true
}

// Resolve is Physical with ARM's answer for a location resource (of
// resourceType, e.g. "Microsoft.Compute/galleries") cannot be deployed to.
func (r Regions) Resolve(name, resourceType, resource string) (string, error) {
	loc, ok := r.Physical(name)
	if !ok {
		return "", cloud.Errorf(cloud.CodeLocationNotAvailableForResourceType, resource,
			"The provided location '%s' is not available for resource type '%s'.", name, resourceType)
	}
	return loc, nil
}

// DisplayName is how Azure spells a region in gallery answers ("West
// Europe"); an unknown name comes back unchanged.
func (r Regions) DisplayName(name string) string {
	if l, ok := r.Lookup(name); ok && l.DisplayName != "" {
		return l.DisplayName
	}
	return name
}

// Canonical is a location's name ("westeurope" for "West Europe"); an
// unknown one comes back folded.
func (r Regions) Canonical(name string) string {
	if l, ok := r.Lookup(name); ok {
		return l.Name
	}
	return fold(name)
}
