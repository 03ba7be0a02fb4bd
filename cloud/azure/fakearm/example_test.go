package fakearm_test

import (
	"context"
	"fmt"
	"time"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azure"
	"github.com/imgflow/imgflow/cloud/azure/fakearm"
	"github.com/imgflow/imgflow/cloud/ensure"
)

// The Azure provider driven in process against the fake. For blobs, add
// fakearm.Options.Blob and azure.Options BlobEndpoint and StorageKey
// pointing at Azurite (see package azuritetest). Over HTTP, use NewServer
// and the environment of Server.Env (IMGFLOW_AZURE_ARM_ENDPOINT,
// AZURE_SUBSCRIPTION_ID) with azure.FromEnvironment.
func Example() {
	f := fakearm.New(fakearm.Options{})
	p, err := azure.New(context.Background(), azure.Options{
		SubscriptionID: f.SubscriptionID(),
		Credential:     f.Credential(),
		ARM:            f.ClientOptions(),
		PollFrequency:  time.Millisecond, // under `go test` only: the SDK's floor is 1 s
	})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	_, _, err = ensure.EnsureResourceGroup(ctx, p, cloud.ResourceGroup{Name: "rg", Location: "westeurope"})
	if err != nil {
		panic(err)
	}
	for range 2 {
		g, outcome, err := ensure.EnsureGallery(ctx, p, cloud.Gallery{Name: "images", ResourceGroup: "rg", Location: "westeurope"})
		if err != nil {
			panic(err)
		}
		fmt.Println(outcome, g.Name, g.Location)
	}
	_, err = p.GetGallery(ctx, "rg", "missing")
	fmt.Println(err)
	// Output:
	// created images westeurope
	// exists images westeurope
	// get gallery missing: ResourceNotFound: The Resource 'Microsoft.Compute/galleries/missing' under resource group 'rg' was not found. (/subscriptions/00000000-0000-4000-8000-00000000f0a1/resourceGroups/rg/providers/Microsoft.Compute/galleries/missing)
}
