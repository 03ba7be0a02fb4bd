package local

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/imgflow/imgflow/cloud"
)

// lookupDefinition returns the image definition; childID works as in
// lookupGallery.
func (p *Provider) lookupDefinition(st *State, rgName, gallery, name, childID string) (*ResourceGroupState, *GalleryState, *DefinitionState, error) {
	id := cloud.ImageDefinitionID(st.SubscriptionID, rgName, gallery, name)
	nested := childID
	if nested == "" {
		nested = id
	}
	rg, g, err := p.lookupGallery(st, rgName, gallery, nested)
	if err != nil {
		return nil, nil, nil, err
	}
	d, ok := g.Definitions[key(name)]
	if !ok {
		if childID != "" {
			return nil, nil, nil, parentNotFound(childID, name)
		}
		return nil, nil, nil, resourceNotFound(cloud.ImageDefinitionID(st.SubscriptionID, rg.Name, g.Name, name),
			"Microsoft.Compute/galleries/images", g.Name+"/"+name, rg.Name)
	}
	return rg, g, d, nil
}

// ListImageDefinitions implements cloud.Provider, sorted by name.
func (p *Provider) ListImageDefinitions(ctx context.Context, rgName, gallery string) ([]cloud.ImageDefinition, error) {
	var out []cloud.ImageDefinition
	err := p.view(ctx, func(st *State) error {
		_, g, err := p.lookupGallery(st, rgName, gallery,
			cloud.GalleryID(st.SubscriptionID, rgName, gallery)+"/images")
		if err != nil {
			return err
		}
		for _, k := range sortedKeys(g.Definitions) {
			out = append(out, copyDefinition(g.Definitions[k].ImageDefinition))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// GetImageDefinition implements cloud.Provider.
func (p *Provider) GetImageDefinition(ctx context.Context, rgName, gallery, name string) (*cloud.ImageDefinition, error) {
	var out cloud.ImageDefinition
	err := p.view(ctx, func(st *State) error {
		_, _, d, err := p.lookupDefinition(st, rgName, gallery, name, "")
		if err != nil {
			return err
		}
		out = copyDefinition(d.ImageDefinition)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateImageDefinition implements cloud.Provider: a PUT creating the
// definition or updating its mutable fields (description, end of life,
// features, tags). Identity fields cannot change.
func (p *Provider) CreateImageDefinition(ctx context.Context, in cloud.ImageDefinition) (*cloud.ImageDefinition, error) {
	var out cloud.ImageDefinition
	err := p.update(ctx, func(st *State) error {
		id := cloud.ImageDefinitionID(st.SubscriptionID, in.ResourceGroup, in.Gallery, in.Name)
		rg, g, err := p.lookupGallery(st, in.ResourceGroup, in.Gallery, id)
		if err != nil {
			return err
		}
		id = cloud.ImageDefinitionID(st.SubscriptionID, rg.Name, g.Name, in.Name)
		if err := p.checkGalleryRegion(g, in.Location, id, "image definitions"); err != nil {
			return err
		}
		if g.CommunityEnabled {
			if sec, bad := privateOnlySecurityType(in.Features); bad {
				return invalidParameter(id,
					"SecurityType '%s' is not supported in community gallery '%s'; use TrustedLaunchSupported, ConfidentialVMSupported or TrustedLaunchAndConfidentialVmSupported.",
					sec, g.Name)
			}
		}
		// Azure's defaults for the API version imgflow uses.
		if in.HyperVGeneration == "" {
			in.HyperVGeneration = cloud.HyperVGenV1
		}
		if in.Architecture == "" {
			in.Architecture = cloud.ArchX64
		}
		d, ok := g.Definitions[key(in.Name)]
		if ok {
			if err := immutableDefinitionFields(&d.ImageDefinition, &in); err != nil {
				return err
			}
		}
		for k, other := range g.Definitions {
			if k == key(in.Name) {
				continue
			}
			if strings.EqualFold(other.Publisher, in.Publisher) && strings.EqualFold(other.Offer, in.Offer) && strings.EqualFold(other.SKU, in.SKU) {
				return cloud.Conflict(cloud.CodeConflict, id,
					"Image definition '%s' in gallery '%s' already uses publisher '%s', offer '%s' and SKU '%s'; the (publisher, offer, sku) identifier must be unique within a gallery.",
					other.Name, g.Name, other.Publisher, other.Offer, other.SKU)
			}
		}
		if !ok {
			d = &DefinitionState{
				ImageDefinition: cloud.ImageDefinition{
					ID: id, Name: in.Name, ResourceGroup: rg.Name, Gallery: g.Name, Location: g.Location,
					Publisher: in.Publisher, Offer: in.Offer, SKU: in.SKU,
					OSType: in.OSType, OSState: in.OSState,
					HyperVGeneration: in.HyperVGeneration, Architecture: in.Architecture,
				},
				Versions: map[string]*cloud.ImageVersion{},
			}
			g.Definitions[key(in.Name)] = d
		}
		d.Description = in.Description
		d.EndOfLife = copyTime(in.EndOfLife)
		d.Features = nil
		if len(in.Features) > 0 {
			d.Features = maps.Clone(in.Features)
		}
		d.Tags = copyTags(in.Tags)
		out = copyDefinition(d.ImageDefinition)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// checkGalleryRegion enforces that nested resources live in the gallery's
// region; an empty location means the gallery's.
func (p *Provider) checkGalleryRegion(g *GalleryState, location, id, what string) error {
	if location == "" {
		return nil
	}
	if loc, ok := p.physicalLocation(location); !ok || loc != g.Location {
		return invalidParameter(id, "Location '%s' is invalid: %s must be in the gallery's region '%s'.", location, what, g.Location)
	}
	return nil
}

// immutableDefinitionFields refuses a PUT changing a definition's identity,
// naming every changed property as Azure does.
func immutableDefinitionFields(old, in *cloud.ImageDefinition) error {
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
	return cloud.Conflict(cloud.CodePropertyChangeNotAllowed, old.ID, "%s", strings.Join(changed, " "))
}

// DeleteImageDefinition implements cloud.Provider; a definition still
// holding versions cannot be deleted.
func (p *Provider) DeleteImageDefinition(ctx context.Context, rgName, gallery, name string) error {
	return p.update(ctx, func(st *State) error {
		_, g, d, err := p.lookupDefinition(st, rgName, gallery, name, "")
		if err != nil {
			return err
		}
		if len(d.Versions) > 0 {
			return cloud.Conflict(cloud.CodeConflict, d.ID,
				"Image definition '%s' cannot be deleted: it still has %d image version(s) (nested resources); delete them first.",
				d.Name, len(d.Versions))
		}
		delete(g.Definitions, key(name))
		return nil
	})
}
