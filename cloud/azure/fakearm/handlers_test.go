package fakearm_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources/v3"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armsubscriptions"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azure/fakearm"
)

// The handler shapes (handlers.go) as a client sees them: reply's status
// chosen by the operation, list's failure as the listing's error.

func TestResourceGroupAnswersTheStatusARMDoes(t *testing.T) {
	f := fakearm.New(fakearm.Options{})
	ctx := context.Background()
	rg, err := armresources.NewResourceGroupsClient(f.SubscriptionID(), f.Credential(), f.ClientOptions())
	require.NoError(t, err)

	exists, err := rg.CheckExistence(ctx, "rg", nil)
	require.NoError(t, err, "HEAD of a missing group answers 404 without an error")
	assert.False(t, exists.Success)

	var raw *http.Response
	ctx = runtime.WithCaptureResponse(ctx, &raw)
	_, err = rg.CreateOrUpdate(ctx, "rg", armresources.ResourceGroup{Location: to("West Europe")}, nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusCreated, raw.StatusCode, "created")
	got, err := rg.CreateOrUpdate(ctx, "rg", armresources.ResourceGroup{Location: to("westeurope"), Tags: map[string]*string{"a": to("b")}}, nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, raw.StatusCode, "updated")
	assert.Equal(t, "b", *got.Tags["a"])

	_, err = rg.CreateOrUpdate(ctx, "rg", armresources.ResourceGroup{Location: to("eastus")}, nil)
	requireCode(t, err, http.StatusConflict, cloud.CodeInvalidResourceGroupLocation)

	exists, err = rg.CheckExistence(context.Background(), "RG", nil)
	require.NoError(t, err)
	assert.True(t, exists.Success, "204: names are case-insensitive")
}

func TestListingsFailWithARMErrors(t *testing.T) {
	f := fakearm.New(fakearm.Options{})
	ctx := context.Background()
	subs, err := armsubscriptions.NewClient(f.Credential(), f.ClientOptions())
	require.NoError(t, err)
	_, err = subs.NewListLocationsPager("11111111-1111-1111-1111-111111111111", nil).NextPage(ctx)
	requireCode(t, err, http.StatusNotFound, cloud.CodeSubscriptionNotFound)
	page, err := subs.NewListLocationsPager(f.SubscriptionID(), nil).NextPage(ctx)
	require.NoError(t, err)
	assert.Greater(t, len(page.Value), 40)

	images, err := armcompute.NewGalleryImagesClient(f.SubscriptionID(), f.Credential(), f.ClientOptions())
	require.NoError(t, err)
	_, err = images.NewListByGalleryPager("nope", "gal", nil).NextPage(ctx)
	requireCode(t, err, http.StatusNotFound, cloud.CodeResourceGroupNotFound)
	// The failed listing leaves no state behind: the next one answers too.
	_, err = images.NewListByGalleryPager("nope", "gal", nil).NextPage(ctx)
	requireCode(t, err, http.StatusNotFound, cloud.CodeResourceGroupNotFound)
}

func requireCode(t *testing.T, err error, status int, code string) {
	t.Helper()
	var re *azcore.ResponseError
	require.True(t, errors.As(err, &re), "want an ARM error, got %v", err)
	assert.Equal(t, status, re.StatusCode)
	assert.Equal(t, code, re.ErrorCode)
}
