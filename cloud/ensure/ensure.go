package ensure

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/internal/redact"
)

// SameLocation reports whether two locations are the same region: ARM
// compares them without case and spaces, and its compute answers spell
// "westeurope" as "West Europe".
func SameLocation(a, b string) bool { return locationKey(a) == locationKey(b) }

func locationKey(s string) string { return strings.ToLower(strings.ReplaceAll(s, " ", "")) }

// EnsureResourceGroup creates the group when missing. An existing group in
// another location is an error: a group's location cannot change.
func EnsureResourceGroup(ctx context.Context, p cloud.Provider, want cloud.ResourceGroup) (*cloud.ResourceGroup, cloud.Outcome, error) {
	if err := errors.Join(cloud.ValidateResourceGroupName(want.Name), cloud.ValidateLocationName(want.Location)); err != nil {
		return nil, "", err
	}
	got, err := p.GetResourceGroup(ctx, want.Name)
	switch {
	case cloud.IsNotFound(err):
		rg, err := p.CreateResourceGroup(ctx, want)
		return rg, cloud.Created, err
	case err != nil:
		return nil, "", err
	}
	if !SameLocation(got.Location, want.Location) {
		return nil, "", fmt.Errorf("resource group %q already exists in %s, not %s: use location=%q or another resource group name",
			want.Name, got.Location, want.Location, got.Location)
	}
	return got, cloud.Exists, nil
}

// EnsureGallery creates the gallery when missing, as a community gallery
// when want.Community is set. Gallery names are unique per subscription,
// so a gallery of that name in another resource group is an error, as is
// an existing gallery in another location. On an existing gallery the
// description and the community publisher details are updated; a private
// gallery asked to be a community one, or a community gallery under
// another prefix, is an error: Azure can change neither.
func EnsureGallery(ctx context.Context, p cloud.Provider, want cloud.Gallery) (*cloud.Gallery, cloud.Outcome, error) {
	errs := []error{cloud.ValidateGalleryName(want.Name), cloud.ValidateResourceGroupName(want.ResourceGroup), cloud.ValidateLocationName(want.Location)}
	if want.Community != nil {
		errs = append(errs, cloud.ValidateCommunityInfo(*want.Community))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, "", err
	}
	all, err := p.ListGalleries(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("list galleries: %w", err)
	}
	for _, g := range all {
		if strings.EqualFold(g.Name, want.Name) && !strings.EqualFold(g.ResourceGroup, want.ResourceGroup) {
			return nil, "", fmt.Errorf("gallery %q already exists in resource group %q: gallery names are unique per subscription; use resource_group=%q or another name",
				want.Name, g.ResourceGroup, g.ResourceGroup)
		}
	}
	got, err := p.GetGallery(ctx, want.ResourceGroup, want.Name)
	switch {
	case cloud.IsNotFound(err):
		g, err := p.CreateGallery(ctx, want)
		return g, cloud.Created, err
	case err != nil:
		return nil, "", err
	}
	if !SameLocation(got.Location, want.Location) {
		return nil, "", fmt.Errorf("gallery %q already exists in %s, not %s: a gallery cannot move; use location=%q",
			want.Name, got.Location, want.Location, got.Location)
	}
	if err := communityChangeError(got, want.Community); err != nil {
		return nil, "", err
	}
	upd := *got
	if want.Description != "" {
		upd.Description = want.Description
	}
	upd.Community = cloud.UpdateCommunityProfile(got.Community, want.Community)
	if upd.Description == got.Description && (upd.Community == nil || *upd.Community == *got.Community) {
		return got, cloud.Exists, nil
	}
	g, err := p.CreateGallery(ctx, upd)
	return g, cloud.Updated, err
}

// communityChangeError explains, in the workflow's terms, why an existing
// gallery cannot take the community profile next (nil when it can).
func communityChangeError(got *cloud.Gallery, next *cloud.CommunityInfo) error {
	if azrules.CheckCommunityProfileChange(got.ID, got.Community, next) == nil {
		return nil
	}
	if got.Community == nil {
		return fmt.Errorf("gallery %q already exists as a private gallery, and Azure cannot convert a private gallery to a community gallery: "+
			"a community gallery is created as one; give the community gallery a new name, or delete %q (with its images) and run again", got.Name, got.Name)
	}
	shared := ""
	if got.PublicName() != "" {
		shared = fmt.Sprintf(", and its public name %s comes from it", got.PublicName())
	}
	return fmt.Errorf("community gallery %q has the public name prefix %q, which Azure cannot change%s: keep prefix = %q, or create a new gallery for the new prefix",
		got.Name, got.Community.PublicNamePrefix, shared, got.Community.PublicNamePrefix)
}

// EnsureCommunity makes a community gallery public (EnableCommunity), so
// its images can be used by anyone under its public name. The gallery must
// have been created as a community gallery: Azure cannot convert a private
// one. A gallery already public is left alone.
func EnsureCommunity(ctx context.Context, p cloud.Provider, rg, gallery string) (*cloud.Gallery, cloud.Outcome, error) {
	got, err := p.GetGallery(ctx, rg, gallery)
	if err != nil {
		return nil, "", err
	}
	if got.Community == nil {
		return nil, "", fmt.Errorf("gallery %q is a private gallery, and Azure cannot convert a private gallery to a community gallery: "+
			"create it as one with gallery(%q, …, community = community_profile(prefix = …, publisher_uri = …, publisher_email = …, eula = …)); "+
			"an existing private gallery must be replaced: use a new name, or delete it", gallery, gallery)
	}
	if got.CommunityEnabled {
		return got, cloud.Exists, nil
	}
	defs, err := p.ListImageDefinitions(ctx, rg, gallery)
	if err != nil {
		return nil, "", fmt.Errorf("list image definitions of %s: %w", gallery, err)
	}
	for _, d := range defs {
		if st, bad := cloud.PrivateOnlySecurityType(d.Features); bad {
			return nil, "", fmt.Errorf("gallery %q holds image definition %q with SecurityType %s, which community galleries refuse: use %sSupported instead",
				gallery, d.Name, st, st)
		}
	}
	g, err := p.ShareCommunity(ctx, rg, gallery)
	return g, cloud.Created, err
}

// EnsureImageDefinition creates the definition when missing. Immutable
// fields that differ from an existing definition are an error naming each
// one; mutable ones (description, end of life, features, tags) are updated.
func EnsureImageDefinition(ctx context.Context, p cloud.Provider, want cloud.ImageDefinition, now time.Time) (*cloud.ImageDefinition, cloud.Outcome, error) {
	g, err := p.GetGallery(ctx, want.ResourceGroup, want.Gallery)
	if err != nil {
		return nil, "", fmt.Errorf("image definition %s: gallery: %w", want.Name, err)
	}
	want.Location = g.Location
	if err := cloud.ValidateImageDefinition(want, g.Community != nil || g.CommunityEnabled, now); err != nil {
		return nil, "", err
	}
	defs, err := p.ListImageDefinitions(ctx, want.ResourceGroup, want.Gallery)
	if err != nil {
		return nil, "", fmt.Errorf("list image definitions of %s: %w", want.Gallery, err)
	}
	var got *cloud.ImageDefinition
	for i, d := range defs {
		if strings.EqualFold(d.Name, want.Name) {
			got = &defs[i]
			continue
		}
		if strings.EqualFold(d.Publisher, want.Publisher) && strings.EqualFold(d.Offer, want.Offer) && strings.EqualFold(d.SKU, want.SKU) {
			return nil, "", fmt.Errorf("image definition %q in gallery %q already uses publisher/offer/sku %s/%s/%s: the triple must be unique within a gallery; change the sku",
				d.Name, want.Gallery, d.Publisher, d.Offer, d.SKU)
		}
	}
	if got == nil {
		d, err := p.CreateImageDefinition(ctx, want)
		return d, cloud.Created, err
	}
	if diffs := immutableDefinitionDiffs(got, &want); len(diffs) > 0 {
		return nil, "", fmt.Errorf("image definition %q already exists with different immutable properties (%s): Azure cannot change them; use another definition name, or change the workflow to match",
			want.Name, strings.Join(diffs, ", "))
	}
	if definitionNeedsUpdate(got, &want) {
		upd := *got
		if want.Description != "" {
			upd.Description = want.Description
		}
		if want.EndOfLife != nil {
			upd.EndOfLife = want.EndOfLife
		}
		if len(want.Features) > 0 {
			upd.Features = want.Features
		}
		d, err := p.CreateImageDefinition(ctx, upd)
		return d, cloud.Updated, err
	}
	return got, cloud.Exists, nil
}

func immutableDefinitionDiffs(got, want *cloud.ImageDefinition) []string {
	var diffs []string
	check := func(name, old, new string) {
		if !strings.EqualFold(old, new) {
			diffs = append(diffs, fmt.Sprintf("%s %s → %s", name, old, new))
		}
	}
	check("os_type", got.OSType, want.OSType)
	check("os_state", got.OSState, want.OSState)
	check("hyper_v_generation", got.HyperVGeneration, want.HyperVGeneration)
	check("architecture", got.Architecture, want.Architecture)
	check("publisher", got.Publisher, want.Publisher)
	check("offer", got.Offer, want.Offer)
	check("sku", got.SKU, want.SKU)
	return diffs
}

func definitionNeedsUpdate(got, want *cloud.ImageDefinition) bool {
	if want.Description != "" && want.Description != got.Description {
		return true
	}
	if want.EndOfLife != nil && (got.EndOfLife == nil || !want.EndOfLife.Equal(*got.EndOfLife)) {
		return true
	}
	return len(want.Features) > 0 && !maps.Equal(want.Features, got.Features)
}

// EnsureImageVersion creates the version when missing. An existing version
// made from another source is an error (the source is immutable); its
// updatable publishing fields (target regions, exclude-from-latest, end of
// life) are brought to what the workflow asks.
func EnsureImageVersion(ctx context.Context, p cloud.Provider, want cloud.ImageVersion, now time.Time) (*cloud.ImageVersion, cloud.Outcome, error) {
	def, err := p.GetImageDefinition(ctx, want.ResourceGroup, want.Gallery, want.Definition)
	if err != nil {
		return nil, "", fmt.Errorf("image version %s: definition: %w", want.Name, err)
	}
	want.Location = def.Location
	// No regions asked: a new version stays in its own region, and an
	// existing one keeps the regions it has (a later replicate() may have
	// grown them; shrinking them back would drop replicas on every rerun).
	keepRegions := len(want.TargetRegions) == 0
	if keepRegions {
		want.TargetRegions = []cloud.TargetRegion{{Name: want.Location}}
	}
	known, err := p.ListLocations(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("list locations: %w", err)
	}
	// Shape first, then the regions against the subscription's list, so a
	// bad region is reported once.
	if err := cloud.ValidateImageVersion(want, now); err != nil {
		return nil, "", err
	}
	if err := cloud.ValidateTargetRegions(want.Location, want.TargetRegions, known); err != nil {
		return nil, "", err
	}
	got, err := p.GetImageVersion(ctx, want.ResourceGroup, want.Gallery, want.Definition, want.Name)
	switch {
	case cloud.IsNotFound(err):
		v, err := p.CreateImageVersion(ctx, want)
		return v, cloud.Created, err
	case err != nil:
		return nil, "", err
	}
	if got.Failed() {
		return nil, "", FailedVersionError(got, nil)
	}
	if !cloud.SameSource(got.Source, want.Source) {
		return nil, "", fmt.Errorf("image version %s of %s already exists from another source (%s): a version's source cannot change; bump the version",
			want.Name, want.Definition, describeSource(got.Source))
	}
	if keepRegions {
		want.TargetRegions = got.TargetRegions
	}
	if got.ExcludeFromLatest == want.ExcludeFromLatest && sameRegions(got.TargetRegions, want.TargetRegions) &&
		(want.EndOfLife == nil || (got.EndOfLife != nil && want.EndOfLife.Equal(*got.EndOfLife))) {
		return got, cloud.Exists, nil
	}
	upd := *got
	upd.TargetRegions = want.TargetRegions
	upd.ExcludeFromLatest = want.ExcludeFromLatest
	if want.EndOfLife != nil {
		upd.EndOfLife = want.EndOfLife
	}
	v, err := p.UpdateImageVersion(ctx, upd)
	return v, cloud.Updated, err
}

func describeSource(s cloud.ImageSource) string {
	if s.Kind == cloud.SourceVHD {
		return "vhd " + redact.URL(s.URI)
	}
	return string(s.Kind) + " " + s.ID
}

// sameRegions compares target lists as sets with their settings, treating
// zero replica counts and storage types as "inherit".
func sameRegions(a, b []cloud.TargetRegion) bool {
	if len(a) != len(b) {
		return false
	}
	idx := make(map[string]cloud.TargetRegion, len(a))
	for _, r := range a {
		idx[strings.ToLower(r.Name)] = r
	}
	for _, r := range b {
		o, ok := idx[strings.ToLower(r.Name)]
		if !ok {
			return false
		}
		if r.ReplicaCount != 0 && r.ReplicaCount != o.ReplicaCount {
			return false
		}
		if r.StorageAccountType != "" && !strings.EqualFold(r.StorageAccountType, o.StorageAccountType) {
			return false
		}
	}
	return true
}

// EnsureStorageAccount creates the account when missing.
func EnsureStorageAccount(ctx context.Context, p cloud.Provider, want cloud.StorageAccount) (*cloud.StorageAccount, cloud.Outcome, error) {
	if err := errors.Join(cloud.ValidateStorageAccountName(want.Name), cloud.ValidateResourceGroupName(want.ResourceGroup), cloud.ValidateLocationName(want.Location)); err != nil {
		return nil, "", err
	}
	got, err := p.GetStorageAccount(ctx, want.ResourceGroup, want.Name)
	switch {
	case cloud.IsNotFound(err):
		sa, err := p.CreateStorageAccount(ctx, want)
		return sa, cloud.Created, err
	case err != nil:
		return nil, "", err
	}
	if !SameLocation(got.Location, want.Location) {
		return nil, "", fmt.Errorf("storage account %q already exists in %s, not %s: use location=%q", want.Name, got.Location, want.Location, got.Location)
	}
	return got, cloud.Exists, nil
}

// EnsureManagedImage creates the managed image when missing; an existing
// image from another source is an error.
func EnsureManagedImage(ctx context.Context, p cloud.Provider, want cloud.ManagedImage) (*cloud.ManagedImage, cloud.Outcome, error) {
	if err := errors.Join(cloud.ValidateResourceGroupName(want.ResourceGroup), cloud.ValidateLocationName(want.Location),
		cloud.ValidateOSType(want.OSType), cloud.ValidateHyperVGeneration(want.HyperVGeneration)); err != nil {
		return nil, "", err
	}
	got, err := p.GetManagedImage(ctx, want.ResourceGroup, want.Name)
	switch {
	case cloud.IsNotFound(err):
		img, err := p.CreateManagedImage(ctx, want)
		return img, cloud.Created, err
	case err != nil:
		return nil, "", err
	}
	// A managed image keeps only the URI of a VHD source, not the storage
	// account id a request may give.
	wantSource := want.Source
	wantSource.StorageAccountID = got.Source.StorageAccountID
	if !cloud.SameSource(got.Source, wantSource) {
		return nil, "", fmt.Errorf("managed image %q already exists from another source (%s): use another name, or delete it first",
			want.Name, describeSource(got.Source))
	}
	return got, cloud.Exists, nil
}
