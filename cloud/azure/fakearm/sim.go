package fakearm

import (
	"context"
	"fmt"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azsim"
	"github.com/imgflow/imgflow/vhd"
)

// simulation is the one simulated Azure behind the fake: it holds the
// resources and applies ARM's rules; the fake converts SDK models to
// cloud values at its edge, calls it, and answers its results (or its
// *cloud.Error) on ARM's terms. What is HTTP only (long operations,
// paging, faults, throttling, the blob gate) stays in the fake.
type simulation interface {
	cloud.Provider
	ImageVersionProgress(ctx context.Context, rg, gallery, def, name string, read bool) (*cloud.ImageVersion, error, error)
	FailImageVersion(ctx context.Context, rg, gallery, def, name string, failure error) error
	GetRunCommand(ctx context.Context, rg, vm, name string) (*azsim.RunCommandState, error)
	DeleteRunCommand(ctx context.Context, rg, vm, name string) error
	GetVirtualNetwork(ctx context.Context, rg, name string) (*azsim.VirtualNetwork, error)
	PutVirtualNetwork(ctx context.Context, rg string, in azsim.VirtualNetwork) (*azsim.VirtualNetwork, error)
}

// newSimulation makes the fake's simulation: an in-memory subscription
// with the fake's id, locations, marketplace and GUID source, its
// replication timing (replication) and, with a blob backend, its data
// there (blobData).
func newSimulation(f *Fake) simulation {
	opts := azsim.Options{Target: "azure", Rand: f.rand, Locations: f.opts.Locations, Marketplace: f.opts.Marketplace,
		Replication: f.replication, RunOutput: f.runOutput}
	if f.data != nil {
		opts.Data, opts.Blobs, opts.DiskAccess = f.data, f.data, f.data
	} else {
		opts.Blobs = unknownBlobs{}
	}
	p, err := azsim.New(azsim.NewState(f.sub), opts)
	if err != nil {
		panic(fmt.Sprintf("fakearm: simulation: %v", err))
	}
	return p
}

// replication is how replication to a new target region goes
// (Options.ReplicationPolls, ReplicationDelay, RegionDelays and
// FailReplication). The simulation asks it in a handler, under f.mu.
func (f *Fake) replication(region string) azsim.Replication {
	delay, ok := f.opts.RegionDelays[region]
	if !ok {
		delay = f.opts.ReplicationDelay
	}
	return azsim.Replication{Delay: delay, Reads: f.opts.ReplicationPolls, Fail: f.failRegions[region]}
}

// unknownBlobs stands for the blobs of a fake without a blob backend:
// any blob of an account it holds is a 30 GiB fixed VHD (its content
// unknown).
type unknownBlobs struct{}

func (unknownBlobs) Blob(_ context.Context, ref cloud.BlobRef) (*azsim.BlobState, error) {
	return &azsim.BlobState{Name: ref.Name, Type: cloud.BlobTypePage, Size: 30<<30 + vhd.FooterSize}, nil
}

// simCtx is the context of a simulation call from a handler: the SDK fake
// server's, which the transport made uncancellable.
func simCtx(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}

// simResource reads the resource at id from the simulation (for ARM's
// 201 vs 200 and an operation's region); ok is false for a resource that
// is not there or of a type the fake does not serve.
func (f *Fake) simResource(id string) (location string, ok bool) {
	rid, err := cloud.ParseResourceID(id)
	if err != nil || len(rid.Names) == 0 {
		return "", false
	}
	ctx := context.Background()
	switch {
	case rid.Is("Microsoft.Storage", "storageAccounts"):
		if sa, err := f.sim.GetStorageAccount(ctx, rid.ResourceGroup, rid.Names[0]); err == nil {
			return sa.Location, true
		}
	case rid.Is("Microsoft.Compute", "galleries"):
		if g, err := f.sim.GetGallery(ctx, rid.ResourceGroup, rid.Names[0]); err == nil {
			return g.Location, true
		}
	case rid.Is("Microsoft.Compute", "galleries", "images"):
		if d, err := f.sim.GetImageDefinition(ctx, rid.ResourceGroup, rid.Names[0], rid.Names[1]); err == nil {
			return d.Location, true
		}
	case rid.Is("Microsoft.Compute", "galleries", "images", "versions"):
		if v, _, err := f.sim.ImageVersionProgress(ctx, rid.ResourceGroup, rid.Names[0], rid.Names[1], rid.Names[2], false); err == nil {
			return v.Location, true
		}
	case rid.Is("Microsoft.Compute", "images"):
		if img, err := f.sim.GetManagedImage(ctx, rid.ResourceGroup, rid.Names[0]); err == nil {
			return img.Location, true
		}
	case rid.Is("Microsoft.Compute", "virtualMachines"):
		if vm, err := f.sim.GetVM(ctx, rid.ResourceGroup, rid.Names[0]); err == nil {
			return vm.Location, true
		}
	case rid.Is("Microsoft.Compute", "virtualMachines", "runCommands"):
		if rc, err := f.sim.GetRunCommand(ctx, rid.ResourceGroup, rid.Names[0], rid.Names[1]); err == nil {
			return rc.Location, true
		}
	case rid.Is("Microsoft.Network", "virtualNetworks"):
		if vn, err := f.sim.GetVirtualNetwork(ctx, rid.ResourceGroup, rid.Names[0]); err == nil {
			return vn.Location, true
		}
	case rid.Is("Microsoft.Compute", "disks"):
		if d, err := f.sim.GetDisk(ctx, rid.ResourceGroup, rid.Names[0]); err == nil {
			return d.Location, true
		}
	}
	return "", false
}
