package azrules

import (
	"slices"
	"strings"

	"github.com/imgflow/imgflow/cloud"
)

// LatestMarketplaceVersion is the version "latest" of versions as Azure
// picks it: the highest by each dotted number (cloud.CompareVersions), not by
// text (AgentBaker's `sort -u | tail -n 1` agrees only while the parts
// have the same width). It returns "" for an empty list.
func LatestMarketplaceVersion(versions []string) string {
	if len(versions) == 0 {
		return ""
	}
	return slices.MaxFunc(versions, cloud.CompareVersions)
}

// ResolveMarketplaceVersion is the concrete version of img that a build
// asking for version gets in location: "latest" is the highest listed
// version, a pinned version must be listed. It fails with the versions
// there are, so the workflow can pin one that exists.
func ResolveMarketplaceVersion(versions []string, img cloud.MarketplaceImage, location, version string) (string, error) {
	if version == "" || strings.EqualFold(version, "latest") {
		if latest := LatestMarketplaceVersion(versions); latest != "" {
			return latest, nil
		}
		return "", cloud.Errorf(cloud.CodeNotFound, "", "marketplace image %s has no version in %s", img, location)
	}
	if slices.Contains(versions, version) {
		return version, nil
	}
	return "", cloud.Errorf(cloud.CodeNotFound, "", "marketplace image %s has no version %s in %s (it has %s): pin a listed version or use latest",
		img, version, location, listOrNone(versions))
}

func listOrNone(versions []string) string {
	if len(versions) == 0 {
		return "none"
	}
	sorted := slices.Clone(versions)
	slices.SortFunc(sorted, cloud.CompareVersions)
	return strings.Join(sorted, ", ")
}
