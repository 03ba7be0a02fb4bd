package cloud

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
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
func Replicate(ctx context.Context, p Provider, req ReplicateRequest) (*ImageVersion, Outcome, error) {
	v, err := p.GetImageVersion(ctx, req.ResourceGroup, req.Gallery, req.Definition, req.Version)
	if err != nil {
		return nil, "", err
	}
	current := map[string]TargetRegion{}
	for _, r := range v.TargetRegions {
		current[strings.ToLower(r.Name)] = r
	}
	names := append([]string{v.Location}, req.Regions...)
	var targets []TargetRegion
	seen := map[string]bool{}
	for i, n := range names {
		key := strings.ToLower(n)
		if i > 0 && key == strings.ToLower(v.Location) {
			continue // the source region, always first
		}
		if seen[key] {
			return nil, "", &ValidationError{Field: "target regions", Value: n, Problem: "is listed twice", Fix: "list each region once"}
		}
		seen[key] = true
		t, ok := current[key]
		if !ok {
			t = TargetRegion{Name: n, ReplicaCount: v.ReplicaCount, StorageAccountType: v.StorageAccountType}
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
	if err := ValidateTargetRegions(v.Location, targets, known); err != nil {
		return nil, "", err
	}
	if sameRegions(v.TargetRegions, targets) && len(v.TargetRegions) == len(targets) && replicasEqual(v.TargetRegions, targets) {
		return v, Exists, nil
	}
	upd := *v
	upd.TargetRegions = targets
	got, err := p.UpdateImageVersion(ctx, upd)
	return got, Updated, err
}

func replicasEqual(a, b []TargetRegion) bool {
	idx := map[string]TargetRegion{}
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

// WaitReplicated polls the version until every target region reports
// Completed. It fails at once when a region reports Failed, and after
// timeout otherwise, naming the regions that are not Completed. progress,
// when set, sees every poll.
func WaitReplicated(ctx context.Context, p Provider, v *ImageVersion, timeout, interval time.Duration, progress func([]RegionStatus)) (*ImageVersion, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		got, err := p.GetImageVersion(ctx, v.ResourceGroup, v.Gallery, v.Definition, v.Name)
		if err != nil {
			return nil, fmt.Errorf("replication status of %s: %w", v.Name, err)
		}
		if progress != nil {
			progress(got.Replication)
		}
		pending, failed := ReplicationLaggards(got)
		if len(failed) > 0 {
			return got, fmt.Errorf("%w: version %s failed to replicate to %s", ErrReplicationIncomplete, v.Name, strings.Join(failed, ", "))
		}
		if len(pending) == 0 {
			return got, nil
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
func ReplicationLaggards(v *ImageVersion) (pending, failed []string) {
	status := map[string]RegionStatus{}
	for _, s := range v.Replication {
		status[strings.ToLower(s.Region)] = s
	}
	for _, t := range v.TargetRegions {
		s, ok := status[strings.ToLower(t.Name)]
		switch {
		case !ok:
			pending = append(pending, t.Name+" (no status)")
		case strings.EqualFold(s.State, ReplicationFailed):
			d := t.Name
			if s.Details != "" {
				d += " (" + s.Details + ")"
			}
			failed = append(failed, d)
		case !strings.EqualFold(s.State, ReplicationCompleted):
			pending = append(pending, fmt.Sprintf("%s (%s %d%%)", t.Name, s.State, s.Progress))
		}
	}
	return pending, failed
}
