package azsim

import (
	"context"
	"sort"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/internal/deepcopy"
)

// lookupGallery returns the gallery. A missing gallery is ResourceNotFound,
// or ParentResourceNotFound naming childID when the caller addresses a
// resource nested in it.
func (p *Provider) lookupGallery(st *State, rgName, name, childID string) (*ResourceGroupState, *GalleryState, error) {
	rg, err := p.lookupRG(st, rgName)
	if err != nil {
		return nil, nil, err
	}
	g, ok := rg.Galleries[key(name)]
	if !ok {
		if childID != "" {
			return nil, nil, azrules.ParentNotFound(childID, name)
		}
		return nil, nil, azrules.ResourceNotFound(cloud.GalleryID(st.SubscriptionID, rg.Name, name),
			"Microsoft.Compute/galleries", name, rg.Name)
	}
	return rg, g, nil
}

// ListGalleries implements cloud.Provider, sorted by name (unique per
// subscription).
func (p *Provider) ListGalleries(ctx context.Context) ([]cloud.Gallery, error) {
	if err := p.load(p.loadGalleries(ctx)); err != nil {
		return nil, err
	}
	var out []cloud.Gallery
	err := p.view(ctx, func(st *State) error {
		for _, rg := range st.ResourceGroups {
			for _, g := range rg.Galleries {
				out = append(out, deepcopy.Of(g.Gallery))
			}
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return key(out[i].Name) < key(out[j].Name) })
	return out, err
}

// GetGallery implements cloud.Provider.
func (p *Provider) GetGallery(ctx context.Context, rg, name string) (*cloud.Gallery, error) {
	if err := p.load(p.loadGallery(ctx, rg, name)); err != nil {
		return nil, err
	}
	return read(ctx, p, func(st *State) (*cloud.Gallery, error) {
		_, g, err := p.lookupGallery(st, rg, name, "")
		if err != nil {
			return nil, err
		}
		return &g.Gallery, nil
	})
}

// CreateGallery implements cloud.Provider: a PUT creating the gallery (a
// community gallery when in.Community is set) or updating its description,
// tags and community publisher details. Whether it is public changes only
// through ShareCommunity.
func (p *Provider) CreateGallery(ctx context.Context, in cloud.Gallery) (*cloud.Gallery, error) {
	if err := p.load(p.loadGalleries(ctx), p.loadGallery(ctx, in.ResourceGroup, in.Name)); err != nil {
		return nil, err
	}
	return write(ctx, p, func(t *tx) (*cloud.Gallery, error) {
		st := t.st
		rg, err := p.lookupRG(st, in.ResourceGroup)
		if err != nil {
			return nil, err
		}
		id := cloud.GalleryID(st.SubscriptionID, rg.Name, in.Name)
		if owner, _ := st.findGallery(in.Name); owner != nil && owner != rg {
			return nil, cloud.Conflict(cloud.CodeConflict, id,
				"The gallery name '%s' is not unique within the subscription '%s'. Please pick another gallery name. (It exists in resource group '%s'.)",
				in.Name, st.SubscriptionID, owner.Name)
		}
		loc, err := p.locIndex.Resolve(orDefault(in.Location, rg.Location), "Microsoft.Compute/galleries", id)
		if err != nil {
			return nil, err
		}
		g, ok := rg.Galleries[key(in.Name)]
		if ok {
			if g.Location != loc {
				return nil, azrules.LocationChanged(g.ID, g.Name, rg.Name, g.Location, loc)
			}
			if err := azrules.CheckCommunityProfileChange(g.ID, g.Community, in.Community); err != nil {
				return nil, err
			}
		} else {
			g = (&GalleryState{Gallery: cloud.Gallery{ID: id, Name: in.Name, ResourceGroup: rg.Name, Location: loc}}).normalize()
			rg.Galleries[key(in.Name)] = g
		}
		t.log(put(ok), cloud.KindGallery, g.ID)
		g.Description = in.Description
		g.Tags = deepcopy.Of(in.Tags)
		g.Community = cloud.UpdateCommunityProfile(g.Community, in.Community)
		return &g.Gallery, nil
	})
}

// ShareCommunity implements cloud.Provider: EnableCommunity. The public
// name is generated once; enabling a public gallery again keeps it.
func (p *Provider) ShareCommunity(ctx context.Context, rgName, name string) (*cloud.Gallery, error) {
	if err := p.load(p.loadDefinitions(ctx, rgName, name)); err != nil {
		return nil, err
	}
	return write(ctx, p, func(t *tx) (*cloud.Gallery, error) {
		_, g, err := p.lookupGallery(t.st, rgName, name, "")
		if err != nil {
			return nil, err
		}
		if err := azrules.CheckShareable(&g.Gallery, definitionsOf(g)); err != nil || g.CommunityEnabled {
			return &g.Gallery, err
		}
		guid, err := p.guid()
		if err != nil {
			return nil, err
		}
		t.log(cloud.OpCreate, cloud.KindCommunitySharing, g.ID)
		g.CommunityEnabled = true
		g.PublicNames = []string{g.Community.PublicNamePrefix + "-" + guid}
		return &g.Gallery, nil
	})
}

// PendingGUID stands for the GUID of a community public name that the
// platform generates: a dry run (cloud/overlay, plan) cannot know it and
// says so instead of inventing one.
const PendingGUID = "<pending guid>"

// guid is a GUID the platform generates, or in a dry run PendingGUID.
func (p *Provider) guid() (string, error) {
	if p.dryRun {
		return PendingGUID, nil
	}
	return p.rand.guid()
}

func (p *Provider) loadGallery(ctx context.Context, rg, name string) error {
	_, err := p.galleryFromBase(ctx, rg, name)
	return err
}

func (p *Provider) galleryFromBase(ctx context.Context, rg, name string) (bool, error) {
	if ok, err := p.groupFromBase(ctx, rg); !ok {
		return false, err
	}
	return fetch(ctx, p, cloud.GalleryID(p.rt.sub, rg, name),
		func(st *State) (bool, bool) {
			g := group(st, rg).Galleries[key(name)]
			return g != nil, g != nil && g.Base
		},
		func() (*cloud.Gallery, error) { return p.rt.base.GetGallery(ctx, rg, name) },
		func(st *State, v *cloud.Gallery) {
			group(st, rg).Galleries[key(name)] = (&GalleryState{Gallery: *v, Base: true}).normalize()
		})
}

// loadGalleries reads every gallery of the base (gallery names are
// unique per subscription).
func (p *Provider) loadGalleries(ctx context.Context) error {
	if p.rt == nil {
		return nil
	}
	all, err := p.rt.base.ListGalleries(ctx)
	if err != nil {
		return err
	}
	for _, g := range all {
		if _, err := p.galleryFromBase(ctx, g.ResourceGroup, g.Name); err != nil {
			return err
		}
	}
	return nil
}

// gallery finds a loaded gallery (see group).
func gallery(st *State, rg, name string) *GalleryState {
	if g := group(st, rg).Galleries[key(name)]; g != nil {
		return g
	}
	return (&GalleryState{}).normalize()
}
