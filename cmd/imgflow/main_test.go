package main

import (
	"context"
	"os"
	"testing"
)

// TestMain keeps the tests independent of the CI they run in: without
// TF_BUILD and GITHUB_ACTIONS, output is plain unless a test sets them.
// With IMGFLOW_TEST_MAIN=1 the test binary is imgflow itself, so shell
// completion scripts can call it.
func TestMain(m *testing.M) {
	if os.Getenv("IMGFLOW_TEST_MAIN") == "1" {
		os.Exit(runMain(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	for _, v := range []string{"TF_BUILD", "GITHUB_ACTIONS", "GITHUB_OUTPUT"} {
		os.Unsetenv(v)
	}
	os.Exit(m.Run())
}
