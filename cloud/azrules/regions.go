package azrules

import (
	"slices"
	"strings"

	"github.com/imgflow/imgflow/cloud"
)

// Regions is a subscription's location list, looked up the way ARM reads
// a location: by name or display name, ignoring case and spaces
// ("West Europe" is "westeurope").
type Regions struct {
	locs []cloud.Location
	// byName holds positions in locs: a map of whole Locations was most
	// of a simulation's start-up allocation (each simulation indexes the
	// hundred-odd regions twice over).
	byName map[string]int32
}

// NewRegions indexes a copy of locs.
func NewRegions(locs []cloud.Location) Regions { return IndexRegions(slices.Clone(locs)) }

// IndexRegions indexes locs itself, without a copy: for a list made for
// the index (as DefaultLocations returns one), which nothing changes
// afterwards.
func IndexRegions(locs []cloud.Location) Regions {
	r := Regions{locs: locs, byName: make(map[string]int32, 2*len(locs))}
	for i, l := range r.locs {
		r.byName[fold(l.Name)] = int32(i)
		if l.DisplayName != "" {
			r.byName[fold(l.DisplayName)] = int32(i)
		}
	}
	return r
}

func fold(s string) string { return strings.ToLower(strings.ReplaceAll(s, " ", "")) }

// Lookup finds a location by name or display name.
func (r Regions) Lookup(name string) (cloud.Location, bool) {
	i, ok := r.byName[fold(name)]
	if !ok {
		return cloud.Location{}, false
	}
	return r.locs[i], true
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
