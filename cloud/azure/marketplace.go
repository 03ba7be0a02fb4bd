package azure

import (
	"context"

	"github.com/imgflow/imgflow/cloud"
)

// ListMarketplaceImageVersions implements cloud.Provider with
// VirtualMachineImages List (GET …/locations/{location}/publishers/{p}/
// artifacttypes/vmimage/offers/{o}/skus/{s}/versions): one resource per
// version, named by it.
func (p *Provider) ListMarketplaceImageVersions(ctx context.Context, location string, img cloud.MarketplaceImage) ([]string, error) {
	res, err := p.vmImages.List(ctx, location, img.Publisher, img.Offer, img.SKU, nil)
	if err != nil {
		return nil, opError("list marketplace image versions", img.String(), azErr(err, ""))
	}
	out := make([]string, 0, len(res.VirtualMachineImageResourceArray))
	for _, r := range res.VirtualMachineImageResourceArray {
		if r != nil && deref(r.Name) != "" {
			out = append(out, deref(r.Name))
		}
	}
	return out, nil
}
