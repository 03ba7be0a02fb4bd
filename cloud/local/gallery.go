package local

import (
	"context"
	"sort"
	"strings"

	"github.com/imgflow/imgflow/cloud"
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
			return nil, nil, parentNotFound(childID, name)
		}
		return nil, nil, resourceNotFound(cloud.GalleryID(st.SubscriptionID, rg.Name, name),
			"Microsoft.Compute/galleries", name, rg.Name)
	}
	return rg, g, nil
}

// ListGalleries implements cloud.Provider, sorted by name (unique per
// subscription).
func (p *Provider) ListGalleries(ctx context.Context) ([]cloud.Gallery, error) {
	var out []cloud.Gallery
	err := p.view(ctx, func(st *State) error {
		for _, rg := range st.ResourceGroups {
			for _, g := range rg.Galleries {
				out = append(out, copyGallery(g.Gallery))
			}
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return key(out[i].Name) < key(out[j].Name) })
	return out, err
}

// GetGallery implements cloud.Provider.
func (p *Provider) GetGallery(ctx context.Context, rg, name string) (*cloud.Gallery, error) {
	var out cloud.Gallery
	err := p.view(ctx, func(st *State) error {
		_, g, err := p.lookupGallery(st, rg, name, "")
		if err != nil {
			return err
		}
		out = copyGallery(g.Gallery)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateGallery implements cloud.Provider: a PUT creating the gallery or
// updating its description and tags. The sharing fields of the input are
// ignored: sharing changes only through ShareCommunity.
func (p *Provider) CreateGallery(ctx context.Context, in cloud.Gallery) (*cloud.Gallery, error) {
	var out cloud.Gallery
	err := p.update(ctx, func(st *State) error {
		rg, err := p.lookupRG(st, in.ResourceGroup)
		if err != nil {
			return err
		}
		id := cloud.GalleryID(st.SubscriptionID, rg.Name, in.Name)
		if owner, _ := st.findGallery(in.Name); owner != nil && owner != rg {
			return cloud.Conflict(cloud.CodeConflict, id,
				"The gallery name '%s' is not unique within the subscription '%s'. Please pick another gallery name. (It exists in resource group '%s'.)",
				in.Name, st.SubscriptionID, owner.Name)
		}
		want := in.Location
		if want == "" {
			want = rg.Location
		}
		loc, err := p.resolveLocation(want, "Microsoft.Compute/galleries", id)
		if err != nil {
			return err
		}
		g, ok := rg.Galleries[key(in.Name)]
		if ok {
			if g.Location != loc {
				return locationChanged(g.ID, g.Name, rg.Name, g.Location, loc)
			}
		} else {
			g = &GalleryState{
				Gallery:     cloud.Gallery{ID: id, Name: in.Name, ResourceGroup: rg.Name, Location: loc},
				Definitions: map[string]*DefinitionState{},
			}
			rg.Galleries[key(in.Name)] = g
		}
		g.Description = in.Description
		g.Tags = copyTags(in.Tags)
		out = copyGallery(g.Gallery)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// ShareCommunity implements cloud.Provider. The public name is generated
// once; sharing again with the same prefix keeps it (the other publisher
// fields are updated), while another prefix is refused because Azure
// cannot rename a shared gallery.
func (p *Provider) ShareCommunity(ctx context.Context, rgName, name string, info cloud.CommunityInfo) (*cloud.Gallery, error) {
	var out cloud.Gallery
	err := p.update(ctx, func(st *State) error {
		_, g, err := p.lookupGallery(st, rgName, name, "")
		if err != nil {
			return err
		}
		if g.CommunityEnabled && g.Community != nil {
			if !strings.EqualFold(g.Community.PublicNamePrefix, info.PublicNamePrefix) {
				return cloud.Conflict(cloud.CodeConflict, g.ID,
					"The public name prefix of gallery '%s' cannot change from '%s' to '%s' while it is shared with the community; reset sharing first (az sig share reset).",
					g.Name, g.Community.PublicNamePrefix, info.PublicNamePrefix)
			}
			prefix := g.Community.PublicNamePrefix
			c := info
			c.PublicNamePrefix = prefix
			g.Community = &c
			out = copyGallery(g.Gallery)
			return nil
		}
		for _, dk := range sortedKeys(g.Definitions) {
			d := g.Definitions[dk]
			if sec, bad := privateOnlySecurityType(d.Features); bad {
				return invalidParameter(g.ID,
					"Gallery '%s' cannot be shared with the community: image definition '%s' has SecurityType '%s', which is only supported in private galleries.",
					g.Name, d.Name, sec)
			}
		}
		// The platform generates the name; a dry run (plan, validation)
		// cannot know it and says so instead of inventing one.
		guid := PendingGUID
		if !p.dry {
			var err error
			if guid, err = p.rand.guid(); err != nil {
				return err
			}
		}
		c := info
		g.Community = &c
		g.CommunityEnabled = true
		g.PublicNames = []string{info.PublicNamePrefix + "-" + guid}
		out = copyGallery(g.Gallery)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// privateOnlySecurityType reports a SecurityType feature that community
// galleries do not support (the "...Supported" variants are fine).
func privateOnlySecurityType(features map[string]string) (string, bool) {
	for k, v := range features {
		if strings.EqualFold(k, "SecurityType") &&
			(strings.EqualFold(v, "TrustedLaunch") || strings.EqualFold(v, "ConfidentialVM")) {
			return v, true
		}
	}
	return "", false
}

// PendingGUID stands for the GUID of a community public name that a dry
// run (plan) would have the platform generate.
const PendingGUID = "<pending guid>"
