package azsim

import (
	"context"
	"strings"
	"time"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/internal/deepcopy"
)

// Replication over time. Azure replicates a version to each new target
// region for hours, its provisioningState Creating or Updating until
// every region has. The simulations replicate at once
// (azrules.ReplicateAtOnce) unless Options.Replication says how each new
// region goes, as the fake ARM does so that waiting, progress and failed
// regions can be tested.

// Replication is how replication to one newly added target region goes.
type Replication struct {
	// Delay is how long it takes on the simulation's clock (Options.Now).
	Delay time.Duration
	// Reads is how many reads of the version's replication status see it
	// replicating (ImageVersionProgress with read, GetImageVersion).
	Reads int
	// Fail, when set, ends it Failed with these details once Delay
	// passed.
	Fail string
}

// VersionProgress is a version's replication in progress (never stored:
// a simulation with Options.Replication keeps no state file).
type VersionProgress struct {
	Regions map[string]*RegionProgress
	// Failure is why the version's provisioning failed; nil when it
	// did not, or nothing said why.
	Failure error
}

// RegionProgress is the replication to one region in progress.
type RegionProgress struct {
	Started, ReadyAt time.Time
	// Reads left before it can complete (-1: none counted); Total the
	// reads it started with, for its progress.
	Reads, Total int
	Fail         string
}

// replicate starts replication to the regions of v that prev (its
// replication before the change, nil for a new version) did not have,
// and sets v's provisioning state. It runs after azrules.Publish, which
// replicated at once: without Options.Replication that stands.
func (p *Provider) replicate(d *DefinitionState, v *cloud.ImageVersion, prev []cloud.RegionStatus, existed bool) {
	if p.replication == nil {
		return
	}
	initMap(&d.Progress)
	old := d.Progress[key(v.Name)]
	next := &VersionProgress{Regions: map[string]*RegionProgress{}}
	now := p.now()
	for i, t := range v.TargetRegions {
		if j := regionIndex(prev, t.Name); j >= 0 {
			v.Replication[i] = prev[j]
			if old != nil && old.Regions[key(t.Name)] != nil {
				next.Regions[key(t.Name)] = old.Regions[key(t.Name)]
			}
			continue
		}
		plan := p.replication(t.Name)
		switch {
		case plan.Fail != "" && plan.Delay == 0:
			v.Replication[i] = cloud.RegionStatus{Region: t.Name, State: cloud.ReplicationFailed, Details: plan.Fail}
		case plan.Reads > 0 || plan.Delay > 0:
			reads := plan.Reads
			if reads == 0 || plan.Fail != "" {
				reads = -1
			}
			v.Replication[i] = cloud.RegionStatus{Region: t.Name, State: cloud.ReplicationReplicating}
			next.Regions[key(t.Name)] = &RegionProgress{Started: now, ReadyAt: now.Add(plan.Delay), Reads: reads,
				Total: plan.Reads, Fail: plan.Fail}
		}
	}
	d.Progress[key(v.Name)] = next
	v.ProvisioningState = cloud.ProvisioningCreating
	if existed {
		v.ProvisioningState = cloud.ProvisioningUpdating
	}
	p.advance(d, v, false)
}

func regionIndex(rs []cloud.RegionStatus, name string) int {
	for i, r := range rs {
		if strings.EqualFold(r.Region, name) {
			return i
		}
	}
	return -1
}

// advance moves v's replication on: a region completes once its delay
// passed and (read) its reads are used up; the provisioning ends when
// every region has, Failed when one failed.
func (p *Provider) advance(d *DefinitionState, v *cloud.ImageVersion, read bool) {
	prog := d.Progress[key(v.Name)]
	if prog == nil {
		return
	}
	now := p.now()
	done, failed := true, []string{}
	for i := range v.Replication {
		r := &v.Replication[i]
		if rp := prog.Regions[key(r.Region)]; rp != nil && r.State == cloud.ReplicationReplicating {
			if read && rp.Reads >= 0 {
				rp.Reads--
			}
			total := rp.ReadyAt.Sub(rp.Started)
			switch {
			case rp.Reads < 0 && !now.Before(rp.ReadyAt) && rp.Fail != "":
				r.State, r.Details = cloud.ReplicationFailed, rp.Fail
			case rp.Reads < 0 && !now.Before(rp.ReadyAt):
				r.State, r.Progress = cloud.ReplicationCompleted, 100
			case total > 0:
				r.Progress = max(r.Progress, min(99, int(100*now.Sub(rp.Started)/total)))
			case read:
				r.Progress = min(99, r.Progress+max(1, 100/(rp.Total+1)))
			}
		}
		switch r.State {
		case cloud.ReplicationReplicating:
			done = false
		case cloud.ReplicationFailed:
			failed = append(failed, p.locIndex.DisplayName(r.Region)+": "+r.Details)
		}
	}
	if !v.Provisioning() {
		return
	}
	switch {
	case len(failed) > 0:
		v.ProvisioningState = cloud.ProvisioningFailed
		prog.Failure = azrules.ReplicationFailed(v.ID, v.Name, failed)
	case done:
		v.ProvisioningState = cloud.ProvisioningSucceeded
	}
}

// ImageVersionProgress returns the version as GetImageVersion does, its
// replication advanced on the clock; read counts as a read of its
// replication status (Replication.Reads). failure is why its
// provisioning failed (nil when it did not, or nothing said why).
func (p *Provider) ImageVersionProgress(ctx context.Context, rgName, gallery, def, name string, read bool) (v *cloud.ImageVersion, failure error, err error) {
	if err := p.load(p.loadVersion(ctx, rgName, gallery, def, name)); err != nil {
		return nil, nil, err
	}
	var out cloud.ImageVersion
	err = p.update(ctx, func(t *tx) error {
		_, d, v, err := p.lookupVersion(t.st, rgName, gallery, def, name)
		if err != nil {
			return err
		}
		p.advance(d, v, read)
		out = deepcopy.Of(*v)
		if prog := d.Progress[key(v.Name)]; prog != nil && prog.Failure != nil {
			failure = prog.Failure
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return &out, failure, nil
}

// FailImageVersion ends the provisioning of a version Failed with failure
// (nil: nothing says why), as Azure leaves a version whose operation
// failed: it must be deleted before its name is used again.
func (p *Provider) FailImageVersion(ctx context.Context, rgName, gallery, def, name string, failure error) error {
	return p.update(ctx, func(t *tx) error {
		_, d, v, err := p.lookupVersion(t.st, rgName, gallery, def, name)
		if err != nil {
			return err
		}
		v.ProvisioningState = cloud.ProvisioningFailed
		initMap(&d.Progress)
		prog := d.Progress[key(name)]
		if prog == nil {
			prog = &VersionProgress{}
			d.Progress[key(name)] = prog
		}
		prog.Failure = failure
		return nil
	})
}
