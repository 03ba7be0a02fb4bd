package fakearm

import (
	"context"
	"net/http"
	"strings"
	"time"

	azfake "github.com/Azure/azure-sdk-for-go/sdk/azcore/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"
	computefake "github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7/fake"

	"github.com/imgflow/imgflow/cloud"
)

const gib = 1 << 30

// version is a gallery image version as the fake keeps it.
type version struct {
	id, name, location string
	def                *armcompute.GalleryImage
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
			failed = append(failed, f.displayName(t.Name)+": "+st.details)
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
			Name:                 to(f.displayName(t.Name)),
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
			r := &armcompute.RegionalReplicationStatus{Region: to(f.displayName(t.Name)), State: to(st.state), Progress: to(int32(st.progress))}
			if st.details != "" {
				r.Details = to(st.details)
			}
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

func (f *Fake) version(rg, gallery, def, name string) (*armcompute.GalleryImage, *version, *Error) {
	_, d, err := f.definition(rg, gallery, def, true)
	if err != nil {
		return nil, nil, err
	}
	v, ok := f.versions[key(deref(d.ID)+"/versions/"+name)]
	if !ok {
		return nil, nil, resourceNotFound("Microsoft.Compute/galleries/images/versions", gallery+"/"+def+"/"+name, rg)
	}
	return d, v, nil
}

func (f *Fake) versionsServer() computefake.GalleryImageVersionsServer {
	return computefake.GalleryImageVersionsServer{
		Get: func(ctx context.Context, rg, gallery, def, name string, opts *armcompute.GalleryImageVersionsClientGetOptions) (resp azfake.Responder[armcompute.GalleryImageVersionsClientGetResponse], errResp azfake.ErrorResponder) {
			f.mu.Lock()
			defer f.mu.Unlock()
			_, v, err := f.version(rg, gallery, def, name)
			if err != nil {
				errResp.SetError(err)
				return
			}
			expand := opts != nil && opts.Expand != nil && strings.EqualFold(string(*opts.Expand), string(armcompute.ReplicationStatusTypesReplicationStatus))
			resp.SetResponse(http.StatusOK, armcompute.GalleryImageVersionsClientGetResponse{GalleryImageVersion: f.render(v, expand)}, nil)
			return
		},
		NewListByGalleryImagePager: func(rg, gallery, def string, _ *armcompute.GalleryImageVersionsClientListByGalleryImageOptions) (resp azfake.PagerResponder[armcompute.GalleryImageVersionsClientListByGalleryImageResponse]) {
			f.mu.Lock()
			defer f.mu.Unlock()
			var page armcompute.GalleryImageVersionsClientListByGalleryImageResponse
			_, d, err := f.definition(rg, gallery, def, true)
			if err != nil {
				f.failPage(cloud.ImageDefinitionID(f.sub, rg, gallery, def)+"/versions", err)
				resp.AddPage(http.StatusOK, page, nil)
				return
			}
			for _, k := range sortedIDs(f.versions, deref(d.ID)+"/versions/") {
				v := f.render(f.versions[k], false)
				page.Value = append(page.Value, &v)
			}
			resp.AddPage(http.StatusOK, page, nil)
			return
		},
		BeginCreateOrUpdate: func(ctx context.Context, rg, gallery, def, name string, in armcompute.GalleryImageVersion, _ *armcompute.GalleryImageVersionsClientBeginCreateOrUpdateOptions) (resp azfake.PollerResponder[armcompute.GalleryImageVersionsClientCreateOrUpdateResponse], errResp azfake.ErrorResponder) {
			f.mu.Lock()
			defer f.mu.Unlock()
			out, err := f.putVersion(ctx, rg, gallery, def, name, in)
			if err != nil {
				errResp.SetError(err)
				return
			}
			resp = accept(f, http.StatusCreated, armcompute.GalleryImageVersionsClientCreateOrUpdateResponse{GalleryImageVersion: out})
			return
		},
		BeginUpdate: func(ctx context.Context, rg, gallery, def, name string, in armcompute.GalleryImageVersionUpdate, _ *armcompute.GalleryImageVersionsClientBeginUpdateOptions) (resp azfake.PollerResponder[armcompute.GalleryImageVersionsClientUpdateResponse], errResp azfake.ErrorResponder) {
			f.mu.Lock()
			defer f.mu.Unlock()
			out, err := f.patchVersion(ctx, rg, gallery, def, name, in)
			if err != nil {
				errResp.SetError(err)
				return
			}
			// PATCH accepts only 200, initial answer included.
			resp = accept(f, http.StatusOK, armcompute.GalleryImageVersionsClientUpdateResponse{GalleryImageVersion: out})
			return
		},
		BeginDelete: func(ctx context.Context, rg, gallery, def, name string, _ *armcompute.GalleryImageVersionsClientBeginDeleteOptions) (resp azfake.PollerResponder[armcompute.GalleryImageVersionsClientDeleteResponse], errResp azfake.ErrorResponder) {
			f.mu.Lock()
			defer f.mu.Unlock()
			_, v, err := f.version(rg, gallery, def, name)
			if err != nil {
				errResp.SetError(err)
				return
			}
			if fe := f.lroFault(ctx, http.MethodDelete, v.id); fe == nil {
				delete(f.versions, key(v.id))
			}
			resp = accept(f, http.StatusAccepted, armcompute.GalleryImageVersionsClientDeleteResponse{})
			return
		},
	}
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

// sameSource compares sources as Azure does: ids case-insensitively, blob
// URLs without their query.
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

func (f *Fake) putVersion(ctx context.Context, rg, gallery, defName, name string, in armcompute.GalleryImageVersion) (armcompute.GalleryImageVersion, *Error) {
	g, d, err := f.definition(rg, gallery, defName, true)
	if err != nil {
		return armcompute.GalleryImageVersion{}, err
	}
	id := deref(d.ID) + "/versions/" + name
	if err := f.checkGalleryRegion(g, deref(in.Location), "image versions"); err != nil {
		return armcompute.GalleryImageVersion{}, err
	}
	if in.Properties == nil || in.Properties.StorageProfile == nil {
		return armcompute.GalleryImageVersion{}, invalidParameter("Image version '%s' requires a storage profile.", name)
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
		if !sameSource(v.source, src) {
			return armcompute.GalleryImageVersion{}, propertyChange("source")
		}
		if !strings.EqualFold(v.storageType, storageType) {
			return armcompute.GalleryImageVersion{}, propertyChange("storageAccountType")
		}
		next = *v
	} else {
		size, content, err := f.checkVersionSource(d, src)
		if err != nil {
			return armcompute.GalleryImageVersion{}, err
		}
		next = version{id: id, name: name, location: deref(g.Location), def: d, source: src, storageType: storageType,
			replicaCount: 1, size: size, content: content, regions: map[string]*regionState{}, published: time.Now().UTC()}
	}
	if err := f.applyPublishing(&next, pp, true); err != nil {
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
		if src := sourceOf(in.Properties.StorageProfile); src.Kind != "" && !sameSource(v.source, src) {
			return armcompute.GalleryImageVersion{}, propertyChange("source")
		}
		if pp := in.Properties.PublishingProfile; pp != nil {
			if st := strOf(pp.StorageAccountType); st != "" && !strings.EqualFold(st, v.storageType) {
				return armcompute.GalleryImageVersion{}, propertyChange("storageAccountType")
			}
			if err := f.applyPublishing(&next, pp, false); err != nil {
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

// applyPublishing writes a publishing profile onto v: put selects PUT
// semantics (absent values are defaults) over PATCH (absent values keep).
func (f *Fake) applyPublishing(v *version, pp *armcompute.GalleryImageVersionPublishingProfile, put bool) *Error {
	if n := int(deref(pp.ReplicaCount)); n > 0 {
		if n > 100 {
			return invalidParameter("The replica count %d of gallery image version '%s' must be between 1 and 100.", n, v.name)
		}
		v.replicaCount = n
	} else if put {
		v.replicaCount = 1
	}
	if len(pp.TargetRegions) > 0 || put {
		targets, err := f.targetRegions(v, pp.TargetRegions)
		if err != nil {
			return err
		}
		v.targets = targets
	}
	if pp.ExcludeFromLatest != nil || put {
		v.exclude = deref(pp.ExcludeFromLatest)
	}
	if pp.EndOfLifeDate != nil || put {
		v.eol = nil
		if pp.EndOfLifeDate != nil {
			t := pp.EndOfLifeDate.UTC()
			v.eol = &t
		}
	}
	return nil
}

// targetRegions resolves requested target regions: known physical
// regions, no duplicates, the version's own region included, zero values
// inherited from the version.
func (f *Fake) targetRegions(v *version, req []*armcompute.TargetRegion) ([]cloud.TargetRegion, *Error) {
	if len(req) == 0 {
		req = []*armcompute.TargetRegion{{Name: to(v.location)}}
	}
	out := make([]cloud.TargetRegion, 0, len(req))
	seen := map[string]bool{}
	for _, r := range req {
		if r == nil {
			continue
		}
		name := deref(r.Name)
		loc, ok := f.physical(name)
		if !ok {
			why := "is not an available region for this subscription"
			if l, known := f.locIndex[fold(name)]; known && l.RegionType == cloud.RegionTypeLogical {
				why = "is a logical geography, not a physical region"
			}
			return nil, invalidParameter("Target region '%s' of gallery image version '%s' %s.", name, v.name, why)
		}
		if seen[loc] {
			return nil, invalidParameter("Target region '%s' is listed more than once in gallery image version '%s'; duplicate regions are not allowed.", loc, v.name)
		}
		seen[loc] = true
		t := cloud.TargetRegion{Name: loc, ReplicaCount: int(deref(r.RegionalReplicaCount)), StorageAccountType: strOf(r.StorageAccountType)}
		if t.ReplicaCount == 0 {
			t.ReplicaCount = v.replicaCount
		}
		if t.StorageAccountType == "" {
			t.StorageAccountType = v.storageType
		}
		out = append(out, t)
	}
	if !seen[v.location] {
		return nil, invalidParameter("The target regions of gallery image version '%s' must contain the location of the image version ('%s').", v.name, v.location)
	}
	return out, nil
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

// checkVersionSource checks that a new version's source exists and fits
// the definition; it returns the OS disk size and the blob holding its
// data when known.
func (f *Fake) checkVersionSource(d *armcompute.GalleryImage, src cloud.ImageSource) (int64, string, *Error) {
	dp := d.Properties
	switch src.Kind {
	case cloud.SourceManagedImage:
		img, ok := f.images[key(src.ID)]
		if !ok {
			rid, _ := cloud.ParseResourceID(src.ID)
			return 0, "", resourceNotFound("Microsoft.Compute/images", strings.Join(rid.Names, "/"), rid.ResourceGroup)
		}
		if err := matchSource("source image "+src.ID, d, img.osType, img.hyperV, ""); err != nil {
			return 0, "", err
		}
		return img.size, img.content, nil
	case cloud.SourceImageVersion:
		sv, ok := f.versions[key(src.ID)]
		if !ok {
			rid, _ := cloud.ParseResourceID(src.ID)
			return 0, "", resourceNotFound("Microsoft.Compute/galleries/images/versions", strings.Join(rid.Names, "/"), rid.ResourceGroup)
		}
		sp := sv.def.Properties
		if err := matchSource("source image version "+src.ID, d, strOf(sp.OSType), strOf(sp.HyperVGeneration), strOf(sp.Architecture)); err != nil {
			return 0, "", err
		}
		return sv.size, sv.content, nil
	case cloud.SourceVHD:
		size, acct, err := f.checkVHD(src.URI)
		if err != nil {
			return 0, "", err
		}
		if src.StorageAccountID != "" && !strings.EqualFold(src.StorageAccountID, deref(acct.ID)) {
			return 0, "", invalidParameter("Storage account id '%s' does not match the account of the source VHD %s ('%s').", src.StorageAccountID, src.URI, deref(acct.ID))
		}
		return size, stripQuery(src.URI), nil
	}
	_ = dp
	return 0, "", invalidParameter("The image version source kind '%s' is not supported; use a managed image, an image version or a VHD.", src.Kind)
}

// matchSource refuses a source whose OS type, Hyper-V generation or
// architecture ("" = not checked) differs from the definition's.
func matchSource(what string, d *armcompute.GalleryImage, osType, hyperV, arch string) *Error {
	dp := d.Properties
	check := func(prop, have, want string) *Error {
		if have != "" && !strings.EqualFold(have, want) {
			return invalidParameter("The %s '%s' of %s does not match the %s '%s' of gallery image definition '%s'.",
				prop, have, what, prop, want, deref(d.Name))
		}
		return nil
	}
	if err := check("OS type", osType, strOf(dp.OSType)); err != nil {
		return err
	}
	if err := check("Hyper-V generation", hyperV, strOf(dp.HyperVGeneration)); err != nil {
		return err
	}
	return check("architecture", arch, strOf(dp.Architecture))
}

func stripQuery(u string) string {
	if i := strings.IndexByte(u, '?'); i >= 0 {
		return u[:i]
	}
	return u
}
