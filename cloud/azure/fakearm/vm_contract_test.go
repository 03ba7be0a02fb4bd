package fakearm_test

import (
	"testing"
	"time"

	"github.com/imgflow/imgflow/cloud/azure/fakearm"
)

// vmContractDir holds the fixtures of VMs, their managed run commands and
// the virtual network test_vm makes (ComputeRP 2025-04-01, the api-version
// armcompute v7.3.0 calls).
const vmContractDir = contractDir + "/vm"

// TestVMContract holds the fake's virtual machines and run commands to
// ARM's answers as the REST spec examples show them: 201 Creating with
// Azure-AsyncOperation for a create, the bodies ARM completes (OS disk
// type and managed disk, the NICs the configurations make, no password),
// a run command's instance view only with $expand=instanceView, 202 with
// Location and then 204 for a delete, and the 404 codes of a missing VM,
// run command or gallery image. Every long operation answers one status
// poll InProgress, so a GET meanwhile shows provisioningState Creating.
func TestVMContract(t *testing.T) {
	srv := fakearm.NewServer(t, fakearm.Options{ReplicationDelay: 50 * time.Millisecond, LROPolls: 1})
	runContractDir(t, srv, vmContractDir)
}
