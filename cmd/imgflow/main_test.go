package main

import (
	"context"
	"os"
	"testing"

	"github.com/imgflow/imgflow/cloud/azure/azuritetest"
	"github.com/imgflow/imgflow/cloud/azure/fakearm"
	"github.com/imgflow/imgflow/packer/localsim"
)

// TestMain keeps the tests independent of the CI they run in: without
// TF_BUILD and GITHUB_ACTIONS, output is plain unless a test sets them.
// With IMGFLOW_TEST_MAIN=1 the test binary is imgflow itself, so shell
// completion scripts can call it. The shared Azurite also serves the
// accounts where simulated packer builds stage their OS disk in the fake
// subscription (stagingAccounts), and stops when the tests end.
func TestMain(m *testing.M) {
	if os.Getenv("IMGFLOW_TEST_MAIN") == "1" {
		os.Exit(runMain(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	for _, v := range []string{"TF_BUILD", "GITHUB_ACTIONS", "GITHUB_OUTPUT"} {
		os.Unsetenv(v)
	}
	azuritetest.Main(m, stagingAccounts()...)
}

// stagingAccounts are the storage accounts simulated packer builds create
// through ARM to stage their OS disk, one per resource group of a
// workflow the Azure tests run: the AKS builds' and capz.star's (managed
// images in its gallery group). Azurite serves only the accounts it was
// started with (AZURITE_ACCOUNTS, read from its own environment), so an
// account the fake ARM creates at run time must be one of them.
func stagingAccounts() []string {
	var out []string
	for _, rg := range []string{"aks-vhd-build", "cluster-api-gallery"} {
		out = append(out, localsim.StagingAccount(fakearm.DefaultSubscriptionID, rg))
	}
	return out
}
