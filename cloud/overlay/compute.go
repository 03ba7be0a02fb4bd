package overlay

import (
	"context"
	"strings"
	"time"

	"github.com/imgflow/imgflow/cloud"
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
			return nil, cloud.Conflict(local.CodeInvalidResourceGroupLocation, old.ID,
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
			return nil, locationChanged(old.ID, old.Name, rg.Name, old.Location, loc)
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
	if g.Community == nil {
		return nil, invalidParameter(g.ID,
			"Gallery '%s' is not a community gallery: only a gallery created with sharingProfile.permissions 'Community' and communityGalleryInfo can be shared with the community.", g.Name)
	}
	if g.CommunityEnabled {
		return g, nil
	}
	defs, err := p.ListImageDefinitions(ctx, g.ResourceGroup, g.Name)
	if err != nil {
		return nil, err
	}
	for _, d := range defs {
		if sec, bad := privateOnlySecurityType(d.Features); bad {
			return nil, invalidParameter(g.ID,
				"Gallery '%s' cannot be shared with the community: image definition '%s' has SecurityType '%s', which is only supported in private galleries.",
				g.Name, d.Name, sec)
		}
	}
	g.CommunityEnabled = true
	g.PublicNames = []string{g.Community.PublicNamePrefix + "-" + local.PendingGUID}
	return record(p, pGallery(g.ResourceGroup, g.Name), *g, false, Change{Op: OpCreate, Kind: KindCommunitySharing, ID: g.ID}), nil
}

func privateOnlySecurityType(features map[string]string) (string, bool) {
	for k, v := range features {
		if strings.EqualFold(k, "SecurityType") && (strings.EqualFold(v, "TrustedLaunch") || strings.EqualFold(v, "ConfidentialVM")) {
			return v, true
		}
	}
	return "", false
}

// parentGallery gets the gallery a new resource childID goes in; a missing
// gallery is ParentResourceNotFound.
func (p *Provider) parentGallery(ctx context.Context, rg, name, childID string) (*cloud.Gallery, error) {
	g, err := p.GetGallery(ctx, rg, name)
	if cloud.HasCode(err, cloud.CodeResourceNotFound) {
		return nil, parentNotFound(childID, name)
	}
	return g, err
}

// checkGalleryRegion enforces that nested resources live in the gallery's
// region; an empty location means the gallery's.
func (p *Provider) checkGalleryRegion(ctx context.Context, galleryLocation, location, id, what string) error {
	if location == "" {
		return nil
	}
	loc, ok, err := p.physical(ctx, location)
	if err != nil {
		return err
	}
	if !ok || !strings.EqualFold(loc, galleryLocation) {
		return invalidParameter(id, "Location '%s' is invalid: %s must be in the gallery's region '%s'.", location, what, galleryLocation)
	}
	return nil
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
	if err := p.checkGalleryRegion(ctx, g.Location, in.Location, id, "image definitions"); err != nil {
		return nil, err
	}
	if sec, bad := privateOnlySecurityType(in.Features); bad && g.CommunityEnabled {
		return nil, invalidParameter(id,
			"SecurityType '%s' is not supported in community gallery '%s'; use TrustedLaunchSupported, ConfidentialVMSupported or TrustedLaunchAndConfidentialVmSupported.",
			sec, g.Name)
	}
	in.HyperVGeneration = orDefault(in.HyperVGeneration, cloud.HyperVGenV1)
	in.Architecture = orDefault(in.Architecture, cloud.ArchX64)
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
			if err := immutableDefinitionFields(&other, &in); err != nil {
				return nil, err
			}
			d, exists = other, true
		}
	}
	for _, other := range defs {
		if !strings.EqualFold(other.Name, in.Name) && strings.EqualFold(other.Publisher, in.Publisher) &&
			strings.EqualFold(other.Offer, in.Offer) && strings.EqualFold(other.SKU, in.SKU) {
			return nil, cloud.Conflict(cloud.CodeConflict, id,
				"Image definition '%s' in gallery '%s' already uses publisher '%s', offer '%s' and SKU '%s'; the (publisher, offer, sku) identifier must be unique within a gallery.",
				other.Name, g.Name, other.Publisher, other.Offer, other.SKU)
		}
	}
	d.Description = in.Description
	d.EndOfLife = copyTime(in.EndOfLife)
	d.Features = in.Features
	d.Tags = in.Tags
	return record(p, pDef(g.ResourceGroup, g.Name, d.Name), d, !exists, change(exists, KindImageDefinition, d.ID)), nil
}

// immutableDefinitionFields refuses a PUT changing a definition's identity,
// naming every changed property.
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
			changed = append(changed, "Changing property '"+f.name+"' is not allowed ('"+f.old+"' -> '"+f.new+"').")
		}
	}
	if len(changed) == 0 {
		return nil
	}
	return cloud.Conflict(cloud.CodePropertyChangeNotAllowed, old.ID, "%s", strings.Join(changed, " "))
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
		return nil, parentNotFound(id, in.Definition)
	} else if err != nil {
		return nil, err
	}
	id = cloud.ImageVersionID(p.sub, g.ResourceGroup, g.Name, d.Name, in.Name)
	if err := p.checkGalleryRegion(ctx, g.Location, in.Location, id, "image versions"); err != nil {
		return nil, err
	}
	in.StorageAccountType = orDefault(in.StorageAccountType, cloud.StorageStandardLRS)
	old, exists, err := existing(p.GetImageVersion(ctx, g.ResourceGroup, g.Name, d.Name, in.Name))
	if err != nil {
		return nil, err
	}
	var v cloud.ImageVersion
	if exists {
		if !sameSource(old.Source, in.Source) {
			return nil, propertyChange(old.ID, "source")
		}
		if !strings.EqualFold(old.StorageAccountType, in.StorageAccountType) {
			return nil, propertyChange(old.ID, "storageAccountType")
		}
		v = *old
	} else {
		size, err := p.checkVersionSource(ctx, d, in.Source, id)
		if err != nil {
			return nil, err
		}
		v = cloud.ImageVersion{
			ID: id, Name: in.Name, ResourceGroup: g.ResourceGroup, Gallery: g.Name, Definition: d.Name,
			Location: g.Location, Source: in.Source, StorageAccountType: in.StorageAccountType,
			ReplicaCount: 1, SizeBytes: size,
		}
	}
	if err := p.applyPublishing(ctx, &v, in, true); err != nil {
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
	if err := p.checkGalleryRegion(ctx, v.Location, in.Location, v.ID, "image versions"); err != nil {
		return nil, err
	}
	if in.Source.Kind != "" && !sameSource(v.Source, in.Source) {
		return nil, propertyChange(v.ID, "source")
	}
	if in.StorageAccountType != "" && !strings.EqualFold(v.StorageAccountType, in.StorageAccountType) {
		return nil, propertyChange(v.ID, "storageAccountType")
	}
	if err := p.applyPublishing(ctx, v, in, false); err != nil {
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

// applyPublishing writes the publishing profile of in onto v; put selects
// PUT semantics (zero values mean defaults) over PATCH ones (zero values
// keep the current setting). Every target region reports Completed.
func (p *Provider) applyPublishing(ctx context.Context, v *cloud.ImageVersion, in cloud.ImageVersion, put bool) error {
	if in.ReplicaCount > 0 {
		v.ReplicaCount = in.ReplicaCount
	} else if put {
		v.ReplicaCount = 1
	}
	if len(in.TargetRegions) > 0 || put {
		regions, err := p.targetRegions(ctx, v, in.TargetRegions)
		if err != nil {
			return err
		}
		v.TargetRegions = regions
	}
	v.ExcludeFromLatest = in.ExcludeFromLatest
	if in.EndOfLife != nil || put {
		v.EndOfLife = copyTime(in.EndOfLife)
	}
	if in.Tags != nil || put {
		v.Tags = in.Tags
	}
	v.ProvisioningState = cloud.ProvisioningSucceeded
	v.Replication = make([]cloud.RegionStatus, len(v.TargetRegions))
	for i, r := range v.TargetRegions {
		v.Replication[i] = cloud.RegionStatus{Region: r.Name, State: cloud.ReplicationCompleted, Progress: 100}
	}
	return nil
}

// targetRegions resolves requested target regions: known physical regions,
// no duplicates, the version's own region included, zero values inherited
// from the version. None means the version's region only.
func (p *Provider) targetRegions(ctx context.Context, v *cloud.ImageVersion, req []cloud.TargetRegion) ([]cloud.TargetRegion, error) {
	if len(req) == 0 {
		req = []cloud.TargetRegion{{Name: v.Location}}
	}
	out := make([]cloud.TargetRegion, 0, len(req))
	seen := map[string]bool{}
	for _, r := range req {
		l, known, err := p.location(ctx, r.Name)
		if err != nil {
			return nil, err
		}
		if !known || l.RegionType == cloud.RegionTypeLogical {
			why := "is not an available region for this subscription"
			if known {
				why = "is a logical geography, not a physical region"
			}
			return nil, invalidParameter(v.ID, "Target region '%s' of gallery image version '%s' %s.", r.Name, v.Name, why)
		}
		if seen[strings.ToLower(l.Name)] {
			return nil, invalidParameter(v.ID, "Target region '%s' is listed more than once in gallery image version '%s'; duplicate regions are not allowed.", l.Name, v.Name)
		}
		seen[strings.ToLower(l.Name)] = true
		if r.ReplicaCount == 0 {
			r.ReplicaCount = v.ReplicaCount
		}
		r.StorageAccountType = orDefault(r.StorageAccountType, v.StorageAccountType)
		r.Name = l.Name
		out = append(out, r)
	}
	if !seen[strings.ToLower(v.Location)] {
		return nil, invalidParameter(v.ID,
			"The target regions of gallery image version '%s' must contain the location of the image version ('%s').", v.Name, v.Location)
	}
	return out, nil
}

// checkVersionSource checks that a new version's source exists (in the
// overlay or base) and fits the definition, and returns the OS disk size.
func (p *Provider) checkVersionSource(ctx context.Context, d *cloud.ImageDefinition, src cloud.ImageSource, id string) (int64, error) {
	switch src.Kind {
	case cloud.SourceManagedImage:
		img, err := p.imageByID(ctx, src.ID, id)
		if err != nil {
			return 0, err
		}
		return img.SizeBytes, matchSource(id, "source image "+img.ID, d, img.OSType, img.HyperVGeneration, "")
	case cloud.SourceImageVersion:
		sd, sv, err := p.versionByID(ctx, src.ID, id)
		if err != nil {
			return 0, err
		}
		return sv.SizeBytes, matchSource(id, "source image version "+sv.ID, d, sd.OSType, sd.HyperVGeneration, sd.Architecture)
	case cloud.SourceVHD:
		size, ref, err := p.vhdSize(ctx, src.URI, id)
		if err != nil {
			return 0, err
		}
		if src.StorageAccountID != "" {
			rid, err := cloud.ParseResourceID(src.StorageAccountID)
			ok := err == nil && rid.Is("Microsoft.Storage", "storageAccounts") && strings.EqualFold(rid.Names[0], ref.Account)
			if ok {
				_, err = p.GetStorageAccount(ctx, rid.ResourceGroup, rid.Names[0])
				ok = err == nil
			}
			if !ok {
				return 0, invalidParameter(id, "Storage account id '%s' does not match the account of the source VHD %s.", src.StorageAccountID, ref.URL())
			}
		}
		return size, nil
	}
	return 0, invalidParameter(id, "The image version source kind '%s' is not supported; use a managed image, an image version or a VHD.", src.Kind)
}

// matchSource refuses a source whose OS type, Hyper-V generation or
// architecture ("" = not checked) differs from the definition's.
func matchSource(id, what string, d *cloud.ImageDefinition, osType, hyperV, arch string) error {
	for _, c := range []struct{ prop, have, want string }{
		{"OS type", osType, d.OSType}, {"Hyper-V generation", hyperV, d.HyperVGeneration}, {"architecture", arch, d.Architecture},
	} {
		if c.have != "" && !strings.EqualFold(c.have, c.want) {
			return invalidParameter(id, "The %s '%s' of %s does not match the %s '%s' of gallery image definition '%s'.",
				c.prop, c.have, what, c.prop, c.want, d.Name)
		}
	}
	return nil
}

// sameSource compares sources the way Azure does: ids case-insensitively,
// blob URLs without their SAS.
func sameSource(a, b cloud.ImageSource) bool {
	if a.Kind != b.Kind || !strings.EqualFold(a.ID, b.ID) || !strings.EqualFold(a.StorageAccountID, b.StorageAccountID) {
		return false
	}
	if a.URI == b.URI {
		return true
	}
	ra, errA := cloud.ParseBlobURL(a.URI)
	rb, errB := cloud.ParseBlobURL(b.URI)
	return errA == nil && errB == nil && strings.EqualFold(ra.Account, rb.Account) && ra.Container == rb.Container && ra.Name == rb.Name
}

// versionByID reads a gallery image version (and its definition) of this
// subscription by ARM id, for a source reference from resource.
func (p *Provider) versionByID(ctx context.Context, srcID, resource string) (*cloud.ImageDefinition, *cloud.ImageVersion, error) {
	rid, err := cloud.ParseResourceID(srcID)
	if err != nil || !rid.Is("Microsoft.Compute", "galleries", "images", "versions") {
		return nil, nil, invalidParameter(resource, "'%s' is not a gallery image version id.", srcID)
	}
	notFound := cloud.NotFound(cloud.CodeResourceNotFound, srcID, "The Resource '%s/%s' under resource group '%s' was not found.",
		tVersion, strings.Join(rid.Names, "/"), rid.ResourceGroup)
	if !strings.EqualFold(rid.Subscription, p.sub) {
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
		return nil, invalidParameter(resource, "'%s' is not a managed image id.", srcID)
	}
	notFound := cloud.NotFound(cloud.CodeResourceNotFound, srcID, "The Resource '%s/%s' under resource group '%s' was not found.",
		tImage, rid.Names[0], rid.ResourceGroup)
	if !strings.EqualFold(rid.Subscription, p.sub) {
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
			return nil, locationChanged(old.ID, old.Name, rg.Name, old.Location, loc)
		}
		if !sameSource(old.Source, in.Source) {
			return nil, propertyChange(old.ID, "source")
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
		if err := inheritImageField(id, "OS type", &img.OSType, d.OSType, v.ID); err != nil {
			return nil, err
		}
		if err := inheritImageField(id, "Hyper-V generation", &img.HyperVGeneration, d.HyperVGeneration, v.ID); err != nil {
			return nil, err
		}
		img.SizeBytes = v.SizeBytes
	default:
		return nil, invalidParameter(id, "The managed image source kind '%s' is not supported; use a VHD blob or a gallery image version.", in.Source.Kind)
	}
	img.HyperVGeneration = orDefault(img.HyperVGeneration, cloud.HyperVGenV1)
	return record(p, path, img, true, change(false, KindManagedImage, id)), nil
}

func inheritImageField(id, prop string, field *string, want, srcID string) error {
	if *field == "" {
		*field = want
		return nil
	}
	if !strings.EqualFold(*field, want) {
		return invalidParameter(id, "The %s '%s' does not match the %s '%s' of source image version %s.", prop, *field, prop, want, srcID)
	}
	return nil
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
	taken := cloud.Conflict(local.CodeStorageAccountAlreadyTaken, id, "The storage account named %s is already taken.", in.Name)
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
			return nil, locationChanged(old.ID, old.Name, rg.Name, old.Location, loc)
		}
		sa = *old
	} else if p.overlayAccount(in.Name) == nil && p.baseAccountAnswers(ctx, in.Name) {
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
