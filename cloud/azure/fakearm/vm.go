package fakearm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	azfake "github.com/Azure/azure-sdk-for-go/sdk/azcore/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources/v3"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/cloud/azsim"
	"github.com/imgflow/imgflow/cloud/guest"
)

// Virtual machines, their managed run commands, virtual networks (as the
// generic resources client PUTs them) and resource group deletion, as
// test_vm uses them. A VM's PUT is a long operation (201 Creating, then
// Succeeded) checked as Azure does: its image must exist (a gallery
// version replicated to the VM's region, or a managed image there), its
// NIC configuration's subnet must exist, and a generalized image needs an
// OS profile that a specialized one must not have. No guest boots: a run
// command evaluates the predicates the script carries in its
// "# imgflow-guest-checks:" comment (lib/checks.star writes it), or the
// scan of its "# imgflow-guest-scan:" comment (lib/scans.star), against
// the content record of the image (guest.GuestContent), read from the
// blob backend; any other script fails with executionState Failed. The
// streams go whole to outputBlobUri/errorBlobUri (runoutput.go) and the
// instance view keeps their last 4 KB, as Azure's.

// vmState is a VM as the fake keeps it.
type vmState struct {
	vm *armcompute.VirtualMachine
	// content is the blob holding the image's OS disk ("" when unknown).
	content string
	size    int64
	runs    map[string]*armcompute.VirtualMachineRunCommand // lower(name)
}

const (
	typeVM   = "Microsoft.Compute/virtualMachines"
	typeVNet = "Microsoft.Network/virtualNetworks"
)

func (f *Fake) vm(rg, name string) (*vmState, *Error) {
	g, err := f.group(rg)
	if err != nil {
		return nil, err
	}
	v, ok := f.vms[key(cloud.VMID(f.sub, deref(g.Name), name))]
	if !ok {
		return nil, resourceNotFound(typeVM, name, deref(g.Name))
	}
	return v, nil
}

func (f *Fake) virtualMachinesGet(ctx context.Context, rg, name string, _ *armcompute.VirtualMachinesClientGetOptions) (resp azfake.Responder[armcompute.VirtualMachinesClientGetResponse], errResp azfake.ErrorResponder) {
	return answer(f, func() (armcompute.VirtualMachinesClientGetResponse, *Error) {
		v, err := f.vm(rg, name)
		if err != nil {
			return armcompute.VirtualMachinesClientGetResponse{}, err
		}
		return armcompute.VirtualMachinesClientGetResponse{VirtualMachine: clone(*v.vm)}, nil
	})
}

func (f *Fake) virtualMachinesBeginCreateOrUpdate(ctx context.Context, rg, name string, in armcompute.VirtualMachine, _ *armcompute.VirtualMachinesClientBeginCreateOrUpdateOptions) (resp azfake.PollerResponder[armcompute.VirtualMachinesClientCreateOrUpdateResponse], errResp azfake.ErrorResponder) {
	return startWith(f, func() (armcompute.VirtualMachinesClientCreateOrUpdateResponse, int, *Error) {
		out, status, err := f.putVM(rg, name, in)
		return armcompute.VirtualMachinesClientCreateOrUpdateResponse{VirtualMachine: out}, status, err
	})
}

func (f *Fake) virtualMachinesBeginDelete(ctx context.Context, rg, name string, _ *armcompute.VirtualMachinesClientBeginDeleteOptions) (resp azfake.PollerResponder[armcompute.VirtualMachinesClientDeleteResponse], errResp azfake.ErrorResponder) {
	return startDelete(f, func() (armcompute.VirtualMachinesClientDeleteResponse, *Error) {
		v, err := f.vm(rg, name)
		if err != nil {
			return armcompute.VirtualMachinesClientDeleteResponse{}, err
		}
		if fe := f.lroFault(ctx, http.MethodDelete, deref(v.vm.ID)); fe == nil {
			delete(f.vms, key(deref(v.vm.ID))) // the OS disk and NIC have deleteOption Delete
		}
		return armcompute.VirtualMachinesClientDeleteResponse{}, nil
	})
}

// putVM creates a VM or updates the tags of an existing one.
func (f *Fake) putVM(rg, name string, in armcompute.VirtualMachine) (armcompute.VirtualMachine, int, *Error) {
	g, err := f.group(rg)
	if err != nil {
		return armcompute.VirtualMachine{}, 0, err
	}
	id := cloud.VMID(f.sub, deref(g.Name), name)
	p := in.Properties
	if p == nil || p.StorageProfile == nil || p.StorageProfile.ImageReference == nil || deref(p.StorageProfile.ImageReference.ID) == "" {
		return armcompute.VirtualMachine{}, 0, invalidParameter("Required parameter 'storageProfile.imageReference' is missing (null).")
	}
	image := deref(p.StorageProfile.ImageReference.ID)
	if v, ok := f.vms[key(id)]; ok {
		if !strings.EqualFold(deref(v.vm.Properties.StorageProfile.ImageReference.ID), image) {
			return armcompute.VirtualMachine{}, 0, propertyChange("storageProfile.imageReference")
		}
		v.vm.Tags = copyTags(in.Tags)
		return clone(*v.vm), http.StatusOK, nil
	}
	if err := armError(azrules.CheckVMLocation("", deref(in.Location))); err != nil {
		return armcompute.VirtualMachine{}, 0, err
	}
	loc, lerr := f.resolveLocation(deref(in.Location), typeVM)
	if lerr != nil {
		return armcompute.VirtualMachine{}, 0, lerr
	}
	var vmSize string
	if p.HardwareProfile != nil {
		vmSize = strOf(p.HardwareProfile.VMSize)
	}
	if err := armError(azrules.CheckVMSize("", vmSize)); err != nil {
		return armcompute.VirtualMachine{}, 0, err
	}
	src, err := f.vmImage(image, loc)
	if err != nil {
		return armcompute.VirtualMachine{}, 0, err
	}
	if err := armError(azrules.CheckVMOSProfilePresence("", src.osState, p.OSProfile != nil)); err != nil {
		return armcompute.VirtualMachine{}, 0, err
	}
	if op := p.OSProfile; op != nil {
		if err := armError(azrules.CheckVMOSProfile(id, src.osType, deref(op.ComputerName), deref(op.AdminPassword), op.LinuxConfiguration != nil, op.WindowsConfiguration != nil)); err != nil {
			return armcompute.VirtualMachine{}, 0, err
		}
	}
	if err := f.checkVMNetwork(p.NetworkProfile); err != nil {
		return armcompute.VirtualMachine{}, 0, err
	}
	vm := clone(in)
	vm.ID, vm.Name, vm.Type, vm.Location = to(id), to(name), to(typeVM), to(loc)
	vm.Properties.ProvisioningState = to(statusSucceeded)
	vm.Properties.VMID = to(f.guid())
	vm.Properties.TimeCreated = to(time.Now().UTC())
	f.completeVM(&vm, src)
	f.vms[key(id)] = &vmState{vm: &vm, content: src.content, size: src.size, runs: map[string]*armcompute.VirtualMachineRunCommand{}}
	return clone(vm), http.StatusCreated, nil
}

const gib = 1 << 30

// vmSource is what a VM gets from its image.
type vmSource struct {
	// content is the blob holding the image's OS disk ("" when unknown).
	content         string
	size            int64
	osType, osState string
}

// completeVM fills in what ARM adds to a VM it accepted, as the REST spec
// examples show it (VirtualMachine_Create_*, VirtualMachine_Get): the OS
// disk's type, size and managed disk id, an empty data disk list, the
// network interfaces the NIC configurations make (named after them), and
// no admin password or secrets.
func (f *Fake) completeVM(vm *armcompute.VirtualMachine, src vmSource) {
	p := vm.Properties
	rg := cloud.ResourceGroupID(f.sub, rgOf(deref(vm.ID)))
	if p.StorageProfile.OSDisk == nil {
		p.StorageProfile.OSDisk = &armcompute.OSDisk{CreateOption: to(armcompute.DiskCreateOptionTypesFromImage)}
	}
	od := p.StorageProfile.OSDisk
	if deref(od.Name) == "" {
		od.Name = to(deref(vm.Name) + "_OsDisk_1_" + strings.ReplaceAll(f.guid(), "-", ""))
	}
	if src.osType != "" {
		od.OSType = to(armcompute.OperatingSystemTypes(src.osType))
	}
	if od.DiskSizeGB == nil && src.size > 0 {
		od.DiskSizeGB = to(int32((src.size + gib - 1) / gib))
	}
	if od.ManagedDisk == nil {
		od.ManagedDisk = &armcompute.ManagedDiskParameters{}
	}
	od.ManagedDisk.ID = to(rg + "/providers/Microsoft.Compute/disks/" + deref(od.Name))
	if p.StorageProfile.DataDisks == nil {
		p.StorageProfile.DataDisks = []*armcompute.DataDisk{}
	}
	for _, nic := range p.NetworkProfile.NetworkInterfaceConfigurations {
		if nic == nil || nic.Properties == nil {
			continue
		}
		p.NetworkProfile.NetworkInterfaces = append(p.NetworkProfile.NetworkInterfaces, &armcompute.NetworkInterfaceReference{
			ID:         to(rg + "/providers/Microsoft.Network/networkInterfaces/" + deref(nic.Name)),
			Properties: &armcompute.NetworkInterfaceReferenceProperties{Primary: nic.Properties.Primary, DeleteOption: nic.Properties.DeleteOption},
		})
	}
	if op := p.OSProfile; op != nil {
		op.AdminPassword = nil // never returned
		if op.Secrets == nil {
			op.Secrets = []*armcompute.VaultSecretGroup{}
		}
	}
}

// vmImage resolves a VM's image in the simulation and returns what the
// VM gets from it.
func (f *Fake) vmImage(image, loc string) (vmSource, *Error) {
	img, err := f.sim.ResolveVMImage(context.Background(), image, loc)
	if err != nil {
		return vmSource{}, armError(err)
	}
	return vmSource{content: f.data.contentURL(img.ID), size: img.SizeBytes, osType: img.OSType, osState: img.OSState}, nil
}

// checkVMNetwork checks the network profile under azrules.CheckVMNetwork,
// against the fake's virtual networks.
func (f *Fake) checkVMNetwork(np *armcompute.NetworkProfile) *Error {
	if np == nil {
		np = &armcompute.NetworkProfile{}
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
	exists := func(vnet string) bool {
		rid, err := cloud.ParseResourceID(vnet)
		if err != nil {
			return false
		}
		_, serr := f.sim.GetVirtualNetwork(context.Background(), rid.ResourceGroup, rid.Names[0])
		return serr == nil
	}
	return armError(azrules.CheckVMNetwork("", len(np.NetworkInterfaces), configs, string(deref(np.NetworkAPIVersion)), exists))
}

func (f *Fake) virtualMachineRunCommandsBeginCreateOrUpdate(ctx context.Context, rg, vmName, name string, in armcompute.VirtualMachineRunCommand, _ *armcompute.VirtualMachineRunCommandsClientBeginCreateOrUpdateOptions) (resp azfake.PollerResponder[armcompute.VirtualMachineRunCommandsClientCreateOrUpdateResponse], errResp azfake.ErrorResponder) {
	// Not answer/start: the lock is let go while the guest's content is
	// read and the output blobs written (blob calls to the backend).
	f.mu.Lock()
	v, err := f.vm(rg, vmName)
	var content string
	if err == nil {
		content = v.content
	}
	f.mu.Unlock()
	if err != nil {
		errResp.SetError(err)
		return
	}
	if in.Properties == nil || in.Properties.Source == nil || deref(in.Properties.Source.Script) == "" {
		errResp.SetError(invalidParameter("Required parameter 'source.script' is missing (null)."))
		return
	}
	// The guest's content is read and the output blobs written without
	// the lock: blob calls.
	view := f.runGuest(content, v.size, deref(in.Properties.Source.Script), deref(in.Properties.OutputBlobURI), deref(in.Properties.ErrorBlobURI))
	f.mu.Lock()
	defer f.mu.Unlock()
	rc := clone(in)
	rc.Properties.ProtectedParameters = nil // ARM keeps them encrypted and never answers them
	id := deref(v.vm.ID) + "/runCommands/" + name
	rc.ID, rc.Name, rc.Type = to(id), to(name), to(typeVM+"/runCommands")
	rc.Location = v.vm.Location
	rc.Properties.ProvisioningState = to(statusSucceeded)
	rc.Properties.InstanceView = view
	status := http.StatusCreated
	if _, ok := v.runs[key(name)]; ok {
		status = http.StatusOK
	}
	v.runs[key(name)] = &rc
	out := clone(rc)
	out.Properties.InstanceView = nil // shown with $expand=instanceView only
	resp = accept(f, status, armcompute.VirtualMachineRunCommandsClientCreateOrUpdateResponse{VirtualMachineRunCommand: out})
	return
}

func (f *Fake) virtualMachineRunCommandsGetByVirtualMachine(ctx context.Context, rg, vmName, name string, opts *armcompute.VirtualMachineRunCommandsClientGetByVirtualMachineOptions) (resp azfake.Responder[armcompute.VirtualMachineRunCommandsClientGetByVirtualMachineResponse], errResp azfake.ErrorResponder) {
	return answer(f, func() (armcompute.VirtualMachineRunCommandsClientGetByVirtualMachineResponse, *Error) {
		v, err := f.vm(rg, vmName)
		if err != nil {
			return armcompute.VirtualMachineRunCommandsClientGetByVirtualMachineResponse{}, err
		}
		rc, ok := v.runs[key(name)]
		if !ok {
			return armcompute.VirtualMachineRunCommandsClientGetByVirtualMachineResponse{}, resourceNotFound(typeVM+"/runCommands", vmName+"/"+name, rg)
		}
		out := clone(*rc)
		if opts == nil || !strings.EqualFold(deref(opts.Expand), "instanceView") {
			out.Properties.InstanceView = nil
		}
		return armcompute.VirtualMachineRunCommandsClientGetByVirtualMachineResponse{VirtualMachineRunCommand: out}, nil
	})
}

// runGuest is the instance view of a script run in a VM of the image at
// content: its check predicates (or its scan) evaluated against the
// image's content record. The streams go whole to the output and error
// blobs when given; the instance view keeps their last 4 KB, as Azure's.
// As Azure reports a managed run command (azure-cli#26677): a script that
// exits non-zero is executionState Failed with its exitCode, stdout in
// output and stderr in error; a script that cannot run is Failed with no
// exit code and the reason in executionMessage. Azure's executionMessage
// texts are not documented; these are the fake's own.
func (f *Fake) runGuest(content string, size int64, script, outBlob, errBlob string) *armcompute.VirtualMachineRunCommandInstanceView {
	now := time.Now().UTC()
	failed := func(msg string) *armcompute.VirtualMachineRunCommandInstanceView {
		return &armcompute.VirtualMachineRunCommandInstanceView{ExecutionState: to(armcompute.ExecutionStateFailed), ExecutionMessage: to(msg),
			StartTime: to(now), EndTime: to(now), Output: to(""), Error: to(msg)}
	}
	checks, err := guest.GuestChecksFromScript(script)
	if err != nil {
		return failed("fakearm: " + err.Error())
	}
	scan, err := guest.GuestScanFromScript(script)
	switch {
	case err != nil:
		return failed("fakearm: " + err.Error())
	case checks == nil && scan == nil:
		return failed("fakearm: the fake VM runs no scripts, only the predicates of an imgflow check (lib/checks.star) or the simulated form of a scan (lib/scans.star)")
	}
	g, err := f.guestContent(content)
	if err != nil {
		return failed("fakearm: the image's content: " + err.Error())
	}
	res, err := guest.Simulate(checks, scan, g, size)
	if err != nil {
		return failed("fakearm: " + err.Error())
	}
	for _, b := range []struct{ uri, data string }{{outBlob, res.Output}, {errBlob, res.Error}} {
		if b.uri == "" {
			continue
		}
		if err := f.writeRunOutput(b.uri, b.data); err != nil {
			return failed("Failed to upload the script's output: " + err.Error())
		}
	}
	view := &armcompute.VirtualMachineRunCommandInstanceView{ExecutionState: to(armcompute.ExecutionStateSucceeded), ExitCode: to(int32(res.ExitCode)),
		Output: to(cloud.TailOutput(res.Output)), Error: to(cloud.TailOutput(res.Error)), StartTime: to(now), EndTime: to(now)}
	if res.ExitCode != 0 {
		view.ExecutionState = to(armcompute.ExecutionStateFailed)
		view.ExecutionMessage = to(fmt.Sprintf("The script exited with code %d.", res.ExitCode))
	}
	return view
}

func (f *Fake) virtualMachineRunCommandsBeginDelete(ctx context.Context, rg, vmName, name string, _ *armcompute.VirtualMachineRunCommandsClientBeginDeleteOptions) (resp azfake.PollerResponder[armcompute.VirtualMachineRunCommandsClientDeleteResponse], errResp azfake.ErrorResponder) {
	// Not startDelete: a missing VM is the 404 a PUT under it gets, a
	// missing run command under an existing VM the 204 of any DELETE.
	return startWith(f, func() (armcompute.VirtualMachineRunCommandsClientDeleteResponse, int, *Error) {
		v, err := f.vm(rg, vmName)
		if err != nil {
			return armcompute.VirtualMachineRunCommandsClientDeleteResponse{}, 0, err
		}
		if _, ok := v.runs[key(name)]; !ok {
			return armcompute.VirtualMachineRunCommandsClientDeleteResponse{}, http.StatusNoContent, nil
		}
		delete(v.runs, key(name))
		return armcompute.VirtualMachineRunCommandsClientDeleteResponse{}, http.StatusAccepted, nil
	})
}

// guestContent reads the content record of the image's OS disk blob.
func (f *Fake) guestContent(content string) (*guest.GuestContent, error) {
	if f.opts.Blob == nil || content == "" {
		return nil, errors.New("the fake has no blob backend holding the image's data")
	}
	bc, _, err := f.opts.Blob.blobClient(content)
	if err != nil {
		return nil, err
	}
	resp, err := bc.DownloadStream(context.Background(), &blob.DownloadStreamOptions{Range: blob.HTTPRange{Offset: guest.GuestContentOffset, Count: guest.GuestContentMax}})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return guest.DecodeGuestContent(data)
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
	in := func(id string) bool { return strings.HasPrefix(id, prefix) }
	deleteIn(f.vms, in)
	f.accountNames.Range(func(name, id any) bool {
		if in(key(id.(string))) {
			f.accountNames.Delete(name)
		}
		return true
	})
	return armError(f.sim.DeleteResourceGroup(simCtx(ctx), name))
}

func deleteIn[V any](m map[string]V, in func(string) bool) {
	for id := range m {
		if in(id) {
			delete(m, id)
		}
	}
}

// runCommandExists reports whether k (a lowercased path) is a VM's run
// command (for ARM's 201 vs 200).
func (f *Fake) runCommandExists(k string) bool {
	vm, name, ok := strings.Cut(k, "/runcommands/")
	if !ok {
		return false
	}
	v := f.vms[vm]
	return v != nil && v.runs[name] != nil
}

// ARM's answers for the VM handlers, from package azrules's rules (the
// fake's errors name no resource id of their own).
func resourceNotFound(typ, name, rg string) *Error {
	return armError(azrules.ResourceNotFound("", typ, name, rg))
}

func invalidParameter(format string, args ...any) *Error {
	return armError(azrules.InvalidParameter("", format, args...))
}

func propertyChange(property string) *Error { return armError(azrules.PropertyChange("", property)) }
