package fakearm

import (
	"context"

	azfake "github.com/Azure/azure-sdk-for-go/sdk/azcore/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"

	"github.com/imgflow/imgflow/cloud"
)

// Marketplace images, as VirtualMachineImages List answers them
// (VirtualMachineImages_List examples): a JSON array, one resource per
// version, named by the version, with ARM's capitalized id
// (/Subscriptions/…/Providers/Microsoft.Compute/Locations/…/Publishers/…/
// ArtifactTypes/VMImage/Offers/…/Skus/…/Versions/…). The versions are
// the simulation's: an image the marketplace does not have is 404
// NotFound; whether Azure answers a known offer's unknown SKU that way or
// with an empty list was not verified.

func (f *Fake) virtualMachineImagesList(ctx context.Context, location, publisher, offer, sku string, _ *armcompute.VirtualMachineImagesClientListOptions) (resp azfake.Responder[armcompute.VirtualMachineImagesClientListResponse], errResp azfake.ErrorResponder) {
	return answer(f, func() (armcompute.VirtualMachineImagesClientListResponse, *Error) {
		loc, err := f.resolveLocation(location, "Microsoft.Compute/virtualMachines")
		if err != nil {
			return armcompute.VirtualMachineImagesClientListResponse{}, err
		}
		versions, serr := f.sim.ListMarketplaceImageVersions(simCtx(ctx), location, cloud.MarketplaceImage{Publisher: publisher, Offer: offer, SKU: sku})
		if serr != nil {
			return armcompute.VirtualMachineImagesClientListResponse{}, armError(serr)
		}
		out := make([]*armcompute.VirtualMachineImageResource, len(versions))
		for i, v := range versions {
			out[i] = &armcompute.VirtualMachineImageResource{Name: to(v), Location: to(loc),
				ID: to("/Subscriptions/" + f.sub + "/Providers/Microsoft.Compute/Locations/" + loc + "/Publishers/" + publisher +
					"/ArtifactTypes/VMImage/Offers/" + offer + "/Skus/" + sku + "/Versions/" + v)}
		}
		return armcompute.VirtualMachineImagesClientListResponse{VirtualMachineImageResourceArray: out}, nil
	})
}
