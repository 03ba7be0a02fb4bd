package cloud

import (
	"slices"
	"strings"
)

// MarketplaceImage names a marketplace image by publisher, offer and SKU
// (a build's image_publisher, image_offer and image_sku).
type MarketplaceImage struct {
	Publisher string `json:"publisher"`
	Offer     string `json:"offer"`
	SKU       string `json:"sku"`
}

func (m MarketplaceImage) String() string { return m.Publisher + ":" + m.Offer + ":" + m.SKU }

// FindMarketplaceImage finds img in a marketplace (as SimulatedMarketplace
// maps them), matching names without case as Azure does: the image as
// the marketplace spells it, and its versions.
func FindMarketplaceImage(m map[MarketplaceImage][]string, img MarketplaceImage) (MarketplaceImage, []string, bool) {
	for known, versions := range m {
		if strings.EqualFold(known.Publisher, img.Publisher) && strings.EqualFold(known.Offer, img.Offer) && strings.EqualFold(known.SKU, img.SKU) {
			return known, slices.Clone(versions), true
		}
	}
	return MarketplaceImage{}, nil, false
}

// SimulatedMarketplace is the marketplace of the simulated targets (local,
// and the fake ARM by default): the images the AKS workflows build from
// (lib/aks/marketplace.star's _UBUNTU_IMAGES and _AZURE_LINUX_IMAGES, and the images
// AgentBaker's release pipeline names) and image-builder's Azure targets
// build from (Ubuntu 26.04, Windows Server), each with two
// versions in the publishers' formats, the same in every region.
func SimulatedMarketplace() map[MarketplaceImage][]string {
	out := map[MarketplaceImage][]string{}
	add := func(publisher, offer string, versions []string, skus ...string) {
		for _, sku := range skus {
			out[MarketplaceImage{Publisher: publisher, Offer: offer, SKU: sku}] = slices.Clone(versions)
		}
	}
	focal := []string{"20.04.202607290", "20.04.202608140"}
	jammy := []string{"22.04.202607290", "22.04.202608140"}
	noble := []string{"24.04.202607300", "24.04.202608140"}
	add("Canonical", "0001-com-ubuntu-server-focal", focal, "20_04-lts", "20_04-lts-gen2", "20_04-lts-arm64")
	add("Canonical", "0001-com-ubuntu-confidential-vm-focal", focal, "20_04-lts-cvm")
	add("Canonical", "0001-com-ubuntu-server-jammy", jammy, "22_04-lts", "22_04-lts-gen2", "22_04-lts-arm64")
	add("Canonical", "0001-com-ubuntu-confidential-vm-jammy", jammy, "22_04-lts-cvm")
	add("Canonical", "ubuntu-24_04-lts", noble, "server", "server-gen1", "server-arm64", "cvm")
	add("Canonical", "ubuntu-26_04-lts", []string{"26.04.202607280", "26.04.202608120"}, "server", "server-gen1", "server-arm64", "cvm")
	add("MicrosoftWindowsServer", "WindowsServer", []string{"20348.4052.260710", "20348.4106.260807"},
		"2022-datacenter-core-smalldisk", "2022-datacenter-smalldisk-g2", "2022-datacenter-g2")
	add("MicrosoftWindowsServer", "WindowsServer", []string{"26100.4652.260710", "26100.4946.260807"}, "2025-datacenter-core-smalldisk")
	add("MicrosoftCBLMariner", "azure-linux-3", []string{"3.20260718.01", "3.20260801.01"},
		"azure-linux-3", "azure-linux-3-gen2", "azure-linux-3-arm64", "azure-linux-3-arm64-gen2-fips", "azure-linux-3-cvm")
	// AgentBaker's release pipeline builds these too: Ubuntu 26.04 minimal
	// and Azure Container Linux (a pinned version among them).
	add("Canonical", "ubuntu-26_04-lts", []string{"26.04.202607300", "26.04.202608140"}, "minimal", "minimal-arm64")
	add("MicrosoftCBLMariner", "azure-linux-3", []string{"3.20260718.01", "3.20260809.01"}, "azure-linux-3-acl", "azure-linux-3-arm64-gen2-acl")
	return out
}
