package azsim

import (
	"context"
	"maps"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/internal/deepcopy"
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
			return nil, nil, nil, azrules.ParentNotFound(childID, name)
		}
		return nil, nil, nil, azrules.ResourceNotFound(cloud.ImageDefinitionID(st.SubscriptionID, rg.Name, g.Name, name),
			"Microsoft.Compute/galleries/images", g.Name+"/"+name, rg.Name)
	}
	return rg, g, d, nil
}

// ListImageDefinitions implements cloud.Provider, sorted by name.
func (p *Provider) ListImageDefinitions(ctx context.Context, rgName, gallery string) ([]cloud.ImageDefinition, error) {
	if err := p.load(p.loadDefinitions(ctx, rgName, gallery)); err != nil {
		return nil, err
	}
	var out []cloud.ImageDefinition
	err := p.view(ctx, func(st *State) error {
		_, g, err := p.lookupGallery(st, rgName, gallery,
			cloud.GalleryID(st.SubscriptionID, rgName, gallery)+"/images")
		if err != nil {
			return err
		}
		out = deepcopy.Of(definitionsOf(g))
		return nil
	})
	return out, err
}

// GetImageDefinition implements cloud.Provider.
func (p *Provider) GetImageDefinition(ctx context.Context, rgName, gallery, name string) (*cloud.ImageDefinition, error) {
	if err := p.load(p.loadDefinition(ctx, rgName, gallery, name)); err != nil {
		return nil, err
	}
	return read(ctx, p, func(st *State) (*cloud.ImageDefinition, error) {
		_, _, d, err := p.lookupDefinition(st, rgName, gallery, name, "")
		if err != nil {
			return nil, err
		}
		return &d.ImageDefinition, nil
	})
}

// CreateImageDefinition implements cloud.Provider: a PUT creating the
// definition or updating its mutable fields (description, end of life,
// features, tags). Identity fields cannot change.
func (p *Provider) CreateImageDefinition(ctx context.Context, in cloud.ImageDefinition) (*cloud.ImageDefinition, error) {
	if err := p.load(p.loadDefinitions(ctx, in.ResourceGroup, in.Gallery)); err != nil {
		return nil, err
	}
	return write(ctx, p, func(t *tx) (*cloud.ImageDefinition, error) {
		st := t.st
		id := cloud.ImageDefinitionID(st.SubscriptionID, in.ResourceGroup, in.Gallery, in.Name)
		rg, g, err := p.lookupGallery(st, in.ResourceGroup, in.Gallery, id)
		if err != nil {
			return nil, err
		}
		id = cloud.ImageDefinitionID(st.SubscriptionID, rg.Name, g.Name, in.Name)
		if err := azrules.CheckGalleryRegion(p.locIndex, g.Location, in.Location, id, "image definitions"); err != nil {
			return nil, err
		}
		if err := azrules.CheckCommunityFeatures(id, g.Name, g.CommunityEnabled, in.Features); err != nil {
			return nil, err
		}
		azrules.DefinitionDefaults(&in)
		d, ok := g.Definitions[key(in.Name)]
		if ok {
			if err := azrules.ImmutableDefinitionFields(&d.ImageDefinition, &in); err != nil {
				return nil, err
			}
		}
		if err := azrules.UniqueIdentifier(id, g.Name, &in, definitionsOf(g)); err != nil {
			return nil, err
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
		t.log(put(ok), cloud.KindImageDefinition, d.ID)
		d.Description = in.Description
		d.EndOfLife = copyTime(in.EndOfLife)
		d.Features = nil
		if len(in.Features) > 0 {
			d.Features = maps.Clone(in.Features)
		}
		d.Tags = deepcopy.Of(in.Tags)
		return &d.ImageDefinition, nil
	})
}

// DeleteImageDefinition implements cloud.Provider; a definition still
// holding versions cannot be deleted.
func (p *Provider) DeleteImageDefinition(ctx context.Context, rgName, gallery, name string) error {
	if err := p.load(p.loadDefinition(ctx, rgName, gallery, name)); err != nil {
		return err
	}
	return p.update(ctx, func(t *tx) error {
		_, g, d, err := p.lookupDefinition(t.st, rgName, gallery, name, "")
		if err != nil {
			return err
		}
		if len(d.Versions) > 0 {
			return cloud.Conflict(cloud.CodeConflict, d.ID,
				"Image definition '%s' cannot be deleted: it still has %d image version(s) (nested resources); delete them first.",
				d.Name, len(d.Versions))
		}
		delete(g.Definitions, key(name))
		t.log(cloud.OpDelete, cloud.KindImageDefinition, d.ID)
		return nil
	})
}

// definitionsOf lists a gallery's definitions by name.
func definitionsOf(g *GalleryState) []cloud.ImageDefinition {
	out := make([]cloud.ImageDefinition, 0, len(g.Definitions))
	for _, k := range sortedKeys(g.Definitions) {
		out = append(out, g.Definitions[k].ImageDefinition)
	}
	return out
}

func (p *Provider) loadDefinition(ctx context.Context, rg, gal, name string) error {
	_, err := p.definitionFromBase(ctx, rg, gal, name)
	return err
}

func (p *Provider) definitionFromBase(ctx context.Context, rg, gal, name string) (bool, error) {
	if ok, err := p.galleryFromBase(ctx, rg, gal); !ok {
		return false, err
	}
	return fetch(ctx, p, cloud.ImageDefinitionID(p.rt.sub, rg, gal, name),
		func(st *State) (bool, bool) {
			d := gallery(st, rg, gal).Definitions[key(name)]
			return d != nil, d != nil && d.Base
		},
		func() (*cloud.ImageDefinition, error) { return p.rt.base.GetImageDefinition(ctx, rg, gal, name) },
		func(st *State, v *cloud.ImageDefinition) {
			gallery(st, rg, gal).Definitions[key(name)] = &DefinitionState{ImageDefinition: *v, Base: true,
				Versions: map[string]*cloud.ImageVersion{}}
		})
}

// loadDefinitions reads every definition of a gallery from the base.
func (p *Provider) loadDefinitions(ctx context.Context, rg, gal string) error {
	if ok, err := p.galleryFromBase(ctx, rg, gal); !ok {
		return err
	}
	defs, err := p.rt.base.ListImageDefinitions(ctx, rg, gal)
	if err != nil && !cloud.IsNotFound(err) {
		return err
	}
	for _, d := range defs {
		if _, err := p.definitionFromBase(ctx, rg, gal, d.Name); err != nil {
			return err
		}
	}
	return nil
}

// definition finds a loaded definition (see group).
func definition(st *State, rg, g, name string) *DefinitionState {
	if d := gallery(st, rg, g).Definitions[key(name)]; d != nil {
		return d
	}
	return &DefinitionState{Versions: map[string]*cloud.ImageVersion{}}
}
