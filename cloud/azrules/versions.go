package azrules

import (
	"maps"
	"strings"
	"time"

	"github.com/imgflow/imgflow/cloud"
)

// MaxReplicaCount is the most replicas per region a gallery image version
// may ask for.
const MaxReplicaCount = 100

// Publishing is the updatable part of an image version request: its
// publishing profile and tags. A nil or zero field is absent from the
// request.
type Publishing struct {
	ReplicaCount      int
	TargetRegions     []cloud.TargetRegion
	ExcludeFromLatest *bool
	EndOfLife         *time.Time
	Tags              cloud.Tags
}

// PublishingOf is the publishing request v makes through the cloud
// Provider interface, where ExcludeFromLatest is always given.
func PublishingOf(v cloud.ImageVersion) Publishing {
	exclude := v.ExcludeFromLatest
	return Publishing{ReplicaCount: v.ReplicaCount, TargetRegions: v.TargetRegions, ExcludeFromLatest: &exclude,
		EndOfLife: v.EndOfLife, Tags: v.Tags}
}

// ApplyPublishing writes the publishing request in onto version v. put
// selects PUT semantics (absent values are Azure's defaults: one
// replica, the version's own region, no end of life, no tags) over PATCH
// ones (absent values keep the current setting). It uses v's ID, Name,
// Location and StorageAccountType, and changes nothing on refusal.
func ApplyPublishing(regions Regions, v *cloud.ImageVersion, in Publishing, put bool) error {
	next := *v
	switch {
	case in.ReplicaCount > MaxReplicaCount || in.ReplicaCount < 0:
		return InvalidParameter(v.ID, "The replica count %d of gallery image version '%s' must be between 1 and %d.", in.ReplicaCount, v.Name, MaxReplicaCount)
	case in.ReplicaCount > 0:
		next.ReplicaCount = in.ReplicaCount
	case put:
		next.ReplicaCount = 1
	}
	if len(in.TargetRegions) > 0 || put {
		targets, err := TargetRegions(regions, &next, in.TargetRegions)
		if err != nil {
			return err
		}
		next.TargetRegions = targets
	}
	if in.ExcludeFromLatest != nil || put {
		next.ExcludeFromLatest = in.ExcludeFromLatest != nil && *in.ExcludeFromLatest
	}
	if in.EndOfLife != nil || put {
		next.EndOfLife = nil
		if in.EndOfLife != nil {
			t := *in.EndOfLife
			next.EndOfLife = &t
		}
	}
	if in.Tags != nil || put {
		next.Tags = maps.Clone(in.Tags)
	}
	*v = next
	return nil
}

// TargetRegions resolves the target regions req of version v: known
// physical regions, no duplicates, the version's own region included;
// replica count and storage type default to v's. None means v's region
// only. The regions come back with their canonical names.
func TargetRegions(regions Regions, v *cloud.ImageVersion, req []cloud.TargetRegion) ([]cloud.TargetRegion, error) {
	if len(req) == 0 {
		req = []cloud.TargetRegion{{Name: v.Location}}
	}
	out := make([]cloud.TargetRegion, 0, len(req))
	seen := map[string]bool{}
	for _, r := range req {
		loc, ok := regions.Physical(r.Name)
		if !ok {
			why := "is not an available region for this subscription"
			if l, known := regions.Lookup(r.Name); known && l.RegionType == cloud.RegionTypeLogical {
				why = "is a logical geography, not a physical region"
			}
			return nil, InvalidParameter(v.ID, "Target region '%s' of gallery image version '%s' %s.", r.Name, v.Name, why)
		}
		if seen[loc] {
			return nil, InvalidParameter(v.ID, "Target region '%s' is listed more than once in gallery image version '%s'; duplicate regions are not allowed.", loc, v.Name)
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
	if own, _ := regions.Physical(v.Location); !seen[own] {
		return nil, InvalidParameter(v.ID,
			"The target regions of gallery image version '%s' must contain the location of the image version ('%s').", v.Name, v.Location)
	}
	return out, nil
}

// ReplicateAtOnce marks v as provisioned with every target region
// replicated: the simulated targets replicate instantly.
func ReplicateAtOnce(v *cloud.ImageVersion) {
	v.ProvisioningState = cloud.ProvisioningSucceeded
	v.Replication = make([]cloud.RegionStatus, len(v.TargetRegions))
	for i, r := range v.TargetRegions {
		v.Replication[i] = cloud.RegionStatus{Region: r.Name, State: cloud.ReplicationCompleted, Progress: 100}
	}
}

// ReplicationFailed is the failure of a version whose replication failed
// in regions ("<display name>: <details>"). Azure's code for a failed
// regional replica is not documented; this one names what happened.
func ReplicationFailed(id, name string, regions []string) *cloud.Error {
	return cloud.Errorf(cloud.CodeReplicationFailed, id, "Replication of gallery image version '%s' failed in %s.",
		name, strings.Join(regions, "; "))
}

// Sources finds what an image version can be made from, answering
// Azure's not-found errors (naming resource, the version being made)
// when it is missing.
type Sources interface {
	// ManagedImage returns the managed image with ARM id id.
	ManagedImage(id, resource string) (*cloud.ManagedImage, error)
	// ImageVersion returns the gallery image version with ARM id id and
	// its definition.
	ImageVersion(id, resource string) (*cloud.ImageDefinition, *cloud.ImageVersion, error)
	// VHD checks the VHD blob at uri (see CheckVHDFooter) and returns its
	// virtual size and ref.
	VHD(uri, resource string) (int64, cloud.BlobRef, error)
	// StorageAccountExists reports whether the storage account with ARM
	// id id exists.
	StorageAccountExists(id string) (bool, error)
}

// CheckVersionSource checks that the source of new version id exists
// and fits its definition d, and returns the OS disk size it yields.
func CheckVersionSource(srcs Sources, d *cloud.ImageDefinition, src cloud.ImageSource, id string) (int64, error) {
	switch src.Kind {
	case cloud.SourceManagedImage:
		img, err := srcs.ManagedImage(src.ID, id)
		if err != nil {
			return 0, err
		}
		return img.SizeBytes, MatchSource(id, "source image "+img.ID, d, img.OSType, img.HyperVGeneration, "")
	case cloud.SourceImageVersion:
		sd, sv, err := srcs.ImageVersion(src.ID, id)
		if err != nil {
			return 0, err
		}
		return sv.SizeBytes, MatchSource(id, "source image version "+sv.ID, d, sd.OSType, sd.HyperVGeneration, sd.Architecture)
	case cloud.SourceVHD:
		size, ref, err := srcs.VHD(src.URI, id)
		if err != nil {
			return 0, err
		}
		if src.StorageAccountID != "" {
			if err := checkVHDAccount(srcs, src.StorageAccountID, ref, id); err != nil {
				return 0, err
			}
		}
		return size, nil
	}
	return 0, InvalidParameter(id, "The image version source kind '%s' is not supported; use a managed image, an image version or a VHD.", src.Kind)
}

// checkVHDAccount refuses a storageAccountId that is not the existing
// account holding the VHD at ref.
func checkVHDAccount(srcs Sources, accountID string, ref cloud.BlobRef, id string) error {
	rid, err := cloud.ParseResourceID(accountID)
	ok := err == nil && rid.Is("Microsoft.Storage", "storageAccounts") && strings.EqualFold(rid.Names[0], ref.Account)
	if ok {
		if ok, err = srcs.StorageAccountExists(accountID); err != nil {
			return err
		}
	}
	if !ok {
		return InvalidParameter(id, "Storage account id '%s' does not match the account of the source VHD %s.", accountID, ref.URL())
	}
	return nil
}

// MatchSource refuses a source (what, e.g. "source image <id>") whose OS
// type, Hyper-V generation or architecture ("" = not checked) differs
// from definition d's.
func MatchSource(id, what string, d *cloud.ImageDefinition, osType, hyperV, arch string) error {
	for _, c := range []struct{ prop, have, want string }{
		{"OS type", osType, d.OSType}, {"Hyper-V generation", hyperV, d.HyperVGeneration}, {"architecture", arch, d.Architecture},
	} {
		if c.have != "" && !strings.EqualFold(c.have, c.want) {
			return InvalidParameter(id, "The %s '%s' of %s does not match the %s '%s' of gallery image definition '%s'.",
				c.prop, c.have, what, c.prop, c.want, d.Name)
		}
	}
	return nil
}

// InheritImageField takes a managed image property (prop, at field) from
// its source version's definition (want) when unset, and refuses a
// different value.
func InheritImageField(id, prop string, field *string, want, srcID string) error {
	if *field == "" {
		*field = want
		return nil
	}
	if !strings.EqualFold(*field, want) {
		return InvalidParameter(id, "The %s '%s' does not match the %s '%s' of source image version %s.", prop, *field, prop, want, srcID)
	}
	return nil
}

// CheckVersionUnchanged refuses a request changing the source or storage
// account type of existing version v, which are fixed at creation. In a
// PATCH (put false) an empty source kind or storage type is absent.
func CheckVersionUnchanged(v *cloud.ImageVersion, src cloud.ImageSource, storageType string, put bool) error {
	if (put || src.Kind != "") && !cloud.SameSource(v.Source, src) {
		return PropertyChange(v.ID, "source")
	}
	if (put || storageType != "") && !strings.EqualFold(v.StorageAccountType, storageType) {
		return PropertyChange(v.ID, "storageAccountType")
	}
	return nil
}

// Publish applies the publishing request of in (as the cloud.Provider
// interface makes it, see PublishingOf) to v and replicates it at once,
// as the simulated targets (local, overlay) do.
func Publish(regions Regions, v *cloud.ImageVersion, in cloud.ImageVersion, put bool) error {
	if err := ApplyPublishing(regions, v, PublishingOf(in), put); err != nil {
		return err
	}
	ReplicateAtOnce(v)
	return nil
}
