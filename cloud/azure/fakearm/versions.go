package fakearm

import (
	"context"
	"net/http"
	"strings"
	"time"

	azfake "github.com/Azure/azure-sdk-for-go/sdk/azcore/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
)

const gib = 1 << 30

// version is a gallery image version as the fake keeps it.
type version struct {
	id, name, location string
	def                cloud.ImageDefinition
	source             cloud.ImageSource
	storageType        string
	replicaCount       int
	targets            []cloud.TargetRegion // canonical region names
	exclude            bool
	eol                *time.Time
	tags               map[string]*string
	size               int64
	// content is a blob URL (no SAS) holding the OS disk as a fixed VHD,
	// when the fake knows it (VHD sources with a blob backend).
	content   string
	regions   map[string]*regionState
	published time.Time
	// provisioning is the provisioningState: Creating or Updating until
	// every target region replicated, then Succeeded, or Failed (with
	// failure, nil when the fault gave no error object).
	provisioning string
	failure      *Error
}

type regionState struct {
	state    armcompute.ReplicationState
	progress int
	details  string
	polls    int // reads that still show Replicating; -1: none
	started  time.Time
	readyAt  time.Time // not Completed before
	// failure, when set, ends the replication Failed with these details
	// instead (FailReplication) once the delay passed.
	failure string
}

// advance moves replication on: a region completes once its delay has
// passed and (read) its reads are used up; the version's provisioning
// ends when every region has. Called under f.mu.
func (f *Fake) advance(v *version, read bool) {
	now := time.Now()
	done, failed := true, []string{}
	for _, t := range v.targets {
		st := v.regions[t.Name]
		if st == nil {
			continue
		}
		if st.state == armcompute.ReplicationStateReplicating {
			if read && st.polls >= 0 {
				st.polls--
			}
			total := st.readyAt.Sub(st.started)
			switch {
			case st.polls < 0 && !now.Before(st.readyAt) && st.failure != "":
				st.state, st.details = armcompute.ReplicationStateFailed, st.failure
			case st.polls < 0 && !now.Before(st.readyAt):
				st.state, st.progress = armcompute.ReplicationStateCompleted, 100
			case total > 0:
				st.progress = max(st.progress, min(99, int(100*now.Sub(st.started)/total)))
			case read:
				st.progress = min(99, st.progress+max(1, 100/(f.opts.ReplicationPolls+1)))
			}
		}
		switch st.state {
		case armcompute.ReplicationStateReplicating:
			done = false
		case armcompute.ReplicationStateFailed:
			failed = append(failed, f.regions.DisplayName(t.Name)+": "+st.details)
		}
	}
	if v.provisioning == statusSucceeded || v.provisioning == statusFailed {
		return
	}
	switch {
	case len(failed) > 0:
		// Azure's code for a failed regional replica is not documented;
		// this one names what happened.
		v.provisioning = statusFailed
		v.failure = newErr(http.StatusInternalServerError, cloud.CodeReplicationFailed,
			"Replication of gallery image version '%s' failed in %s.", v.name, strings.Join(failed, "; "))
	case done:
		v.provisioning = statusSucceeded
	}
}

// render is the version as Azure answers it: target regions and
// replication status name regions by display name; the status comes only
// with $expand=ReplicationStatus (and advances replication by one read).
func (f *Fake) render(v *version, expand bool) armcompute.GalleryImageVersion {
	f.advance(v, expand)
	pp := &armcompute.GalleryImageVersionPublishingProfile{
		ReplicaCount:       to(int32(v.replicaCount)),
		StorageAccountType: to(armcompute.StorageAccountType(v.storageType)),
		ExcludeFromLatest:  to(v.exclude),
		EndOfLifeDate:      v.eol,
		PublishedDate:      to(v.published),
	}
	for _, t := range v.targets {
		pp.TargetRegions = append(pp.TargetRegions, &armcompute.TargetRegion{
			Name:                 to(f.regions.DisplayName(t.Name)),
			RegionalReplicaCount: to(int32(t.ReplicaCount)),
			StorageAccountType:   to(armcompute.StorageAccountType(t.StorageAccountType)),
			ExcludeFromLatest:    to(false),
		})
	}
	sp := &armcompute.GalleryImageVersionStorageProfile{}
	switch v.source.Kind {
	case cloud.SourceVHD:
		sp.OSDiskImage = &armcompute.GalleryOSDiskImage{
			HostCaching: to(armcompute.HostCachingReadOnly),
			Source:      &armcompute.GalleryDiskImageSource{URI: to(v.source.URI)},
		}
		if v.source.StorageAccountID != "" {
			sp.OSDiskImage.Source.StorageAccountID = to(v.source.StorageAccountID)
		}
	default:
		sp.Source = &armcompute.GalleryArtifactVersionFullSource{ID: to(v.source.ID)}
		sp.OSDiskImage = &armcompute.GalleryOSDiskImage{HostCaching: to(armcompute.HostCachingReadOnly)}
	}
	if v.size > 0 {
		sp.OSDiskImage.SizeInGB = to(int32((v.size + gib - 1) / gib))
	}
	props := &armcompute.GalleryImageVersionProperties{
		ProvisioningState: to(armcompute.GalleryProvisioningState(v.provisioning)),
		StorageProfile:    sp,
		PublishingProfile: pp,
	}
	if expand {
		rs := &armcompute.ReplicationStatus{}
		agg := armcompute.AggregatedReplicationStateCompleted
		for _, t := range v.targets {
			st := v.regions[t.Name]
			if st == nil {
				continue
			}
			switch st.state {
			case armcompute.ReplicationStateFailed:
				agg = armcompute.AggregatedReplicationStateFailed
			case armcompute.ReplicationStateReplicating:
				if agg != armcompute.AggregatedReplicationStateFailed {
					agg = armcompute.AggregatedReplicationStateInProgress
				}
			}
			// Every region has its details, "" unless it failed
			// (GalleryImageVersion_Get_WithReplicationStatus.json).
			r := &armcompute.RegionalReplicationStatus{Region: to(f.regions.DisplayName(t.Name)), State: to(st.state), Progress: to(int32(st.progress)),
				Details: to(st.details)}
			rs.Summary = append(rs.Summary, r)
		}
		rs.AggregatedState = to(agg)
		props.ReplicationStatus = rs
	}
	return armcompute.GalleryImageVersion{
		ID: to(v.id), Name: to(v.name), Location: to(v.location), Type: to("Microsoft.Compute/galleries/images/versions"),
		Tags: copyTags(v.tags), Properties: props,
	}
}

func (f *Fake) version(rg, gallery, def, name string) (*cloud.ImageDefinition, *version, *Error) {
	_, d, err := f.definition(rg, gallery, def, true)
	if err != nil {
		return nil, nil, err
	}
	v, ok := f.versions[key(d.ID+"/versions/"+name)]
	if !ok {
		return nil, nil, armError(azrules.ResourceNotFound("", "Microsoft.Compute/galleries/images/versions", gallery+"/"+def+"/"+name, rg))
	}
	return d, v, nil
}

func (f *Fake) galleryImageVersionsGet(ctx context.Context, rg, gallery, def, name string, opts *armcompute.GalleryImageVersionsClientGetOptions) (resp azfake.Responder[armcompute.GalleryImageVersionsClientGetResponse], errResp azfake.ErrorResponder) {
	return answer(f, func() (armcompute.GalleryImageVersionsClientGetResponse, *Error) {
		_, v, err := f.version(rg, gallery, def, name)
		if err != nil {
			return armcompute.GalleryImageVersionsClientGetResponse{}, err
		}
		expand := opts != nil && opts.Expand != nil && strings.EqualFold(string(*opts.Expand), string(armcompute.ReplicationStatusTypesReplicationStatus))
		return armcompute.GalleryImageVersionsClientGetResponse{GalleryImageVersion: f.render(v, expand)}, nil
	})
}

func (f *Fake) galleryImageVersionsNewListByGalleryImagePager(rg, gallery, def string, _ *armcompute.GalleryImageVersionsClientListByGalleryImageOptions) (resp azfake.PagerResponder[armcompute.GalleryImageVersionsClientListByGalleryImageResponse]) {
	return list(f, cloud.ImageDefinitionID(f.sub, rg, gallery, def)+"/versions", func() (armcompute.GalleryImageVersionsClientListByGalleryImageResponse, *Error) {
		var page armcompute.GalleryImageVersionsClientListByGalleryImageResponse
		_, d, err := f.definition(rg, gallery, def, true)
		if err != nil {
			return page, err
		}
		for _, k := range sortedIDs(f.versions, d.ID+"/versions/") {
			v := f.render(f.versions[k], false)
			page.Value = append(page.Value, &v)
		}
		return page, nil
	})
}

func (f *Fake) galleryImageVersionsBeginCreateOrUpdate(ctx context.Context, rg, gallery, def, name string, in armcompute.GalleryImageVersion, _ *armcompute.GalleryImageVersionsClientBeginCreateOrUpdateOptions) (resp azfake.PollerResponder[armcompute.GalleryImageVersionsClientCreateOrUpdateResponse], errResp azfake.ErrorResponder) {
	return start(f, http.StatusCreated, func() (armcompute.GalleryImageVersionsClientCreateOrUpdateResponse, *Error) {
		out, err := f.putVersion(ctx, rg, gallery, def, name, in)
		return armcompute.GalleryImageVersionsClientCreateOrUpdateResponse{GalleryImageVersion: out}, err
	})
}

func (f *Fake) galleryImageVersionsBeginUpdate(ctx context.Context, rg, gallery, def, name string, in armcompute.GalleryImageVersionUpdate, _ *armcompute.GalleryImageVersionsClientBeginUpdateOptions) (resp azfake.PollerResponder[armcompute.GalleryImageVersionsClientUpdateResponse], errResp azfake.ErrorResponder) {
	return start(f, http.StatusOK, func() (armcompute.GalleryImageVersionsClientUpdateResponse, *Error) {
		out, err := f.patchVersion(ctx, rg, gallery, def, name, in)
		if err != nil {
			return armcompute.GalleryImageVersionsClientUpdateResponse{}, err
		}
		// PATCH accepts only 200, initial answer included.
		return armcompute.GalleryImageVersionsClientUpdateResponse{GalleryImageVersion: out}, nil
	})
}

func (f *Fake) galleryImageVersionsBeginDelete(ctx context.Context, rg, gallery, def, name string, _ *armcompute.GalleryImageVersionsClientBeginDeleteOptions) (resp azfake.PollerResponder[armcompute.GalleryImageVersionsClientDeleteResponse], errResp azfake.ErrorResponder) {
	return startDelete(f, func() (armcompute.GalleryImageVersionsClientDeleteResponse, *Error) {
		_, v, err := f.version(rg, gallery, def, name)
		if err != nil {
			return armcompute.GalleryImageVersionsClientDeleteResponse{}, err
		}
		if fe := f.lroFault(ctx, http.MethodDelete, v.id); fe == nil {
			delete(f.versions, key(v.id))
		}
		return armcompute.GalleryImageVersionsClientDeleteResponse{}, nil
	})
}

// sourceOf reads a version's source from its storage profile.
func sourceOf(sp *armcompute.GalleryImageVersionStorageProfile) cloud.ImageSource {
	if sp == nil {
		return cloud.ImageSource{}
	}
	if sp.Source != nil && deref(sp.Source.ID) != "" {
		return cloud.ImageSource{Kind: kindOf(*sp.Source.ID), ID: *sp.Source.ID}
	}
	if sp.OSDiskImage != nil && sp.OSDiskImage.Source != nil && deref(sp.OSDiskImage.Source.URI) != "" {
		s := sp.OSDiskImage.Source
		return cloud.ImageSource{Kind: cloud.SourceVHD, URI: *s.URI, StorageAccountID: deref(s.StorageAccountID)}
	}
	return cloud.ImageSource{}
}

func kindOf(id string) cloud.SourceKind {
	rid, err := cloud.ParseResourceID(id)
	switch {
	case err != nil:
		return "unknown"
	case rid.Is("Microsoft.Compute", "images"):
		return cloud.SourceManagedImage
	case rid.Is("Microsoft.Compute", "galleries", "images", "versions"):
		return cloud.SourceImageVersion
	}
	return "unknown"
}

func (f *Fake) putVersion(ctx context.Context, rg, gallery, defName, name string, in armcompute.GalleryImageVersion) (armcompute.GalleryImageVersion, *Error) {
	g, d, err := f.definition(rg, gallery, defName, true)
	if err != nil {
		return armcompute.GalleryImageVersion{}, err
	}
	id := d.ID + "/versions/" + name
	if err := f.inGalleryRegion(g, deref(in.Location), id, "image versions"); err != nil {
		return armcompute.GalleryImageVersion{}, err
	}
	if in.Properties == nil || in.Properties.StorageProfile == nil {
		return armcompute.GalleryImageVersion{}, armError(azrules.InvalidParameter("", "Image version '%s' requires a storage profile.", name))
	}
	src := sourceOf(in.Properties.StorageProfile)
	pp := in.Properties.PublishingProfile
	if pp == nil {
		pp = &armcompute.GalleryImageVersionPublishingProfile{}
	}
	storageType := strOf(pp.StorageAccountType)
	if storageType == "" {
		storageType = cloud.StorageStandardLRS
	}
	v, exists := f.versions[key(id)]
	var next version
	if exists {
		if err := azrules.CheckVersionUnchanged(&cloud.ImageVersion{Source: v.source, StorageAccountType: v.storageType}, src, storageType, true); err != nil {
			return armcompute.GalleryImageVersion{}, armError(err)
		}
		next = *v
	} else {
		size, content, err := f.versionSource(d, src)
		if err != nil {
			return armcompute.GalleryImageVersion{}, err
		}
		next = version{id: id, name: name, location: g.Location, def: *d, source: src, storageType: storageType,
			replicaCount: 1, size: size, content: content, regions: map[string]*regionState{}, published: time.Now().UTC()}
	}
	if err := f.publish(&next, pp, true); err != nil {
		return armcompute.GalleryImageVersion{}, err
	}
	next.tags = copyTags(in.Tags)
	next.provisioning, next.failure = "Creating", nil
	if exists {
		next.provisioning = "Updating"
	}
	if fe := f.lroFault(ctx, http.MethodPut, id); fe != nil {
		// The version stays, Failed, as on Azure: it must be deleted
		// before the name can be used again.
		f.failVersion(&next, v, id)
		return f.render(&next, false), nil
	}
	if !exists && src.Kind == cloud.SourceVHD {
		content, err := f.snapshot(id, next.content)
		if err != nil {
			return armcompute.GalleryImageVersion{}, err
		}
		next.content = content
	}
	f.commitRegions(&next, v)
	f.versions[key(id)] = &next
	return f.render(&next, false), nil
}

func (f *Fake) patchVersion(ctx context.Context, rg, gallery, defName, name string, in armcompute.GalleryImageVersionUpdate) (armcompute.GalleryImageVersion, *Error) {
	_, v, err := f.version(rg, gallery, defName, name)
	if err != nil {
		return armcompute.GalleryImageVersion{}, err
	}
	next := *v
	if in.Properties != nil {
		pp := in.Properties.PublishingProfile
		var storageType string
		if pp != nil {
			storageType = strOf(pp.StorageAccountType)
		}
		current := &cloud.ImageVersion{Source: v.source, StorageAccountType: v.storageType}
		if err := azrules.CheckVersionUnchanged(current, sourceOf(in.Properties.StorageProfile), storageType, false); err != nil {
			return armcompute.GalleryImageVersion{}, armError(err)
		}
		if pp != nil {
			if err := f.publish(&next, pp, false); err != nil {
				return armcompute.GalleryImageVersion{}, err
			}
		}
	}
	if in.Tags != nil {
		next.tags = copyTags(in.Tags)
	}
	next.provisioning, next.failure = "Updating", nil
	if fe := f.lroFault(ctx, http.MethodPatch, v.id); fe != nil {
		f.failVersion(&next, v, v.id)
		return f.render(&next, false), nil
	}
	f.commitRegions(&next, v)
	f.versions[key(v.id)] = &next
	return f.render(&next, false), nil
}

// publish writes publishing profile pp onto v by
// azrules.ApplyPublishing: put selects PUT semantics (absent values are
// defaults) over PATCH (absent values keep).
func (f *Fake) publish(v *version, pp *armcompute.GalleryImageVersionPublishingProfile, put bool) *Error {
	cv := cloud.ImageVersion{Name: v.name, Location: v.location, StorageAccountType: v.storageType,
		ReplicaCount: v.replicaCount, TargetRegions: v.targets, ExcludeFromLatest: v.exclude, EndOfLife: v.eol}
	if err := azrules.ApplyPublishing(f.regions, &cv, publishingOf(pp), put); err != nil {
		return armError(err)
	}
	v.replicaCount, v.targets, v.exclude, v.eol = cv.ReplicaCount, cv.TargetRegions, cv.ExcludeFromLatest, cv.EndOfLife
	return nil
}

// publishingOf reads a publishing profile as the rules take it.
func publishingOf(pp *armcompute.GalleryImageVersionPublishingProfile) azrules.Publishing {
	in := azrules.Publishing{ReplicaCount: int(deref(pp.ReplicaCount)), ExcludeFromLatest: pp.ExcludeFromLatest}
	for _, r := range pp.TargetRegions {
		if r != nil {
			in.TargetRegions = append(in.TargetRegions, cloud.TargetRegion{Name: deref(r.Name),
				ReplicaCount: int(deref(r.RegionalReplicaCount)), StorageAccountType: strOf(r.StorageAccountType)})
		}
	}
	if pp.EndOfLifeDate != nil {
		t := pp.EndOfLifeDate.UTC()
		in.EndOfLife = &t
	}
	return in
}

// failVersion stores next in provisioningState Failed with the injected
// failure of its operation (none for a NoError fault).
func (f *Fake) failVersion(next, prev *version, id string) {
	next.provisioning = statusFailed
	if fl := f.lroFail[strings.ToLower(id)]; fl != nil {
		next.failure = fl.err
	}
	f.commitRegions(next, prev)
	f.versions[key(id)] = next
}

// commitRegions starts replication to regions new in next (completed at
// once, after ReplicationPolls reads and the region's delay, or Failed
// for FailReplication regions) and forgets removed ones.
func (f *Fake) commitRegions(next, prev *version) {
	regions := map[string]*regionState{}
	for _, t := range next.targets {
		if prev != nil {
			if st, ok := prev.regions[t.Name]; ok {
				regions[t.Name] = st
				continue
			}
		}
		delay, ok := f.opts.RegionDelays[t.Name]
		if !ok {
			delay = f.opts.ReplicationDelay
		}
		now := time.Now()
		details, failed := f.failRegions[t.Name]
		switch {
		case failed && delay == 0:
			regions[t.Name] = &regionState{state: armcompute.ReplicationStateFailed, details: details}
		case f.opts.ReplicationPolls > 0 || delay > 0:
			polls := f.opts.ReplicationPolls
			if polls == 0 || failed {
				polls = -1
			}
			regions[t.Name] = &regionState{state: armcompute.ReplicationStateReplicating, polls: polls,
				started: now, readyAt: now.Add(delay), failure: details}
		default:
			regions[t.Name] = &regionState{state: armcompute.ReplicationStateCompleted, progress: 100}
		}
	}
	next.regions = regions
}

// versionSource checks that a new version's source exists and fits
// definition d (azrules.CheckVersionSource); it returns the OS disk size
// and the blob holding its data when known.
func (f *Fake) versionSource(d *cloud.ImageDefinition, src cloud.ImageSource) (int64, string, *Error) {
	size, err := azrules.CheckVersionSource(fakeSources{f}, d, src, "")
	if err != nil {
		return 0, "", armError(err)
	}
	switch src.Kind {
	case cloud.SourceManagedImage:
		return size, f.images[key(src.ID)].content, nil
	case cloud.SourceImageVersion:
		return size, f.versions[key(src.ID)].content, nil
	}
	return size, stripQuery(src.URI), nil
}

// fakeSources finds image version sources in the fake's maps (under
// f.mu) as the rules take them.
type fakeSources struct{ f *Fake }

func (s fakeSources) ManagedImage(id, _ string) (*cloud.ManagedImage, error) {
	img, ok := s.f.images[key(id)]
	if !ok {
		rid, _ := cloud.ParseResourceID(id)
		return nil, azrules.ResourceNotFound("", "Microsoft.Compute/images", strings.Join(rid.Names, "/"), rid.ResourceGroup)
	}
	return &cloud.ManagedImage{ID: id, OSType: img.osType, HyperVGeneration: img.hyperV, SizeBytes: img.size}, nil
}

func (s fakeSources) ImageVersion(id, _ string) (*cloud.ImageDefinition, *cloud.ImageVersion, error) {
	sv, ok := s.f.versions[key(id)]
	if !ok {
		rid, _ := cloud.ParseResourceID(id)
		return nil, nil, azrules.ResourceNotFound("", "Microsoft.Compute/galleries/images/versions", strings.Join(rid.Names, "/"), rid.ResourceGroup)
	}
	def := sv.def
	return &def, &cloud.ImageVersion{ID: id, SizeBytes: sv.size}, nil
}

func (s fakeSources) VHD(uri, _ string) (int64, cloud.BlobRef, error) {
	ref, err := cloud.ParseBlobURL(uri)
	size, _, ferr := s.f.checkVHD(uri)
	if ferr != nil {
		return 0, ref, ferr
	}
	return size, ref, err
}

func (s fakeSources) StorageAccountExists(id string) (bool, error) {
	rid, err := cloud.ParseResourceID(id)
	if err != nil || !rid.Is("Microsoft.Storage", "storageAccounts") {
		return false, nil
	}
	_, ferr := s.f.account(rid.ResourceGroup, rid.Names[0])
	return ferr == nil, nil
}

func stripQuery(u string) string {
	if i := strings.IndexByte(u, '?'); i >= 0 {
		return u[:i]
	}
	return u
}
