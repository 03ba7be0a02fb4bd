package fakearm

import (
	"context"
	"net/http"

	azfake "github.com/Azure/azure-sdk-for-go/sdk/azcore/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"

	"github.com/imgflow/imgflow/cloud"
)

// Marketplace images, as VirtualMachineImages List answers them
// (VirtualMachineImages_List examples): a JSON array, one resource per
// version, named by the version, with ARM's capitalized id
// (/Subscriptions/…/Providers/Microsoft.Compute/Locations/…/Publishers/…/
// ArtifactTypes/VMImage/Offers/…/Skus/…/Versions/…). An image the
// marketplace does not have is 404 NotFound ("Artifact: VMImage was not
// found."); whether Azure answers a known offer's unknown SKU that way or
// with an empty list was not verified.

func (f *Fake) virtualMachineImagesList(ctx context.Context, location, publisher, offer, sku string, _ *armcompute.VirtualMachineImagesClientListOptions) (resp azfake.Responder[armcompute.VirtualMachineImagesClientListResponse], errResp azfake.ErrorResponder) {
	return answer(f, func() (armcompute.VirtualMachineImagesClientListResponse, *Error) {
		loc, err := f.resolveLocation(location, typeVM)
		if err != nil {
			return armcompute.VirtualMachineImagesClientListResponse{}, err
		}
		img, versions, ok := cloud.FindMarketplaceImage(f.marketplace, cloud.MarketplaceImage{Publisher: publisher, Offer: offer, SKU: sku})
		if ok {
			out := make([]*armcompute.VirtualMachineImageResource, len(versions))
			for i, v := range versions {
				out[i] = &armcompute.VirtualMachineImageResource{Name: to(v), Location: to(loc),
					ID: to("/Subscriptions/" + f.sub + "/Providers/Microsoft.Compute/Locations/" + loc + "/Publishers/" + img.Publisher +
						"/ArtifactTypes/VMImage/Offers/" + img.Offer + "/Skus/" + img.SKU + "/Versions/" + v)}
			}
			return armcompute.VirtualMachineImagesClientListResponse{VirtualMachineImageResourceArray: out}, nil
		}
		return armcompute.VirtualMachineImagesClientListResponse{}, newErr(http.StatusNotFound, cloud.CodeNotFound, "Artifact: VMImage was not found.")
	})
}
