package builtins

import (
	"fmt"

	"go.starlark.net/starlark"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
)

func registerMarketplace(r *Registry) {
	r.add("Marketplace images",
		&Spec{
			Name: "marketplace_image", Effect: Reads,
			Params: []Param{
				{Name: "publisher", Kind: KindString, Doc: "publisher, e.g. `Canonical`"},
				{Name: "offer", Kind: KindString, Doc: "offer, e.g. `0001-com-ubuntu-server-jammy`"},
				{Name: "sku", Kind: KindString, Doc: "SKU, e.g. `22_04-lts-gen2`"},
				{Name: "location", Kind: KindLocation, Doc: "the region the build's VM runs in (the marketplace is per region)"},
				{Name: "version", Kind: KindString, Default: `"latest"`, Doc: "`latest`, or a pinned version that must be listed"},
			},
			Returns: "struct(publisher, offer, sku, location, version, requested)",
			Doc: "The concrete version of a marketplace image, as `az vm image list --all` lists its versions in `location` (VirtualMachineImages List): " +
				"`latest` is the highest version by number, as Azure picks it for a VM; a pinned version is checked to be listed. " +
				"`requested` is the version asked for. Pass `version` to the build, so the image the build starts from is the one recorded " +
				"(AgentBaker's publisher_base_image_version).",
			Example: `base = marketplace_image(publisher = "Canonical", offer = "0001-com-ubuntu-server-jammy", sku = "22_04-lts-gen2", location = "eastus")`,
			Impl:    marketplaceImageImpl,
		},
	)
}

func marketplaceImageImpl(c *Call) (starlark.Value, error) {
	img := cloud.MarketplaceImage{Publisher: c.String("publisher", ""), Offer: c.String("offer", ""), SKU: c.String("sku", "")}
	loc, requested := c.String("location", ""), c.String("version", "latest")
	for name, v := range map[string]string{"publisher": img.Publisher, "offer": img.Offer, "sku": img.SKU, "location": loc, "version": requested} {
		if v == "" {
			return nil, fmt.Errorf("marketplace_image: %s is empty", name)
		}
	}
	versions, err := c.Run.Provider.ListMarketplaceImageVersions(c.Ctx(), loc, img)
	if err != nil {
		return nil, fmt.Errorf("marketplace_image %s: %w", img, err)
	}
	version, err := azrules.ResolveMarketplaceVersion(versions, img, loc, requested)
	if err != nil {
		return nil, fmt.Errorf("marketplace_image: %w", err)
	}
	return makeStruct("marketplace_image", fields{"publisher": img.Publisher, "offer": img.Offer, "sku": img.SKU,
		"location": loc, "version": version, "requested": requested}), nil
}
