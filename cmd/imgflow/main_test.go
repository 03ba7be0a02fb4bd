package main

import (
	"context"
	"os"
	"testing"

	"github.com/imgflow/imgflow/cloud/azure/azuritetest"
	"github.com/imgflow/imgflow/cloud/azure/fakearm"
)

// TestMain keeps the tests independent of the CI they run in: without
// TF_BUILD and GITHUB_ACTIONS, output is plain unless a test sets them.
// With IMGFLOW_TEST_MAIN=1 the test binary is imgflow itself, so shell
// completion scripts can call it. The shared Azurite also serves the
// accounts where simulated packer builds stage their OS disk in the fake
// subscription (azuritetest.StagingAccounts), and stops when the tests end.
func TestMain(m *testing.M) {
	if os.Getenv("IMGFLOW_TEST_MAIN") == "1" {
		os.Exit(runMain(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	for _, v := range []string{"TF_BUILD", "GITHUB_ACTIONS", "GITHUB_OUTPUT"} {
		os.Unsetenv(v)
	}
	// The packer validate cache of the plans the tests make is their own.
	cache, err := os.MkdirTemp("", "imgflow-test-cache-")
	if err != nil {
		panic(err)
	}
	os.Setenv(cacheDirEnv, cache)
	if built.dir, err = os.MkdirTemp("", "imgflow-test-bin-"); err != nil {
		panic(err)
	}
	accounts := append(azuritetest.StagingAccounts(fakearm.DefaultSubscriptionID), azuritetest.WorkflowAccounts(fakearm.DefaultSubscriptionID)...)
	code := azuritetest.Run(m, accounts...)
	_ = os.RemoveAll(cache)
	_ = os.RemoveAll(built.dir)
	os.Exit(code)
}
