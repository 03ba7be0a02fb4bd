package ensure

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/imgflow/imgflow/cloud"
)

// ReplicateRequest is the complete target list a version should have.
type ReplicateRequest struct {
	ResourceGroup, Gallery, Definition, Version string
	// Regions are region names; the version's own region is always kept.
	Regions []string
	// ReplicaCount and StorageAccountType apply to every region; zero
	// values keep what a region has (or the version's default for new ones).
	ReplicaCount       int
	StorageAccountType string
	// RegionReplicas sets the replica count of single regions, by
	// lower-cased name, over ReplicaCount (REPLICATIONS=region=count,…).
	RegionReplicas map[string]int
}

// Replicate sets a version's target regions in one update. A version that
// already has exactly these targets is left alone.
func Replicate(ctx context.Context, p cloud.Provider, req ReplicateRequest) (*cloud.ImageVersion, cloud.Outcome, error) {
	v, err := p.GetImageVersion(ctx, req.ResourceGroup, req.Gallery, req.Definition, req.Version)
	if err != nil {
		return nil, "", err
	}
	if v.Failed() {
		return nil, "", FailedVersionError(v, nil)
	}
	current := map[string]cloud.TargetRegion{}
	for _, r := range v.TargetRegions {
		current[strings.ToLower(r.Name)] = r
	}
	names := append([]string{v.Location}, req.Regions...)
	var targets []cloud.TargetRegion
	seen := map[string]bool{}
	for i, n := range names {
		// Names as the workflow wrote them: a display name ("West
		// Europe") is refused by ValidateTargetRegions below, not folded.
		key := strings.ToLower(n)
		if i > 0 && key == strings.ToLower(v.Location) {
			continue // the source region, always first
		}
		if seen[key] {
			return nil, "", &cloud.ValidationError{Field: "target regions", Value: n, Problem: "is listed twice", Fix: "list each region once"}
		}
		seen[key] = true
		t, ok := current[key]
		if !ok {
			t = cloud.TargetRegion{Name: n, ReplicaCount: v.ReplicaCount, StorageAccountType: v.StorageAccountType}
		}
		if req.ReplicaCount != 0 {
			t.ReplicaCount = req.ReplicaCount
		}
		if n := req.RegionReplicas[key]; n != 0 {
			t.ReplicaCount = n
		}
		if req.StorageAccountType != "" {
			t.StorageAccountType = req.StorageAccountType
		}
		targets = append(targets, t)
	}
	known, err := p.ListLocations(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("list locations: %w", err)
	}
	if err := cloud.ValidateTargetRegions(v.Location, targets, known); err != nil {
		return nil, "", err
	}
	if sameRegions(v.TargetRegions, targets) && len(v.TargetRegions) == len(targets) && replicasEqual(v.TargetRegions, targets) {
		return v, cloud.Exists, nil
	}
	upd := *v
	upd.TargetRegions = targets
	got, err := p.UpdateImageVersion(ctx, upd)
	return got, cloud.Updated, err
}

func replicasEqual(a, b []cloud.TargetRegion) bool {
	idx := map[string]cloud.TargetRegion{}
	for _, r := range a {
		idx[strings.ToLower(r.Name)] = r
	}
	for _, r := range b {
		o := idx[strings.ToLower(r.Name)]
		if o.ReplicaCount != r.ReplicaCount || !strings.EqualFold(o.StorageAccountType, r.StorageAccountType) {
			return false
		}
	}
	return true
}

// ErrReplicationIncomplete is returned (wrapped) when regions did not reach
// Completed.
var ErrReplicationIncomplete = errors.New("replication incomplete")

// ErrVersionFailed is returned (wrapped) for an image version in
// provisioningState Failed: it cannot be used or updated, only deleted.
var ErrVersionFailed = errors.New("image version failed")

// FailedVersionError reports a version in provisioningState Failed: the
// regions that failed with the platform's details, the operation's error
// (cause, when known) and the command that deletes it. The error wraps
// ErrVersionFailed, ErrReplicationIncomplete when a region failed, and
// cause.
func FailedVersionError(v *cloud.ImageVersion, cause error) error {
	msg := fmt.Sprintf("image version %s/%s/%s is in provisioningState Failed", v.Gallery, v.Definition, v.Name)
	_, failed := ReplicationLaggards(v)
	errs := []error{ErrVersionFailed}
	if len(failed) > 0 {
		msg += ": failed to replicate to " + strings.Join(failed, ", ")
		errs = append(errs, ErrReplicationIncomplete)
	}
	if cause != nil {
		msg += ": " + cause.Error()
		errs = append(errs, cause)
	}
	msg += fmt.Sprintf("; a failed version is never reused: delete it (az sig image-version delete --resource-group %s --gallery-name %s --gallery-image-definition %s --gallery-image-version %s) and run again",
		v.ResourceGroup, v.Gallery, v.Definition, v.Name)
	return &versionFailedError{msg: msg, errs: errs}
}

type versionFailedError struct {
	msg  string
	errs []error
}

func (e *versionFailedError) Error() string   { return e.msg }
func (e *versionFailedError) Unwrap() []error { return e.errs }

// WaitReplicated polls the version until its provisioning (the create or
// update that replicates it) ended and every target region reports
// Completed. It fails at once when the version or a region reports
// Failed, and after timeout otherwise, naming the regions that are not
// Completed. progress, when set, sees every poll.
func WaitReplicated(ctx context.Context, p cloud.Provider, v *cloud.ImageVersion, timeout, interval time.Duration, progress func([]cloud.RegionStatus)) (*cloud.ImageVersion, error) {
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last *cloud.ImageVersion
	pending := []string{"no status read yet"}
	for {
		got, err := p.GetImageVersion(ctx, v.ResourceGroup, v.Gallery, v.Definition, v.Name)
		if err != nil && ctx.Err() != nil && parent.Err() == nil {
			// The timeout ended a read: report it as the timeout it is.
			return last, fmt.Errorf("%w: version %s not Completed after %s in %s", ErrReplicationIncomplete, v.Name, timeout, strings.Join(pending, ", "))
		}
		if err != nil {
			return nil, fmt.Errorf("replication status of %s: %w", v.Name, err)
		}
		last = got
		if progress != nil {
			progress(got.Replication)
		}
		var failed []string
		pending, failed = ReplicationLaggards(got)
		if got.Failed() {
			return got, FailedVersionError(got, nil)
		}
		if len(failed) > 0 {
			return got, fmt.Errorf("%w: version %s failed to replicate to %s", ErrReplicationIncomplete, v.Name, strings.Join(failed, ", "))
		}
		if len(pending) == 0 && !got.Provisioning() {
			return got, nil
		}
		if len(pending) == 0 {
			pending = []string{"provisioningState " + got.ProvisioningState}
		}
		select {
		case <-ctx.Done():
			return got, fmt.Errorf("%w: version %s not Completed after %s in %s", ErrReplicationIncomplete, v.Name, timeout, strings.Join(pending, ", "))
		case <-time.After(interval):
		}
	}
}

// ReplicationLaggards lists target regions not yet Completed, and those
// that Failed (with the platform's details).
func ReplicationLaggards(v *cloud.ImageVersion) (pending, failed []string) {
	status := map[string]cloud.RegionStatus{}
	for _, s := range v.Replication {
		status[strings.ToLower(s.Region)] = s
	}
	for _, t := range v.TargetRegions {
		s, ok := status[strings.ToLower(t.Name)]
		switch {
		case !ok:
			pending = append(pending, t.Name+" (no status)")
		case strings.EqualFold(s.State, cloud.ReplicationFailed):
			d := t.Name
			if s.Details != "" {
				d += " (" + s.Details + ")"
			}
			failed = append(failed, d)
		case !strings.EqualFold(s.State, cloud.ReplicationCompleted):
			pending = append(pending, fmt.Sprintf("%s (%s %d%%)", t.Name, s.State, s.Progress))
		}
	}
	return pending, failed
}
