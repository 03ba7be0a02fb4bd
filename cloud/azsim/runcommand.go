package azsim

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/cloud/guest"
)

// RunCommandState is a VM's managed run command and the instance view of
// its run: the last RunCommandOutputMax bytes of each stream.
type RunCommandState struct {
	ID       string        `json:"id"`
	Name     string        `json:"name"`
	Location string        `json:"location"`
	Script   string        `json:"script"`
	Timeout  time.Duration `json:"timeout,omitempty"`
	// Result is the run's: ExecutionState Failed when the script could
	// not run, with Message saying why.
	Result  cloud.RunCommandResult `json:"result"`
	Message string                 `json:"message,omitempty"`
	Started time.Time              `json:"started"`
	Ended   time.Time              `json:"ended"`
}

// RunOutput writes a run command's streams where the VM agent would
// (Options.RunOutput): it appends data to the blob at ref.
type RunOutput func(ctx context.Context, ref cloud.BlobRef, data string) error

// RunCommand implements cloud.Provider: cmd.Simulated (or
// cmd.SimulatedScan, or the forms the script carries in its
// imgflow-guest-checks or imgflow-guest-scan comment) evaluated against
// the content record of the VM's OS disk. A script without one is run,
// as ARM records it, and fails: no guest boots here
// (testdata/azure/contract/vm/12_run_command_create.json). With
// Options.RunOutput the streams go whole to the output blobs and the
// result keeps the instance view's tails, as on Azure; without, the
// output blobs' container must exist and the whole streams are returned
// (the local target keeps no append blobs).
func (p *Provider) RunCommand(ctx context.Context, rgName, vmName string, cmd cloud.RunCommand) (*cloud.RunCommandResult, error) {
	if err := p.load(p.loadVM(ctx, rgName, vmName), p.loadRef(ctx, cmd.OutputBlob), p.loadRef(ctx, cmd.ErrorBlob)); err != nil {
		return nil, err
	}
	var disk content
	var vm cloud.VM
	err := p.view(ctx, func(st *State) error {
		rg, v, err := p.lookupVM(st, rgName, vmName)
		if err != nil {
			return err
		}
		vm = *v
		d, ok := rg.Disks[key(vm.OSDiskName)]
		if !ok {
			return cloud.Conflict(cloud.CodeOperationNotAllowed, vm.ID, "The VM '%s' has no OS disk.", vm.Name)
		}
		disk = content{key: ResourceKey(d.ID), size: d.SizeBytes}
		for _, ref := range []*cloud.BlobRef{cmd.OutputBlob, cmd.ErrorBlob} {
			if ref == nil || p.runOutput != nil {
				continue
			}
			if _, _, err := p.lookupContainer(st, *ref); err != nil {
				return fmt.Errorf("run command %s: output blob %s: %w", cmd.Name, ref.URL(), err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if p.dryRun {
		return p.dryRunCommand(vm.ID, cmd)
	}
	rc := &RunCommandState{ID: vm.ID + "/runCommands/" + cmd.Name, Name: cmd.Name, Location: vm.Location, Script: cmd.Script, Timeout: cmd.Timeout, Started: p.stamp()}
	res, err := p.runGuest(ctx, disk, cmd, rc)
	if err != nil {
		return nil, fmt.Errorf("run command %s in VM %s: %w", cmd.Name, vmName, err)
	}
	rc.Ended, rc.Result = p.stamp(), *res
	rc.Result.Output, rc.Result.Error = cloud.TailOutput(res.Output), cloud.TailOutput(res.Error)
	err = p.update(ctx, func(t *tx) error {
		rg, _, err := p.lookupVM(t.st, rgName, vmName)
		if err != nil {
			return err
		}
		if rg.RunCommands == nil {
			rg.RunCommands = map[string]*RunCommandState{}
		}
		k := key(vm.Name + "/" + cmd.Name)
		t.log(put(rg.RunCommands[k] != nil), cloud.KindRunCommand, rc.ID)
		rg.RunCommands[k] = rc
		return nil
	})
	if err != nil {
		return nil, err
	}
	if cmd.OutputBlob == nil || p.runOutput != nil {
		res.Output = rc.Result.Output
	}
	if cmd.ErrorBlob == nil || p.runOutput != nil {
		res.Error = rc.Result.Error
	}
	return res, nil
}

// runGuest runs cmd in a VM of disk: its simulated form evaluated, the
// streams written to the output blobs by Options.RunOutput. A script
// that cannot run is a Failed result, its reason in rc.Message.
func (p *Provider) runGuest(ctx context.Context, disk content, cmd cloud.RunCommand, rc *RunCommandState) (*cloud.RunCommandResult, error) {
	failed := func(format string, args ...any) (*cloud.RunCommandResult, error) {
		rc.Message = fmt.Sprintf(format, args...)
		return &cloud.RunCommandResult{ExecutionState: cloud.RunFailed, Error: rc.Message}, nil
	}
	checks, scan := cmd.Simulated, cmd.SimulatedScan
	if checks == nil && scan == nil {
		var err error
		if checks, err = guest.GuestChecksFromScript(cmd.Script); err == nil {
			scan, err = guest.GuestScanFromScript(cmd.Script)
		}
		if err != nil {
			return failed("%v", err)
		}
	}
	if checks == nil && scan == nil {
		return failed("The simulated VM runs no scripts: run command '%s' needs a simulated form (a check's local = [...], a scan's scan) to be evaluated against the image's recorded content.", cmd.Name)
	}
	r, done, err := p.openContent(ctx, disk)
	if err != nil {
		return nil, err
	}
	defer done()
	g, err := guest.ReadGuestContent(io.NewSectionReader(r, 0, disk.size))
	if err != nil {
		return failed("The image's content: %v", err)
	}
	res, err := guest.Simulate(checks, scan, g, disk.size)
	if err != nil {
		return failed("%v", err)
	}
	if p.runOutput == nil {
		return res, nil
	}
	for _, b := range []struct {
		ref  *cloud.BlobRef
		data string
	}{{cmd.OutputBlob, res.Output}, {cmd.ErrorBlob, res.Error}} {
		if b.ref == nil {
			continue
		}
		if err := p.runOutput(ctx, *b.ref, b.data); err != nil {
			return failed("Failed to upload the script's output: %v", err)
		}
	}
	return res, nil
}

// GetRunCommand returns run command name of VM vmName in group rg.
func (p *Provider) GetRunCommand(ctx context.Context, rg, vmName, name string) (*RunCommandState, error) {
	return read(ctx, p, func(st *State) (*RunCommandState, error) {
		g, vm, err := p.lookupVM(st, rg, vmName)
		if err != nil {
			return nil, err
		}
		if rc := g.RunCommands[key(vm.Name+"/"+name)]; rc != nil {
			return rc, nil
		}
		return nil, azrules.ResourceNotFound(vm.ID+"/runCommands/"+name, typeVM+"/runCommands", vm.Name+"/"+name, g.Name)
	})
}

// DeleteRunCommand deletes run command name of VM vmName in group rg.
func (p *Provider) DeleteRunCommand(ctx context.Context, rg, vmName, name string) error {
	return p.update(ctx, func(t *tx) error {
		g, vm, err := p.lookupVM(t.st, rg, vmName)
		if err != nil {
			return err
		}
		rc := g.RunCommands[key(vm.Name+"/"+name)]
		if rc == nil {
			return azrules.ResourceNotFound(vm.ID+"/runCommands/"+name, typeVM+"/runCommands", vm.Name+"/"+name, g.Name)
		}
		delete(g.RunCommands, key(vm.Name+"/"+name))
		t.log(cloud.OpDelete, cloud.KindRunCommand, rc.ID)
		return nil
	})
}

// dryRunCommand records the run command and answers without running it;
// the simulated forms are checked all the same.
func (p *Provider) dryRunCommand(vmID string, cmd cloud.RunCommand) (*cloud.RunCommandResult, error) {
	id := vmID + "/runCommands/" + cmd.Name
	for _, c := range cmd.Simulated {
		if err := c.Validate(); err != nil {
			return nil, azrules.InvalidParameter(id, "%v", err)
		}
	}
	if cmd.SimulatedScan != nil {
		if err := cmd.SimulatedScan.Validate(); err != nil {
			return nil, azrules.InvalidParameter(id, "%v", err)
		}
	}
	p.mu.Lock()
	p.changes = append(p.changes, cloud.Change{Op: cloud.OpCreate, Kind: cloud.KindRunCommand, ID: id})
	p.mu.Unlock()
	return &cloud.RunCommandResult{ExecutionState: cloud.RunSucceeded, Output: "(dry run: not run)\n"}, nil
}
