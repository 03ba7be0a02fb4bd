package local

import (
	"context"
	"strings"

	"github.com/imgflow/imgflow/cloud"
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
		return nil, nil, nil, resourceNotFound(cloud.ImageVersionID(st.SubscriptionID, rg.Name, g.Name, d.Name, name),
			"Microsoft.Compute/galleries/images/versions", g.Name+"/"+d.Name+"/"+name, rg.Name)
	}
	return g, d, v, nil
}

// GetImageVersion implements cloud.Provider.
func (p *Provider) GetImageVersion(ctx context.Context, rgName, gallery, def, name string) (*cloud.ImageVersion, error) {
	var out cloud.ImageVersion
	err := p.view(ctx, func(st *State) error {
		_, _, v, err := p.lookupVersion(st, rgName, gallery, def, name)
		if err != nil {
			return err
		}
		out = copyVersion(*v)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateImageVersion implements cloud.Provider: a PUT. A new version is
// checked against its source; an existing one may not change source or
// storage account type and otherwise updates like UpdateImageVersion.
// Replication completes at once. A new version snapshots its source's
// content into its own data file (see updateWithData).
func (p *Provider) CreateImageVersion(ctx context.Context, in cloud.ImageVersion) (*cloud.ImageVersion, error) {
	var out cloud.ImageVersion
	err := p.updateWithData(ctx, func(st *State) (*dataCopy, error) {
		id := cloud.ImageVersionID(st.SubscriptionID, in.ResourceGroup, in.Gallery, in.Definition, in.Name)
		rg, g, d, err := p.lookupDefinition(st, in.ResourceGroup, in.Gallery, in.Definition, id)
		if err != nil {
			return nil, err
		}
		id = cloud.ImageVersionID(st.SubscriptionID, rg.Name, g.Name, d.Name, in.Name)
		if err := p.checkGalleryRegion(g, in.Location, id, "image versions"); err != nil {
			return nil, err
		}
		if in.StorageAccountType == "" {
			in.StorageAccountType = cloud.StorageStandardLRS
		}
		var data *dataCopy
		v, ok := d.Versions[key(in.Name)]
		if ok {
			if !sameSource(v.Source, in.Source) {
				return nil, propertyChange(v.ID, "source")
			}
			if !strings.EqualFold(v.StorageAccountType, in.StorageAccountType) {
				return nil, propertyChange(v.ID, "storageAccountType")
			}
		} else {
			size, err := p.checkVersionSource(st, d, in.Source, id)
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
		if err := p.applyPublishing(v, in, true); err != nil {
			return nil, err
		}
		d.Versions[key(in.Name)] = v
		out = copyVersion(*v)
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
	var out cloud.ImageVersion
	err := p.update(ctx, func(st *State) error {
		g, _, v, err := p.lookupVersion(st, in.ResourceGroup, in.Gallery, in.Definition, in.Name)
		if err != nil {
			return err
		}
		if err := p.checkGalleryRegion(g, in.Location, v.ID, "image versions"); err != nil {
			return err
		}
		if in.Source.Kind != "" && !sameSource(v.Source, in.Source) {
			return propertyChange(v.ID, "source")
		}
		if in.StorageAccountType != "" && !strings.EqualFold(v.StorageAccountType, in.StorageAccountType) {
			return propertyChange(v.ID, "storageAccountType")
		}
		if err := p.applyPublishing(v, in, false); err != nil {
			return err
		}
		out = copyVersion(*v)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteImageVersion implements cloud.Provider; the version's data goes
// with it (disks made from it keep their own copy).
func (p *Provider) DeleteImageVersion(ctx context.Context, rgName, gallery, def, name string) error {
	return p.updateRemoving(ctx, func(st *State) (string, error) {
		_, d, v, err := p.lookupVersion(st, rgName, gallery, def, name)
		if err != nil {
			return "", err
		}
		delete(d.Versions, key(name))
		return p.forgetData(v.ID), nil
	})
}

func propertyChange(id, property string) error {
	return cloud.Conflict(cloud.CodePropertyChangeNotAllowed, id, "Changing property '%s' is not allowed.", property)
}

// applyPublishing writes the updatable publishing profile of in onto v.
// put selects PUT semantics (zero values mean defaults) over PATCH ones
// (zero values keep the current setting).
func (p *Provider) applyPublishing(v *cloud.ImageVersion, in cloud.ImageVersion, put bool) error {
	if in.ReplicaCount > 0 {
		v.ReplicaCount = in.ReplicaCount
	} else if put {
		v.ReplicaCount = 1
	}
	if len(in.TargetRegions) > 0 || put {
		regions, err := p.targetRegions(v, in.TargetRegions)
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
		v.Tags = copyTags(in.Tags)
	}
	// Replication is instantaneous: every target region is complete.
	v.ProvisioningState = cloud.ProvisioningSucceeded
	v.Replication = make([]cloud.RegionStatus, len(v.TargetRegions))
	for i, r := range v.TargetRegions {
		v.Replication[i] = cloud.RegionStatus{Region: r.Name, State: cloud.ReplicationCompleted, Progress: 100}
	}
	return nil
}

// targetRegions resolves the requested target regions: known physical
// regions, no duplicates, the version's own region included, zero values
// inherited from the version. None means the version's region only.
func (p *Provider) targetRegions(v *cloud.ImageVersion, req []cloud.TargetRegion) ([]cloud.TargetRegion, error) {
	if len(req) == 0 {
		req = []cloud.TargetRegion{{Name: v.Location}}
	}
	out := make([]cloud.TargetRegion, 0, len(req))
	seen := map[string]bool{}
	for _, r := range req {
		loc, ok := p.physicalLocation(r.Name)
		if !ok {
			why := "is not an available region for this subscription"
			if l, known := p.locIndex[foldLocation(r.Name)]; known && l.RegionType == cloud.RegionTypeLogical {
				why = "is a logical geography, not a physical region"
			}
			return nil, invalidParameter(v.ID, "Target region '%s' of gallery image version '%s' %s.", r.Name, v.Name, why)
		}
		if seen[loc] {
			return nil, invalidParameter(v.ID, "Target region '%s' is listed more than once in gallery image version '%s'; duplicate regions are not allowed.", loc, v.Name)
		}
		seen[loc] = true
		if r.ReplicaCount == 0 {
			r.ReplicaCount = v.ReplicaCount
		}
		if r.StorageAccountType == "" {
			r.StorageAccountType = v.StorageAccountType
		}
		r.Name = loc
		out = append(out, r)
	}
	if !seen[v.Location] {
		return nil, invalidParameter(v.ID,
			"The target regions of gallery image version '%s' must contain the location of the image version ('%s').", v.Name, v.Location)
	}
	return out, nil
}

// checkVersionSource checks that a new version's source exists and fits
// the definition, and returns the OS disk size it yields.
func (p *Provider) checkVersionSource(st *State, d *DefinitionState, src cloud.ImageSource, id string) (int64, error) {
	switch src.Kind {
	case cloud.SourceManagedImage:
		img, err := p.managedImageByID(st, src.ID, id)
		if err != nil {
			return 0, err
		}
		if err := matchSource(id, "source image "+img.ID, d, img.OSType, img.HyperVGeneration, ""); err != nil {
			return 0, err
		}
		return img.SizeBytes, nil
	case cloud.SourceImageVersion:
		sd, sv, err := p.versionByID(st, src.ID, id)
		if err != nil {
			return 0, err
		}
		if err := matchSource(id, "source image version "+sv.ID, d, sd.OSType, sd.HyperVGeneration, sd.Architecture); err != nil {
			return 0, err
		}
		return sv.SizeBytes, nil
	case cloud.SourceVHD:
		size, sa, err := p.vhdBlob(st, src.URI, id)
		if err != nil {
			return 0, err
		}
		if src.StorageAccountID != "" && !strings.EqualFold(src.StorageAccountID, sa.ID) {
			return 0, invalidParameter(id, "Storage account id '%s' does not match the account of the source VHD %s ('%s').", src.StorageAccountID, src.URI, sa.ID)
		}
		return size, nil
	}
	return 0, invalidParameter(id, "The image version source kind '%s' is not supported; use a managed image, an image version or a VHD.", src.Kind)
}

// matchSource refuses a source whose OS type, Hyper-V generation or
// architecture ("" = not checked) differs from the definition's.
func matchSource(id, what string, d *DefinitionState, osType, hyperV, arch string) error {
	check := func(prop, have, want string) error {
		if have != "" && !strings.EqualFold(have, want) {
			return invalidParameter(id, "The %s '%s' of %s does not match the %s '%s' of gallery image definition '%s'.",
				prop, have, what, prop, want, d.Name)
		}
		return nil
	}
	if err := check("OS type", osType, d.OSType); err != nil {
		return err
	}
	if err := check("Hyper-V generation", hyperV, d.HyperVGeneration); err != nil {
		return err
	}
	return check("architecture", arch, d.Architecture)
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
	return errA == nil && errB == nil && strings.EqualFold(ra.Account, rb.Account) &&
		ra.Container == rb.Container && ra.Name == rb.Name
}

// versionByID finds a gallery image version of this subscription by ARM id.
func (p *Provider) versionByID(st *State, srcID, resource string) (*DefinitionState, *cloud.ImageVersion, error) {
	rid, err := cloud.ParseResourceID(srcID)
	if err != nil || !rid.Is("Microsoft.Compute", "galleries", "images", "versions") {
		return nil, nil, invalidParameter(resource, "'%s' is not a gallery image version id.", srcID)
	}
	notFound := resourceNotFound(srcID, "Microsoft.Compute/galleries/images/versions", strings.Join(rid.Names, "/"), rid.ResourceGroup)
	if !strings.EqualFold(rid.Subscription, st.SubscriptionID) {
		return nil, nil, notFound
	}
	d, v, ok := findVersion(st, rid.ResourceGroup, rid.Names[0], rid.Names[1], rid.Names[2])
	if !ok {
		return nil, nil, notFound
	}
	return d, v, nil
}

// findVersion looks a version up for a reference: no error details, as
// the caller reports the reference itself as not found.
func findVersion(st *State, rgName, gallery, def, name string) (*DefinitionState, *cloud.ImageVersion, bool) {
	rg, ok := st.ResourceGroups[key(rgName)]
	if !ok {
		return nil, nil, false
	}
	g, ok := rg.Galleries[key(gallery)]
	if !ok {
		return nil, nil, false
	}
	d, ok := g.Definitions[key(def)]
	if !ok {
		return nil, nil, false
	}
	v, ok := d.Versions[key(name)]
	return d, v, ok
}
