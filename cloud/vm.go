package cloud

import (
	"strings"
	"time"
)

// VM is a virtual machine booted from an image: test_vm's throwaway VM.
// Its OS disk (and on Azure its network interface) is deleted with it.
type VM struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	ResourceGroup string `json:"resource_group"`
	Location      string `json:"location"`
	// Size is the VM size (Standard_D2ds_v5).
	Size string `json:"size"`
	// ImageID is the gallery image version or managed image the OS disk is
	// made from (storageProfile.imageReference.id).
	ImageID string `json:"image_id"`
	// SecurityType is "" (standard), TrustedLaunch or ConfidentialVM.
	SecurityType string `json:"security_type,omitempty"`
	// Specialized says the image is Specialized (a confidential VM image):
	// Azure then refuses an OS profile, so the VM gets no admin account.
	Specialized bool `json:"specialized,omitempty"`
	// OSType is the image's, Linux ("") or Windows: a Windows VM gets a
	// windowsConfiguration and an admin password (generated, never kept),
	// and its run commands run PowerShell.
	OSType string `json:"os_type,omitempty"`
	// OSDiskName is the managed OS disk made from the image
	// (storageProfile.osDisk.name; VMOSDiskName when not given).
	OSDiskName string `json:"os_disk_name,omitempty"`
	// ComputerName and AdminUsername are the OS profile's, the account a
	// generalized image's VM is provisioned with; AdminPassword a Windows
	// VM's, checked as Azure does and never kept or returned.
	ComputerName  string `json:"computer_name,omitempty"`
	AdminUsername string `json:"admin_username,omitempty"`
	AdminPassword string `json:"-"`
	// NIC is the network interface the VM makes for itself in Subnet (a
	// virtual network's subnet id); none on the local target.
	NIC    string `json:"nic,omitempty"`
	Subnet string `json:"subnet,omitempty"`
	// VMID (vmId) and Created (timeCreated) are the platform's (read-only).
	VMID    string    `json:"vm_id,omitempty"`
	Created time.Time `json:"created,omitzero"`
	// ProvisioningState is Azure's provisioningState (read-only).
	ProvisioningState string `json:"provisioning_state,omitempty"`
	Tags              Tags   `json:"tags,omitempty"`
}

// VMID is the ARM id of a virtual machine.
func VMID(sub, rg, name string) string {
	return ResourceGroupID(sub, rg) + "/providers/Microsoft.Compute/virtualMachines/" + name
}

// VMOSDiskName is the name a VM's OS disk gets: Azure's "<vm>_OsDisk_…"
// is random; imgflow names it so that a resumed run finds it.
func VMOSDiskName(vm string) string { return vm + "-osdisk" }

// ImageIsGalleryVersion reports whether an image id names a gallery image
// version (else a managed image).
func ImageIsGalleryVersion(id string) bool {
	return strings.Contains(strings.ToLower(id), "/providers/microsoft.compute/galleries/")
}

// RunCommand is a shell script run as root in a VM by a managed run
// command (Microsoft.Compute/virtualMachines/runCommands), which reports
// the script's exit code, unlike the older runCommand action.
type RunCommand struct {
	// Name names the run command resource (one per check).
	Name string `json:"name"`
	// Script is the bash script's text.
	Script string `json:"script"`
	// Timeout bounds the script's run (timeoutInSeconds).
	Timeout time.Duration `json:"timeout"`
	// Simulated is what a target without a guest OS (local) evaluates
	// against the image's recorded content instead of running Script;
	// Azure ignores it. Nil: the script cannot be simulated.
	Simulated []GuestCheck `json:"simulated,omitempty"`
	// SimulatedScan is the simulated form of a scan (a report), evaluated
	// like Simulated; a command has one or the other.
	SimulatedScan *GuestScan `json:"simulated_scan,omitempty"`
	// OutputBlob and ErrorBlob, when set, are the append blobs the VM
	// writes the script's whole stdout and stderr to (outputBlobUri,
	// errorBlobUri), for output larger than the instance view keeps
	// (RunCommandOutputMax). The container must exist; the provider reads
	// the blobs into the result and deletes them.
	OutputBlob *BlobRef `json:"output_blob,omitempty"`
	ErrorBlob  *BlobRef `json:"error_blob,omitempty"`
	// SecretEnv are environment variables for the script that hold
	// secrets (a SAS URL): Azure takes them as protectedParameters, which
	// it keeps encrypted and never returns, so they are not in the run
	// command's script for anyone who can read it. Never serialized.
	SecretEnv map[string]string `json:"-"`
}

// RunCommandOutputMax is how much of a script's stdout and stderr a
// managed run command's instance view keeps: the last 4 KB of each. The
// rest reaches only the output and error blobs.
const RunCommandOutputMax = 4 << 10

// TailOutput is what an instance view keeps of a stream: its last
// RunCommandOutputMax bytes.
func TailOutput(s string) string {
	if len(s) <= RunCommandOutputMax {
		return s
	}
	return s[len(s)-RunCommandOutputMax:]
}

// Execution states of a managed run command (instanceView.executionState).
const (
	RunSucceeded = "Succeeded"
	RunFailed    = "Failed"
	RunTimedOut  = "TimedOut"
	RunCanceled  = "Canceled"
)

// RunCommandResult is a finished run command's instance view.
type RunCommandResult struct {
	// ExecutionState is Succeeded, Failed, TimedOut or Canceled.
	ExecutionState string `json:"execution_state"`
	ExitCode       int    `json:"exit_code"`
	// Output and Error are the script's stdout and stderr: in full when
	// the command had output blobs, else the last RunCommandOutputMax
	// bytes of each.
	Output string `json:"output"`
	Error  string `json:"error"`
}

// Passed reports whether the script ran to the end with exit code 0.
func (r *RunCommandResult) Passed() bool {
	return r.ExecutionState == RunSucceeded && r.ExitCode == 0
}
