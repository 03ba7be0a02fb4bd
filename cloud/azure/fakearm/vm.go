package fakearm

import (
	"context"
	"net/http"
	"strings"
	"time"

	azfake "github.com/Azure/azure-sdk-for-go/sdk/azcore/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources/v3"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/cloud/azsim"
	"github.com/imgflow/imgflow/cloud/azure/internal/armconv"
)

// Virtual machines, their managed run commands and virtual networks (as
// the generic resources client PUTs them) are the simulation's, as test_vm
// uses them: a VM's PUT is a long operation (201 Creating, then
// Succeeded); what ARM asks of the request itself (a location, a network
// interface in an existing subnet) is checked here with azrules' rules,
// the rest by the simulation. A run command's output blobs are written
// through the SAS their URIs carry (runoutput.go).

const typeVNet = "Microsoft.Network/virtualNetworks"

func (f *Fake) virtualMachinesGet(ctx context.Context, rg, name string, _ *armcompute.VirtualMachinesClientGetOptions) (resp azfake.Responder[armcompute.VirtualMachinesClientGetResponse], errResp azfake.ErrorResponder) {
	return answer(f, func() (armcompute.VirtualMachinesClientGetResponse, *Error) {
		vm, err := f.sim.GetVM(simCtx(ctx), rg, name)
		if err != nil {
			return armcompute.VirtualMachinesClientGetResponse{}, armError(err)
		}
		return armcompute.VirtualMachinesClientGetResponse{VirtualMachine: armconv.VM(*vm)}, nil
	})
}

func (f *Fake) virtualMachinesBeginCreateOrUpdate(ctx context.Context, rg, name string, in armcompute.VirtualMachine, _ *armcompute.VirtualMachinesClientBeginCreateOrUpdateOptions) (resp azfake.PollerResponder[armcompute.VirtualMachinesClientCreateOrUpdateResponse], errResp azfake.ErrorResponder) {
	return start(f, http.StatusCreated, func() (armcompute.VirtualMachinesClientCreateOrUpdateResponse, *Error) {
		want := armconv.VMOf(&in, rg, name)
		want.Name, want.ResourceGroup, want.ProvisioningState, want.VMID = name, rg, "", ""
		if _, err := f.sim.GetVM(simCtx(ctx), rg, name); cloud.IsNotFound(err) {
			if err := armError(azrules.CheckVMLocation("", deref(in.Location))); err != nil {
				return armcompute.VirtualMachinesClientCreateOrUpdateResponse{}, err
			}
			if err := f.checkVMNetwork(in.Properties); err != nil {
				return armcompute.VirtualMachinesClientCreateOrUpdateResponse{}, err
			}
		}
		vm, err := f.sim.CreateVM(simCtx(ctx), want)
		if err != nil {
			return armcompute.VirtualMachinesClientCreateOrUpdateResponse{}, armError(err)
		}
		return armcompute.VirtualMachinesClientCreateOrUpdateResponse{VirtualMachine: armconv.VM(*vm)}, nil
	})
}

func (f *Fake) virtualMachinesBeginDelete(ctx context.Context, rg, name string, _ *armcompute.VirtualMachinesClientBeginDeleteOptions) (resp azfake.PollerResponder[armcompute.VirtualMachinesClientDeleteResponse], errResp azfake.ErrorResponder) {
	return startDelete(f, func() (armcompute.VirtualMachinesClientDeleteResponse, *Error) {
		vm, err := f.sim.GetVM(simCtx(ctx), rg, name)
		if err != nil {
			return armcompute.VirtualMachinesClientDeleteResponse{}, armError(err)
		}
		if fe := f.lroFault(ctx, http.MethodDelete, vm.ID); fe != nil {
			return armcompute.VirtualMachinesClientDeleteResponse{}, nil
		}
		// The OS disk and NIC have deleteOption Delete.
		return armcompute.VirtualMachinesClientDeleteResponse{}, armError(f.sim.DeleteVM(simCtx(ctx), rg, name))
	})
}

// checkVMNetwork checks the shape of a new VM's network profile under
// azrules.CheckVMNetwork; the simulation checks its subnet exists.
func (f *Fake) checkVMNetwork(p *armcompute.VirtualMachineProperties) *Error {
	np := &armcompute.NetworkProfile{}
	if p != nil && p.NetworkProfile != nil {
		np = p.NetworkProfile
	}
	var configs []azrules.NICConfig
	for _, nic := range np.NetworkInterfaceConfigurations {
		if nic == nil || nic.Properties == nil {
			continue
		}
		c := azrules.NICConfig{Name: deref(nic.Name)}
		for _, ipc := range nic.Properties.IPConfigurations {
			var subnet string
			if ipc != nil && ipc.Properties != nil && ipc.Properties.Subnet != nil {
				subnet = deref(ipc.Properties.Subnet.ID)
			}
			c.Subnets = append(c.Subnets, subnet)
		}
		configs = append(configs, c)
	}
	shapeOnly := func(string) bool { return true }
	return armError(azrules.CheckVMNetwork("", len(np.NetworkInterfaces), configs, string(deref(np.NetworkAPIVersion)), shapeOnly))
}

// runOutputURIs are the SAS URIs of a run command's output blobs, by
// blob, for the simulation's RunOutput hook (runOutput).
type runOutputURIs struct{}

func (f *Fake) virtualMachineRunCommandsBeginCreateOrUpdate(ctx context.Context, rg, vmName, name string, in armcompute.VirtualMachineRunCommand, _ *armcompute.VirtualMachineRunCommandsClientBeginCreateOrUpdateOptions) (resp azfake.PollerResponder[armcompute.VirtualMachineRunCommandsClientCreateOrUpdateResponse], errResp azfake.ErrorResponder) {
	// Not start: the guest's content is read and the output blobs written
	// without f.mu (blob calls to the backend, through the blob gate).
	if _, err := f.sim.GetVM(simCtx(ctx), rg, vmName); err != nil {
		errResp.SetError(armError(err))
		return
	}
	p := in.Properties
	if p == nil || p.Source == nil || deref(p.Source.Script) == "" {
		errResp.SetError(armError(azrules.InvalidParameter("", "Required parameter 'source.script' is missing (null).")))
		return
	}
	cmd := cloud.RunCommand{Name: name, Script: deref(p.Source.Script), Timeout: time.Duration(deref(p.TimeoutInSeconds)) * time.Second}
	uris := map[cloud.BlobRef]string{}
	for _, b := range []struct {
		uri *string
		ref **cloud.BlobRef
	}{{p.OutputBlobURI, &cmd.OutputBlob}, {p.ErrorBlobURI, &cmd.ErrorBlob}} {
		if ref, err := cloud.ParseBlobURL(deref(b.uri)); err == nil {
			*b.ref, uris[ref] = &ref, *b.uri
		}
	}
	if _, err := f.sim.RunCommand(context.WithValue(simCtx(ctx), runOutputURIs{}, uris), rg, vmName, cmd); err != nil {
		errResp.SetError(armError(err))
		return
	}
	rc, err := f.sim.GetRunCommand(simCtx(ctx), rg, vmName, name)
	if err != nil {
		errResp.SetError(armError(err))
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	resp = accept(f, http.StatusCreated, armcompute.VirtualMachineRunCommandsClientCreateOrUpdateResponse{VirtualMachineRunCommand: armconv.RunCommand(*rc, false)})
	return
}

// runOutput is the simulation's RunOutput: the blob written through the
// SAS the run command's URI carries.
func (f *Fake) runOutput(ctx context.Context, ref cloud.BlobRef, data string) error {
	uri, ok := ctx.Value(runOutputURIs{}).(map[cloud.BlobRef]string)[ref]
	if !ok {
		uri = ref.URL()
	}
	return f.writeRunOutput(uri, data)
}

func (f *Fake) virtualMachineRunCommandsGetByVirtualMachine(ctx context.Context, rg, vmName, name string, opts *armcompute.VirtualMachineRunCommandsClientGetByVirtualMachineOptions) (resp azfake.Responder[armcompute.VirtualMachineRunCommandsClientGetByVirtualMachineResponse], errResp azfake.ErrorResponder) {
	return answer(f, func() (armcompute.VirtualMachineRunCommandsClientGetByVirtualMachineResponse, *Error) {
		rc, err := f.sim.GetRunCommand(simCtx(ctx), rg, vmName, name)
		if err != nil {
			return armcompute.VirtualMachineRunCommandsClientGetByVirtualMachineResponse{}, armError(err)
		}
		expand := opts != nil && strings.EqualFold(deref(opts.Expand), "instanceView")
		return armcompute.VirtualMachineRunCommandsClientGetByVirtualMachineResponse{VirtualMachineRunCommand: armconv.RunCommand(*rc, expand)}, nil
	})
}

func (f *Fake) virtualMachineRunCommandsBeginDelete(ctx context.Context, rg, vmName, name string, _ *armcompute.VirtualMachineRunCommandsClientBeginDeleteOptions) (resp azfake.PollerResponder[armcompute.VirtualMachineRunCommandsClientDeleteResponse], errResp azfake.ErrorResponder) {
	// Not startDelete: a missing VM is the 404 a PUT under it gets, a
	// missing run command under an existing VM the 204 of any DELETE.
	return startWith(f, func() (armcompute.VirtualMachineRunCommandsClientDeleteResponse, int, *Error) {
		if _, err := f.sim.GetVM(simCtx(ctx), rg, vmName); err != nil {
			return armcompute.VirtualMachineRunCommandsClientDeleteResponse{}, 0, armError(err)
		}
		if err := f.sim.DeleteRunCommand(simCtx(ctx), rg, vmName, name); cloud.IsNotFound(err) {
			return armcompute.VirtualMachineRunCommandsClientDeleteResponse{}, http.StatusNoContent, nil
		} else if err != nil {
			return armcompute.VirtualMachineRunCommandsClientDeleteResponse{}, 0, armError(err)
		}
		return armcompute.VirtualMachineRunCommandsClientDeleteResponse{}, http.StatusAccepted, nil
	})
}

// The generic resources client's GET and PUT by id, for the one
// resource type imgflow makes through it: test_vm's virtual network.
func (f *Fake) resourcesGetByID(ctx context.Context, id, apiVersion string, _ *armresources.ClientGetByIDOptions) (resp azfake.Responder[armresources.ClientGetByIDResponse], errResp azfake.ErrorResponder) {
	return answer(f, func() (armresources.ClientGetByIDResponse, *Error) {
		rid, err := vnetID(id)
		if err != nil {
			return armresources.ClientGetByIDResponse{}, err
		}
		vn, serr := f.sim.GetVirtualNetwork(simCtx(ctx), rid.ResourceGroup, rid.Names[0])
		if serr != nil {
			return armresources.ClientGetByIDResponse{}, armError(serr)
		}
		return armresources.ClientGetByIDResponse{GenericResource: vnetOut(vn)}, nil
	})
}

// vnetID parses the id of the one resource type the generic resources
// client serves: a virtual network.
func vnetID(id string) (*cloud.ResourceID, *Error) {
	rid, err := cloud.ParseResourceID(id)
	if err != nil || !rid.Is("Microsoft.Network", "virtualNetworks") {
		return nil, newErr(http.StatusBadRequest, "InvalidResourceType", "fakearm serves only %s through the generic resources API, not %s.", typeVNet, id)
	}
	return rid, nil
}

func vnetOut(vn *azsim.VirtualNetwork) armresources.GenericResource {
	return armresources.GenericResource{ID: to(vn.ID), Name: to(vn.Name), Type: to(typeVNet), Location: to(vn.Location), Properties: vn.Properties}
}

func (f *Fake) resourcesBeginCreateOrUpdateByID(ctx context.Context, id, apiVersion string, in armresources.GenericResource, _ *armresources.ClientBeginCreateOrUpdateByIDOptions) (resp azfake.PollerResponder[armresources.ClientCreateOrUpdateByIDResponse], errResp azfake.ErrorResponder) {
	return start(f, http.StatusCreated, func() (armresources.ClientCreateOrUpdateByIDResponse, *Error) {
		rid, err := vnetID(id)
		if err != nil {
			return armresources.ClientCreateOrUpdateByIDResponse{}, err
		}
		props, _ := in.Properties.(map[string]any)
		vn, serr := f.sim.PutVirtualNetwork(simCtx(ctx), rid.ResourceGroup, azsim.VirtualNetwork{Name: rid.Names[0], Location: deref(in.Location), Properties: props})
		if serr != nil {
			return armresources.ClientCreateOrUpdateByIDResponse{}, armError(serr)
		}
		return armresources.ClientCreateOrUpdateByIDResponse{GenericResource: vnetOut(vn)}, nil
	})
}

func (f *Fake) resourceGroupsBeginDelete(ctx context.Context, name string, _ *armresources.ResourceGroupsClientBeginDeleteOptions) (resp azfake.PollerResponder[armresources.ResourceGroupsClientDeleteResponse], errResp azfake.ErrorResponder) {
	return start(f, http.StatusAccepted, func() (armresources.ResourceGroupsClientDeleteResponse, *Error) {
		return armresources.ResourceGroupsClientDeleteResponse{}, f.deleteGroup(ctx, name)
	})
}

// deleteGroup deletes a resource group and everything in it.
func (f *Fake) deleteGroup(ctx context.Context, name string) *Error {
	g, err := f.group(name)
	if err != nil {
		return err
	}
	if fe := f.lroFault(ctx, http.MethodDelete, deref(g.ID)); fe != nil {
		return nil
	}
	prefix := strings.ToLower(deref(g.ID)) + "/"
	f.accountNames.Range(func(name, id any) bool {
		if strings.HasPrefix(key(id.(string)), prefix) {
			f.accountNames.Delete(name)
		}
		return true
	})
	return armError(f.sim.DeleteResourceGroup(simCtx(ctx), name))
}
