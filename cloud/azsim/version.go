package azsim

import (
	"context"
	"strings"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/internal/deepcopy"
)

// lookupVersion returns an image version; missing parents are
// ParentResourceNotFound, a missing version ResourceNotFound.
func (p *Provider) lookupVersion(st *State, rgName, gallery, def, name string) (*GalleryState, *DefinitionState, *cloud.ImageVersion, error) {
	id := cloud.ImageVersionID(st.SubscriptionID, rgName, gallery, def, name)
	rg, g, d, err := p.lookupDefinition(st, rgName, gallery, def, id)
	if err != nil {
		return nil, nil, nil, err
	}
	v, ok := d.Versions[key(name)]
	if !ok {
		return nil, nil, nil, azrules.ResourceNotFound(cloud.ImageVersionID(st.SubscriptionID, rg.Name, g.Name, d.Name, name),
			"Microsoft.Compute/galleries/images/versions", g.Name+"/"+d.Name+"/"+name, rg.Name)
	}
	return g, d, v, nil
}

// GetImageVersion implements cloud.Provider.
func (p *Provider) GetImageVersion(ctx context.Context, rgName, gallery, def, name string) (*cloud.ImageVersion, error) {
	if err := p.load(p.loadVersion(ctx, rgName, gallery, def, name)); err != nil {
		return nil, err
	}
	if p.replication != nil {
		v, _, err := p.ImageVersionProgress(ctx, rgName, gallery, def, name, true)
		return v, err
	}
	return read(ctx, p, func(st *State) (*cloud.ImageVersion, error) {
		_, _, v, err := p.lookupVersion(st, rgName, gallery, def, name)
		return v, err
	})
}

// ListImageVersions implements cloud.Provider, sorted by name, without
// replication status as ARM lists them.
func (p *Provider) ListImageVersions(ctx context.Context, rgName, gallery, def string) ([]cloud.ImageVersion, error) {
	if err := p.load(p.loadVersions(ctx, rgName, gallery, def)); err != nil {
		return nil, err
	}
	var out []cloud.ImageVersion
	err := p.view(ctx, func(st *State) error {
		_, _, d, err := p.lookupDefinition(st, rgName, gallery, def,
			cloud.ImageDefinitionID(st.SubscriptionID, rgName, gallery, def)+"/versions")
		if err != nil {
			return err
		}
		if d.Progress != nil {
			d = deepcopy.Of(d) // replication advances on the clock, not on a list
		}
		for _, k := range sortedKeys(d.Versions) {
			p.advance(d, d.Versions[k], false)
			v := deepcopy.Of(*d.Versions[k])
			v.Replication = nil
			out = append(out, v)
		}
		return nil
	})
	return out, err
}

// CreateImageVersion implements cloud.Provider: a PUT. A new version is
// checked against its source; an existing one may not change source or
// storage account type and otherwise updates like UpdateImageVersion.
// Replication completes at once. A new version snapshots its source's
// content into its own data file (see updateWithData).
func (p *Provider) CreateImageVersion(ctx context.Context, in cloud.ImageVersion) (*cloud.ImageVersion, error) {
	if err := p.load(p.loadVersion(ctx, in.ResourceGroup, in.Gallery, in.Definition, in.Name), p.loadSource(ctx, in.Source)); err != nil {
		return nil, err
	}
	var out cloud.ImageVersion
	err := p.updateWithData(ctx, func(t *tx) (*dataCopy, error) {
		st := t.st
		id := cloud.ImageVersionID(st.SubscriptionID, in.ResourceGroup, in.Gallery, in.Definition, in.Name)
		rg, g, d, err := p.lookupDefinition(st, in.ResourceGroup, in.Gallery, in.Definition, id)
		if err != nil {
			return nil, err
		}
		id = cloud.ImageVersionID(st.SubscriptionID, rg.Name, g.Name, d.Name, in.Name)
		if err := azrules.CheckGalleryRegion(p.locIndex, g.Location, in.Location, id, "image versions"); err != nil {
			return nil, err
		}
		if in.StorageAccountType == "" {
			in.StorageAccountType = cloud.StorageStandardLRS
		}
		var data *dataCopy
		v, ok := d.Versions[key(in.Name)]
		var prev []cloud.RegionStatus
		if ok {
			prev = v.Replication
			if err := azrules.CheckVersionUnchanged(v, in.Source, in.StorageAccountType, true); err != nil {
				return nil, err
			}
		} else {
			size, err := azrules.CheckVersionSource(stateSources{ctx, p, st}, &d.ImageDefinition, in.Source, id)
			if err != nil {
				return nil, err
			}
			src, err := p.sourceContent(st, in.Source, id, 0)
			if err != nil {
				return nil, err
			}
			data = &dataCopy{id: id, src: src}
			v = &cloud.ImageVersion{
				ID: id, Name: in.Name, ResourceGroup: rg.Name, Gallery: g.Name, Definition: d.Name,
				Location: g.Location, Source: in.Source, StorageAccountType: in.StorageAccountType,
				ReplicaCount: 1, SizeBytes: size,
			}
		}
		if err := azrules.Publish(p.locIndex, v, in, true); err != nil {
			return nil, err
		}
		p.replicate(d, v, prev, ok)
		v.EndOfLife = copyTime(v.EndOfLife)
		d.Versions[key(in.Name)] = v
		t.log(put(ok), cloud.KindImageVersion, v.ID)
		out = deepcopy.Of(*v)
		return data, nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateImageVersion implements cloud.Provider with PATCH semantics: empty
// target regions, a zero replica count, and nil end of life or tags leave
// the current value.
func (p *Provider) UpdateImageVersion(ctx context.Context, in cloud.ImageVersion) (*cloud.ImageVersion, error) {
	if err := p.load(p.loadVersion(ctx, in.ResourceGroup, in.Gallery, in.Definition, in.Name)); err != nil {
		return nil, err
	}
	return write(ctx, p, func(t *tx) (*cloud.ImageVersion, error) {
		g, d, v, err := p.lookupVersion(t.st, in.ResourceGroup, in.Gallery, in.Definition, in.Name)
		if err != nil {
			return nil, err
		}
		prev := v.Replication
		if err := azrules.CheckGalleryRegion(p.locIndex, g.Location, in.Location, v.ID, "image versions"); err != nil {
			return nil, err
		}
		if err := azrules.CheckVersionUnchanged(v, in.Source, in.StorageAccountType, false); err != nil {
			return nil, err
		}
		if err := azrules.Publish(p.locIndex, v, in, false); err != nil {
			return nil, err
		}
		p.replicate(d, v, prev, true)
		v.EndOfLife = copyTime(v.EndOfLife)
		t.log(cloud.OpUpdate, cloud.KindImageVersion, v.ID)
		return v, nil
	})
}

// DeleteImageVersion implements cloud.Provider; the version's data goes
// with it (disks made from it keep their own copy).
func (p *Provider) DeleteImageVersion(ctx context.Context, rgName, gallery, def, name string) error {
	if err := p.load(p.loadVersion(ctx, rgName, gallery, def, name)); err != nil {
		return err
	}
	return p.update(ctx, func(t *tx) error {
		_, d, v, err := p.lookupVersion(t.st, rgName, gallery, def, name)
		if err != nil {
			return err
		}
		delete(d.Versions, key(name))
		delete(d.Progress, key(name))
		t.remove(ResourceKey(v.ID))
		t.log(cloud.OpDelete, cloud.KindImageVersion, v.ID)
		return nil
	})
}

// versionByID finds a gallery image version of this subscription by ARM id.
func (p *Provider) versionByID(st *State, srcID, resource string) (*DefinitionState, *cloud.ImageVersion, error) {
	rid, err := cloud.ParseResourceID(srcID)
	if err != nil || !rid.Is("Microsoft.Compute", "galleries", "images", "versions") {
		return nil, nil, azrules.InvalidParameter(resource, "'%s' is not a gallery image version id.", srcID)
	}
	notFound := azrules.ResourceNotFound(srcID, "Microsoft.Compute/galleries/images/versions", strings.Join(rid.Names, "/"), rid.ResourceGroup)
	if !strings.EqualFold(rid.Subscription, st.SubscriptionID) {
		if q, qst := p.peerState(st, rid.Subscription); q != nil {
			return q.versionByID(qst, srcID, resource) // another subscription of the tenant
		}
		return nil, nil, notFound
	}
	if _, d, v, err := p.lookupVersion(st, rid.ResourceGroup, rid.Names[0], rid.Names[1], rid.Names[2]); err == nil {
		return d, v, nil
	}
	return nil, nil, notFound
}

// stateSources finds image version sources in the state, under its lock.
type stateSources struct {
	ctx context.Context
	p   *Provider
	st  *State
}

func (s stateSources) ManagedImage(id, resource string) (*cloud.ManagedImage, error) {
	return s.p.managedImageByID(s.st, id, resource)
}

func (s stateSources) ImageVersion(id, resource string) (*cloud.ImageDefinition, *cloud.ImageVersion, error) {
	d, v, err := s.p.versionByID(s.st, id, resource)
	if err != nil {
		return nil, nil, err
	}
	return &d.ImageDefinition, v, nil
}

func (s stateSources) VHD(uri, resource string) (int64, cloud.BlobRef, error) {
	return s.p.vhdBlob(s.ctx, s.st, uri, resource)
}

func (s stateSources) StorageAccountExists(id string) (bool, error) {
	rid, err := cloud.ParseResourceID(id)
	if err == nil && len(rid.Names) > 0 {
		if q, qst := s.p.peerState(s.st, rid.Subscription); q != nil {
			return stateSources{s.ctx, q, qst}.StorageAccountExists(id)
		}
	}
	if err != nil || len(rid.Names) == 0 || !strings.EqualFold(rid.Subscription, s.st.SubscriptionID) {
		return false, nil
	}
	return group(s.st, rid.ResourceGroup).StorageAccounts[key(rid.Names[0])] != nil, nil
}

// loadVersions reads every version of a definition from the base.
func (p *Provider) loadVersions(ctx context.Context, rg, gal, def string) error {
	if ok, err := p.definitionFromBase(ctx, rg, gal, def); !ok {
		return err
	}
	versions, err := p.rt.base.ListImageVersions(ctx, rg, gal, def)
	if err != nil && !cloud.IsNotFound(err) {
		return err
	}
	for _, v := range versions {
		if err := p.loadVersion(ctx, rg, gal, def, v.Name); err != nil {
			return err
		}
	}
	return nil
}

func (p *Provider) loadVersion(ctx context.Context, rg, gal, def, name string) error {
	if ok, err := p.definitionFromBase(ctx, rg, gal, def); !ok {
		return err
	}
	_, err := fetch(ctx, p, cloud.ImageVersionID(p.rt.sub, rg, gal, def, name),
		func(st *State) (bool, bool) {
			return definition(st, rg, gal, def).Versions[key(name)] != nil, true
		},
		func() (*cloud.ImageVersion, error) { return p.rt.base.GetImageVersion(ctx, rg, gal, def, name) },
		func(st *State, v *cloud.ImageVersion) {
			definition(st, rg, gal, def).Versions[key(name)] = v
		})
	return err
}
