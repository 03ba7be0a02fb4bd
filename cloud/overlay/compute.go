package overlay

import (
	"context"
	"strings"
	"time"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/cloud/local"
)

// GetResourceGroup implements cloud.Provider.
func (p *Provider) GetResourceGroup(ctx context.Context, name string) (*cloud.ResourceGroup, error) {
	return read(ctx, p, pGroup(name), func() (*cloud.ResourceGroup, error) { return p.base.GetResourceGroup(ctx, name) })
}

// CreateResourceGroup implements cloud.Provider: records the group, or the
// new tags of an existing one (whose location is fixed).
func (p *Provider) CreateResourceGroup(ctx context.Context, in cloud.ResourceGroup) (*cloud.ResourceGroup, error) {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	id := cloud.ResourceGroupID(p.sub, in.Name)
	loc, err := p.resolveLocation(ctx, in.Location, "resourceGroups", id)
	if err != nil {
		return nil, err
	}
	old, exists, err := existing(p.GetResourceGroup(ctx, in.Name))
	if err != nil {
		return nil, err
	}
	rg := cloud.ResourceGroup{ID: id, Name: in.Name, Location: loc}
	if exists {
		if !strings.EqualFold(old.Location, loc) {
			return nil, cloud.Conflict(cloud.CodeInvalidResourceGroupLocation, old.ID,
				"Invalid resource group location '%s'. The Resource group already exists in location '%s'.", in.Location, old.Location)
		}
		rg = *old
	}
	rg.Tags = in.Tags
	return record(p, pGroup(rg.Name), rg, !exists, change(exists, KindResourceGroup, rg.ID)), nil
}

// ListGalleries implements cloud.Provider.
func (p *Provider) ListGalleries(ctx context.Context) ([]cloud.Gallery, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	all, err := p.base.ListGalleries(ctx)
	if err != nil {
		return nil, err
	}
	return list(p, nil, tGallery, all, func(g cloud.Gallery) string { return g.Name }), nil
}

// GetGallery implements cloud.Provider.
func (p *Provider) GetGallery(ctx context.Context, rg, name string) (*cloud.Gallery, error) {
	return read(ctx, p, pGallery(rg, name), func() (*cloud.Gallery, error) { return p.base.GetGallery(ctx, rg, name) })
}

// CreateGallery implements cloud.Provider: records the gallery (a community
// gallery when in.Community is set), or the new description, tags and
// community publisher details of an existing one, under the target's rule
// for sharing profiles (cloud.CheckCommunityProfileChange).
func (p *Provider) CreateGallery(ctx context.Context, in cloud.Gallery) (*cloud.Gallery, error) {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	rg, err := p.GetResourceGroup(ctx, in.ResourceGroup)
	if err != nil {
		return nil, err
	}
	id := cloud.GalleryID(p.sub, rg.Name, in.Name)
	all, err := p.ListGalleries(ctx)
	if err != nil {
		return nil, err
	}
	for _, g := range all {
		if strings.EqualFold(g.Name, in.Name) && !strings.EqualFold(g.ResourceGroup, rg.Name) {
			return nil, cloud.Conflict(cloud.CodeConflict, id,
				"The gallery name '%s' is not unique within the subscription '%s'. Please pick another gallery name. (It exists in resource group '%s'.)",
				in.Name, p.sub, g.ResourceGroup)
		}
	}
	loc, err := p.resolveLocation(ctx, orDefault(in.Location, rg.Location), tGallery, id)
	if err != nil {
		return nil, err
	}
	old, exists, err := existing(p.GetGallery(ctx, rg.Name, in.Name))
	if err != nil {
		return nil, err
	}
	g := cloud.Gallery{ID: id, Name: in.Name, ResourceGroup: rg.Name, Location: loc}
	if exists {
		if !strings.EqualFold(old.Location, loc) {
			return nil, azrules.LocationChanged(old.ID, old.Name, rg.Name, old.Location, loc)
		}
		if err := cloud.CheckCommunityProfileChange(old.ID, old.Community, in.Community); err != nil {
			return nil, err
		}
		g = *old
	}
	g.Description = in.Description
	g.Tags = in.Tags
	g.Community = cloud.UpdateCommunityProfile(g.Community, in.Community)
	return record(p, pGallery(rg.Name, g.Name), g, !exists, change(exists, KindGallery, g.ID)), nil
}

// ShareCommunity implements cloud.Provider. A newly public gallery's name
// is <prefix>-<pending guid> (local.PendingGUID): only the platform can
// generate it. A public gallery keeps its name.
func (p *Provider) ShareCommunity(ctx context.Context, rg, name string) (*cloud.Gallery, error) {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	g, err := p.GetGallery(ctx, rg, name)
	if err != nil {
		return nil, err
	}
	var defs []cloud.ImageDefinition
	if g.Community != nil && !g.CommunityEnabled {
		if defs, err = p.ListImageDefinitions(ctx, g.ResourceGroup, g.Name); err != nil {
			return nil, err
		}
	}
	if err := azrules.CheckShareable(g, defs); err != nil {
		return nil, err
	}
	if g.CommunityEnabled {
		return g, nil
	}
	g.CommunityEnabled = true
	g.PublicNames = []string{g.Community.PublicNamePrefix + "-" + local.PendingGUID}
	return record(p, pGallery(g.ResourceGroup, g.Name), *g, false, Change{Op: OpCreate, Kind: KindCommunitySharing, ID: g.ID}), nil
}

// parentGallery gets the gallery a new resource childID goes in; a missing
// gallery is ParentResourceNotFound.
func (p *Provider) parentGallery(ctx context.Context, rg, name, childID string) (*cloud.Gallery, error) {
	g, err := p.GetGallery(ctx, rg, name)
	if cloud.HasCode(err, cloud.CodeResourceNotFound) {
		return nil, azrules.ParentNotFound(childID, name)
	}
	return g, err
}

// inGalleryRegion applies azrules.CheckGalleryRegion with the base's
// locations.
func (p *Provider) inGalleryRegion(ctx context.Context, galleryLocation, location, id, what string) error {
	regions, err := p.regions(ctx)
	if err != nil {
		return err
	}
	return azrules.CheckGalleryRegion(regions, galleryLocation, location, id, what)
}

// ListImageDefinitions implements cloud.Provider.
func (p *Provider) ListImageDefinitions(ctx context.Context, rg, gallery string) ([]cloud.ImageDefinition, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	path := pGallery(rg, gallery)
	p.mu.Lock()
	e, missing, askBase := p.where(path)
	p.mu.Unlock()
	var fromBase []cloud.ImageDefinition
	switch {
	case e == nil && !askBase:
		return nil, p.notFound(path, missing, cloud.GalleryID(p.sub, rg, gallery)+"/images", true)
	case askBase || !e.fresh:
		var err error
		if fromBase, err = p.base.ListImageDefinitions(ctx, rg, gallery); err != nil {
			return nil, err
		}
	}
	return list(p, path, tDef, fromBase, func(d cloud.ImageDefinition) string { return d.Name }), nil
}

// GetImageDefinition implements cloud.Provider.
func (p *Provider) GetImageDefinition(ctx context.Context, rg, gallery, name string) (*cloud.ImageDefinition, error) {
	return read(ctx, p, pDef(rg, gallery, name), func() (*cloud.ImageDefinition, error) {
		return p.base.GetImageDefinition(ctx, rg, gallery, name)
	})
}

// CreateImageDefinition implements cloud.Provider: records the definition,
// or new mutable fields (description, end of life, features, tags) of an
// existing one; identity fields cannot change.
func (p *Provider) CreateImageDefinition(ctx context.Context, in cloud.ImageDefinition) (*cloud.ImageDefinition, error) {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	id := cloud.ImageDefinitionID(p.sub, in.ResourceGroup, in.Gallery, in.Name)
	g, err := p.parentGallery(ctx, in.ResourceGroup, in.Gallery, id)
	if err != nil {
		return nil, err
	}
	id = cloud.ImageDefinitionID(p.sub, g.ResourceGroup, g.Name, in.Name)
	if err := p.inGalleryRegion(ctx, g.Location, in.Location, id, "image definitions"); err != nil {
		return nil, err
	}
	if err := azrules.CheckCommunityFeatures(id, g.Name, g.CommunityEnabled, in.Features); err != nil {
		return nil, err
	}
	azrules.DefinitionDefaults(&in)
	defs, err := p.ListImageDefinitions(ctx, g.ResourceGroup, g.Name)
	if err != nil {
		return nil, err
	}
	d := cloud.ImageDefinition{
		ID: id, Name: in.Name, ResourceGroup: g.ResourceGroup, Gallery: g.Name, Location: g.Location,
		Publisher: in.Publisher, Offer: in.Offer, SKU: in.SKU, OSType: in.OSType, OSState: in.OSState,
		HyperVGeneration: in.HyperVGeneration, Architecture: in.Architecture,
	}
	exists := false
	for _, other := range defs {
		if strings.EqualFold(other.Name, in.Name) {
			if err := azrules.ImmutableDefinitionFields(&other, &in); err != nil {
				return nil, err
			}
			d, exists = other, true
		}
	}
	if err := azrules.UniqueIdentifier(id, g.Name, &in, defs); err != nil {
		return nil, err
	}
	d.Description = in.Description
	d.EndOfLife = copyTime(in.EndOfLife)
	d.Features = in.Features
	d.Tags = in.Tags
	return record(p, pDef(g.ResourceGroup, g.Name, d.Name), d, !exists, change(exists, KindImageDefinition, d.ID)), nil
}

// DeleteImageDefinition implements cloud.Provider. Only the overlay's
// versions are known to block it: the Provider interface cannot list the
// base's versions.
func (p *Provider) DeleteImageDefinition(ctx context.Context, rg, gallery, name string) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	d, err := p.GetImageDefinition(ctx, rg, gallery, name)
	if err != nil {
		return err
	}
	path := pDef(d.ResourceGroup, d.Gallery, d.Name)
	p.mu.Lock()
	n := 0
	for _, e := range p.objs {
		if len(e.path) == 4 && !e.deleted && pathKey(e.path[:3]) == pathKey(path) {
			n++
		}
	}
	p.mu.Unlock()
	if n > 0 {
		return cloud.Conflict(cloud.CodeConflict, d.ID,
			"Image definition '%s' cannot be deleted: it still has %d image version(s) (nested resources); delete them first.", d.Name, n)
	}
	p.remove(path, Change{Op: OpDelete, Kind: KindImageDefinition, ID: d.ID})
	return nil
}

// GetImageVersion implements cloud.Provider.
func (p *Provider) GetImageVersion(ctx context.Context, rg, gallery, def, version string) (*cloud.ImageVersion, error) {
	return read(ctx, p, pVersion(rg, gallery, def, version), func() (*cloud.ImageVersion, error) {
		return p.base.GetImageVersion(ctx, rg, gallery, def, version)
	})
}

// CreateImageVersion implements cloud.Provider: a new version's source
// must exist (read through the overlay) and fit the definition; an
// existing one may not change source or storage account type. Replication
// is recorded as Completed in every target region: a plan does not wait.
func (p *Provider) CreateImageVersion(ctx context.Context, in cloud.ImageVersion) (*cloud.ImageVersion, error) {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	id := cloud.ImageVersionID(p.sub, in.ResourceGroup, in.Gallery, in.Definition, in.Name)
	g, err := p.parentGallery(ctx, in.ResourceGroup, in.Gallery, id)
	if err != nil {
		return nil, err
	}
	d, err := p.GetImageDefinition(ctx, g.ResourceGroup, g.Name, in.Definition)
	if cloud.HasCode(err, cloud.CodeResourceNotFound) {
		return nil, azrules.ParentNotFound(id, in.Definition)
	} else if err != nil {
		return nil, err
	}
	id = cloud.ImageVersionID(p.sub, g.ResourceGroup, g.Name, d.Name, in.Name)
	if err := p.inGalleryRegion(ctx, g.Location, in.Location, id, "image versions"); err != nil {
		return nil, err
	}
	in.StorageAccountType = orDefault(in.StorageAccountType, cloud.StorageStandardLRS)
	old, exists, err := existing(p.GetImageVersion(ctx, g.ResourceGroup, g.Name, d.Name, in.Name))
	if err != nil {
		return nil, err
	}
	var v cloud.ImageVersion
	if exists {
		if err := azrules.CheckVersionUnchanged(old, in.Source, in.StorageAccountType, true); err != nil {
			return nil, err
		}
		v = *old
	} else {
		size, err := azrules.CheckVersionSource(overlaySources{ctx, p}, d, in.Source, id)
		if err != nil {
			return nil, err
		}
		v = cloud.ImageVersion{
			ID: id, Name: in.Name, ResourceGroup: g.ResourceGroup, Gallery: g.Name, Definition: d.Name,
			Location: g.Location, Source: in.Source, StorageAccountType: in.StorageAccountType,
			ReplicaCount: 1, SizeBytes: size,
		}
	}
	if err := p.publish(ctx, &v, in, true); err != nil {
		return nil, err
	}
	return record(p, pVersion(g.ResourceGroup, g.Name, d.Name, v.Name), v, !exists, change(exists, KindImageVersion, v.ID)), nil
}

// UpdateImageVersion implements cloud.Provider with PATCH semantics: empty
// target regions, a zero replica count and nil end of life or tags keep
// the current value.
func (p *Provider) UpdateImageVersion(ctx context.Context, in cloud.ImageVersion) (*cloud.ImageVersion, error) {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	v, err := p.GetImageVersion(ctx, in.ResourceGroup, in.Gallery, in.Definition, in.Name)
	if err != nil {
		return nil, err
	}
	if err := p.inGalleryRegion(ctx, v.Location, in.Location, v.ID, "image versions"); err != nil {
		return nil, err
	}
	if err := azrules.CheckVersionUnchanged(v, in.Source, in.StorageAccountType, false); err != nil {
		return nil, err
	}
	if err := p.publish(ctx, v, in, false); err != nil {
		return nil, err
	}
	return record(p, pVersion(v.ResourceGroup, v.Gallery, v.Definition, v.Name), *v, false,
		Change{Op: OpUpdate, Kind: KindImageVersion, ID: v.ID}), nil
}

// DeleteImageVersion implements cloud.Provider.
func (p *Provider) DeleteImageVersion(ctx context.Context, rg, gallery, def, version string) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	v, err := p.GetImageVersion(ctx, rg, gallery, def, version)
	if err != nil {
		return err
	}
	p.remove(pVersion(v.ResourceGroup, v.Gallery, v.Definition, v.Name), Change{Op: OpDelete, Kind: KindImageVersion, ID: v.ID})
	return nil
}

// publish applies azrules.Publish with the base's locations.
func (p *Provider) publish(ctx context.Context, v *cloud.ImageVersion, in cloud.ImageVersion, put bool) error {
	regions, err := p.regions(ctx)
	if err != nil {
		return err
	}
	return azrules.Publish(regions, v, in, put)
}

// overlaySources finds image version sources through the overlay.
type overlaySources struct {
	ctx context.Context
	p   *Provider
}

func (s overlaySources) ManagedImage(id, resource string) (*cloud.ManagedImage, error) {
	return s.p.imageByID(s.ctx, id, resource)
}

func (s overlaySources) ImageVersion(id, resource string) (*cloud.ImageDefinition, *cloud.ImageVersion, error) {
	return s.p.versionByID(s.ctx, id, resource)
}

func (s overlaySources) VHD(uri, resource string) (int64, cloud.BlobRef, error) {
	return s.p.vhdSize(s.ctx, uri, resource)
}

func (s overlaySources) StorageAccountExists(id string) (bool, error) {
	rid, err := cloud.ParseResourceID(id)
	if err != nil || len(rid.Names) == 0 {
		return false, nil
	}
	_, err = s.p.GetStorageAccount(s.ctx, rid.ResourceGroup, rid.Names[0])
	if cloud.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// versionByID reads a gallery image version (and its definition) of this
// subscription by ARM id, for a source reference from resource.
func (p *Provider) versionByID(ctx context.Context, srcID, resource string) (*cloud.ImageDefinition, *cloud.ImageVersion, error) {
	rid, err := cloud.ParseResourceID(srcID)
	if err != nil || !rid.Is("Microsoft.Compute", "galleries", "images", "versions") {
		return nil, nil, azrules.InvalidParameter(resource, "'%s' is not a gallery image version id.", srcID)
	}
	notFound := cloud.NotFound(cloud.CodeResourceNotFound, srcID, "The Resource '%s/%s' under resource group '%s' was not found.",
		tVersion, strings.Join(rid.Names, "/"), rid.ResourceGroup)
	if !strings.EqualFold(rid.Subscription, p.sub) {
		if q := p.peerOf(ctx, rid.Subscription); q != nil {
			return q.versionByID(ctx, srcID, resource) // another subscription of the tenant
		}
		return nil, nil, notFound
	}
	n := rid.Names
	v, err := p.GetImageVersion(ctx, rid.ResourceGroup, n[0], n[1], n[2])
	if err == nil {
		var d *cloud.ImageDefinition
		if d, err = p.GetImageDefinition(ctx, rid.ResourceGroup, n[0], n[1]); err == nil {
			return d, v, nil
		}
	}
	if cloud.IsNotFound(err) {
		return nil, nil, notFound
	}
	return nil, nil, err
}

// imageByID reads a managed image of this subscription by ARM id.
func (p *Provider) imageByID(ctx context.Context, srcID, resource string) (*cloud.ManagedImage, error) {
	rid, err := cloud.ParseResourceID(srcID)
	if err != nil || !rid.Is("Microsoft.Compute", "images") {
		return nil, azrules.InvalidParameter(resource, "'%s' is not a managed image id.", srcID)
	}
	notFound := cloud.NotFound(cloud.CodeResourceNotFound, srcID, "The Resource '%s/%s' under resource group '%s' was not found.",
		tImage, rid.Names[0], rid.ResourceGroup)
	if !strings.EqualFold(rid.Subscription, p.sub) {
		if q := p.peerOf(ctx, rid.Subscription); q != nil {
			return q.imageByID(ctx, srcID, resource) // another subscription of the tenant
		}
		return nil, notFound
	}
	img, err := p.GetManagedImage(ctx, rid.ResourceGroup, rid.Names[0])
	if cloud.IsNotFound(err) {
		return nil, notFound
	}
	return img, err
}

// GetManagedImage implements cloud.Provider.
func (p *Provider) GetManagedImage(ctx context.Context, rg, name string) (*cloud.ManagedImage, error) {
	return read(ctx, p, pImage(rg, name), func() (*cloud.ManagedImage, error) { return p.base.GetManagedImage(ctx, rg, name) })
}

// CreateManagedImage implements cloud.Provider: records the image made
// from a VHD page blob or a gallery image version, or the new tags of an
// existing one (whose source cannot change).
func (p *Provider) CreateManagedImage(ctx context.Context, in cloud.ManagedImage) (*cloud.ManagedImage, error) {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	rg, err := p.GetResourceGroup(ctx, in.ResourceGroup)
	if err != nil {
		return nil, err
	}
	id := cloud.ManagedImageID(p.sub, rg.Name, in.Name)
	loc, err := p.resolveLocation(ctx, orDefault(in.Location, rg.Location), tImage, id)
	if err != nil {
		return nil, err
	}
	old, exists, err := existing(p.GetManagedImage(ctx, rg.Name, in.Name))
	if err != nil {
		return nil, err
	}
	path := pImage(rg.Name, in.Name)
	if exists {
		if !strings.EqualFold(old.Location, loc) {
			return nil, azrules.LocationChanged(old.ID, old.Name, rg.Name, old.Location, loc)
		}
		if !cloud.SameSource(old.Source, in.Source) {
			return nil, azrules.PropertyChange(old.ID, "source")
		}
		old.Tags = in.Tags
		return record(p, path, *old, false, change(true, KindManagedImage, old.ID)), nil
	}
	img := cloud.ManagedImage{
		ID: id, Name: in.Name, ResourceGroup: rg.Name, Location: loc,
		OSType: in.OSType, HyperVGeneration: in.HyperVGeneration, Source: in.Source, Tags: in.Tags,
	}
	switch in.Source.Kind {
	case cloud.SourceVHD:
		if img.SizeBytes, _, err = p.vhdSize(ctx, in.Source.URI, id); err != nil {
			return nil, err
		}
	case cloud.SourceImageVersion:
		d, v, err := p.versionByID(ctx, in.Source.ID, id)
		if err != nil {
			return nil, err
		}
		if err := azrules.InheritImageField(id, "OS type", &img.OSType, d.OSType, v.ID); err != nil {
			return nil, err
		}
		if err := azrules.InheritImageField(id, "Hyper-V generation", &img.HyperVGeneration, d.HyperVGeneration, v.ID); err != nil {
			return nil, err
		}
		img.SizeBytes = v.SizeBytes
	default:
		return nil, azrules.InvalidParameter(id, "The managed image source kind '%s' is not supported; use a VHD blob or a gallery image version.", in.Source.Kind)
	}
	img.HyperVGeneration = orDefault(img.HyperVGeneration, cloud.HyperVGenV1)
	return record(p, path, img, true, change(false, KindManagedImage, id)), nil
}

// DeleteManagedImage implements cloud.Provider.
func (p *Provider) DeleteManagedImage(ctx context.Context, rg, name string) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	img, err := p.GetManagedImage(ctx, rg, name)
	if err != nil {
		return err
	}
	p.remove(pImage(img.ResourceGroup, img.Name), Change{Op: OpDelete, Kind: KindManagedImage, ID: img.ID})
	return nil
}

// GetStorageAccount implements cloud.Provider.
func (p *Provider) GetStorageAccount(ctx context.Context, rg, name string) (*cloud.StorageAccount, error) {
	return read(ctx, p, pAccount(rg, name), func() (*cloud.StorageAccount, error) { return p.base.GetStorageAccount(ctx, rg, name) })
}

// CreateStorageAccount implements cloud.Provider. Account names are
// global: one the overlay holds in another resource group, or one whose
// blob endpoint answers although base has no such account in this group,
// is taken.
func (p *Provider) CreateStorageAccount(ctx context.Context, in cloud.StorageAccount) (*cloud.StorageAccount, error) {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	rg, err := p.GetResourceGroup(ctx, in.ResourceGroup)
	if err != nil {
		return nil, err
	}
	id := cloud.StorageAccountID(p.sub, rg.Name, in.Name)
	taken := cloud.Conflict(cloud.CodeStorageAccountAlreadyTaken, id, "The storage account named %s is already taken.", in.Name)
	if owner := p.overlayAccount(in.Name); owner != nil && !strings.EqualFold(owner.path[0].name, rg.Name) {
		return nil, taken
	}
	loc, err := p.resolveLocation(ctx, orDefault(in.Location, rg.Location), tAccount, id)
	if err != nil {
		return nil, err
	}
	old, exists, err := existing(p.GetStorageAccount(ctx, rg.Name, in.Name))
	if err != nil {
		return nil, err
	}
	sa := cloud.StorageAccount{ID: id, Name: in.Name, ResourceGroup: rg.Name, Location: loc, BlobEndpoint: cloud.DefaultBlobEndpoint(in.Name)}
	if exists {
		if !strings.EqualFold(old.Location, loc) {
			return nil, azrules.LocationChanged(old.ID, old.Name, rg.Name, old.Location, loc)
		}
		sa = *old
	} else if _, asks := p.base.(cloud.Preflighter); !asks && p.overlayAccount(in.Name) == nil && p.baseAccountAnswers(ctx, in.Name) {
		// A base that can ask Storage (checkNameAvailability) has the
		// name checked by Preflight instead, with every other problem.
		return nil, taken
	}
	sa.Tags = in.Tags
	return record(p, pAccount(rg.Name, sa.Name), sa, !exists, change(exists, KindStorageAccount, sa.ID)), nil
}

// baseAccountAnswers probes the account's blob endpoint through base: an
// answer other than "no such account" (a 404 ResourceNotFound) or a
// transport error means the name exists somewhere.
func (p *Provider) baseAccountAnswers(ctx context.Context, account string) bool {
	_, err := p.base.GetBlob(ctx, cloud.BlobRef{Account: account, Container: probeContainer, Name: probeBlob})
	var ce *cloud.Error
	return err == nil || (asCloudError(err, &ce) && ce.Code != cloud.CodeResourceNotFound)
}

// overlayAccount is the live storage account of that name the overlay
// holds, in any resource group, or nil.
func (p *Provider) overlayAccount(name string) *entry {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range p.objs {
		if len(e.path) == 2 && e.path[1].typ == tAccount && !e.deleted && strings.EqualFold(e.path[1].name, name) {
			return e
		}
	}
	return nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func copyTime(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC().Round(0)
	return &u
}
