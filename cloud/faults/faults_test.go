package faults_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/cloudtest"
	"github.com/imgflow/imgflow/cloud/faults"
	"github.com/imgflow/imgflow/cloud/local"
)

func TestFaultsFailTheNamedOperationTheGivenNumberOfTimes(t *testing.T) {
	p, err := local.NewMemory(local.Options{})
	require.NoError(t, err)
	defer p.Close()
	set := faults.NewFaults(map[string]faults.Fault{"CreateResourceGroup": {StatusCode: http.StatusTooManyRequests, Code: "TooManyRequests", Times: 1}})
	fp := faults.WithFaults(p, set)
	ctx := context.Background()

	_, err = fp.CreateResourceGroup(ctx, cloud.ResourceGroup{Name: "rg", Location: "westeurope"})
	cloudtest.RequireError(t, err, http.StatusTooManyRequests, "TooManyRequests")
	_, err = p.GetResourceGroup(ctx, "rg")
	assert.True(t, cloud.IsNotFound(err), "the failed call must not reach the target")

	_, err = fp.CreateResourceGroup(ctx, cloud.ResourceGroup{Name: "rg", Location: "westeurope"})
	require.NoError(t, err, "the fault fires once")
	assert.Equal(t, 1, set.Fired("CreateResourceGroup"))
}

func TestCrashFaultRunsTheOperationThenStops(t *testing.T) {
	p, err := local.NewMemory(local.Options{})
	require.NoError(t, err)
	defer p.Close()
	fp := faults.WithFaults(p, faults.NewFaults(map[string]faults.Fault{"CreateResourceGroup": {Crash: true}}))
	_, err = fp.CreateResourceGroup(context.Background(), cloud.ResourceGroup{Name: "rg", Location: "westeurope"})
	assert.ErrorIs(t, err, faults.ErrCrash)
	_, err = p.GetResourceGroup(context.Background(), "rg")
	assert.NoError(t, err, "a crash fault happens after the operation")
}
