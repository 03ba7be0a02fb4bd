package azrules

import "github.com/imgflow/imgflow/cloud"

// locationTable is a snapshot of `az account list-locations` for a
// public-cloud subscription: physical regions (Recommended or Other) and
// the logical geographies Azure lists with them. Logical entries are not
// deployable, which is why imgflow must tell them apart.
var locationTable = []struct {
	name, display, category string
	logical                 bool
}{
	// Recommended physical regions.
	{name: "eastus", display: "East US", category: "Recommended"},
	{name: "southcentralus", display: "South Central US", category: "Recommended"},
	{name: "westus2", display: "West US 2", category: "Recommended"},
	{name: "westus3", display: "West US 3", category: "Recommended"},
	{name: "australiaeast", display: "Australia East", category: "Recommended"},
	{name: "southeastasia", display: "Southeast Asia", category: "Recommended"},
	{name: "northeurope", display: "North Europe", category: "Recommended"},
	{name: "swedencentral", display: "Sweden Central", category: "Recommended"},
	{name: "uksouth", display: "UK South", category: "Recommended"},
	{name: "westeurope", display: "West Europe", category: "Recommended"},
	{name: "centralus", display: "Central US", category: "Recommended"},
	{name: "southafricanorth", display: "South Africa North", category: "Recommended"},
	{name: "centralindia", display: "Central India", category: "Recommended"},
	{name: "eastasia", display: "East Asia", category: "Recommended"},
	{name: "indonesiacentral", display: "Indonesia Central", category: "Recommended"},
	{name: "japaneast", display: "Japan East", category: "Recommended"},
	{name: "koreacentral", display: "Korea Central", category: "Recommended"},
	{name: "newzealandnorth", display: "New Zealand North", category: "Recommended"},
	{name: "canadacentral", display: "Canada Central", category: "Recommended"},
	{name: "francecentral", display: "France Central", category: "Recommended"},
	{name: "germanywestcentral", display: "Germany West Central", category: "Recommended"},
	{name: "italynorth", display: "Italy North", category: "Recommended"},
	{name: "norwayeast", display: "Norway East", category: "Recommended"},
	{name: "polandcentral", display: "Poland Central", category: "Recommended"},
	{name: "spaincentral", display: "Spain Central", category: "Recommended"},
	{name: "switzerlandnorth", display: "Switzerland North", category: "Recommended"},
	{name: "mexicocentral", display: "Mexico Central", category: "Recommended"},
	{name: "uaenorth", display: "UAE North", category: "Recommended"},
	{name: "brazilsouth", display: "Brazil South", category: "Recommended"},
	{name: "chilecentral", display: "Chile Central", category: "Recommended"},
	{name: "eastus2euap", display: "East US 2 EUAP", category: "Recommended"},
	{name: "israelcentral", display: "Israel Central", category: "Recommended"},
	{name: "qatarcentral", display: "Qatar Central", category: "Recommended"},
	{name: "malaysiawest", display: "Malaysia West", category: "Recommended"},
	{name: "eastus2", display: "East US 2", category: "Recommended"},
	// Other physical regions (paired, restricted or canary).
	{name: "northcentralus", display: "North Central US", category: "Other"},
	{name: "westus", display: "West US", category: "Other"},
	{name: "japanwest", display: "Japan West", category: "Other"},
	{name: "centraluseuap", display: "Central US EUAP", category: "Other"},
	{name: "westcentralus", display: "West Central US", category: "Other"},
	{name: "southafricawest", display: "South Africa West", category: "Other"},
	{name: "australiacentral", display: "Australia Central", category: "Other"},
	{name: "australiacentral2", display: "Australia Central 2", category: "Other"},
	{name: "australiasoutheast", display: "Australia Southeast", category: "Other"},
	{name: "jioindiacentral", display: "Jio India Central", category: "Other"},
	{name: "jioindiawest", display: "Jio India West", category: "Other"},
	{name: "koreasouth", display: "Korea South", category: "Other"},
	{name: "southindia", display: "South India", category: "Other"},
	{name: "westindia", display: "West India", category: "Other"},
	{name: "canadaeast", display: "Canada East", category: "Other"},
	{name: "francesouth", display: "France South", category: "Other"},
	{name: "germanynorth", display: "Germany North", category: "Other"},
	{name: "norwaywest", display: "Norway West", category: "Other"},
	{name: "switzerlandwest", display: "Switzerland West", category: "Other"},
	{name: "swedensouth", display: "Sweden South", category: "Other"},
	{name: "ukwest", display: "UK West", category: "Other"},
	{name: "uaecentral", display: "UAE Central", category: "Other"},
	{name: "brazilsoutheast", display: "Brazil Southeast", category: "Other"},
	// Logical geographies.
	{name: "asia", display: "Asia", category: "Other", logical: true},
	{name: "asiapacific", display: "Asia Pacific", category: "Other", logical: true},
	{name: "australia", display: "Australia", category: "Other", logical: true},
	{name: "brazil", display: "Brazil", category: "Other", logical: true},
	{name: "canada", display: "Canada", category: "Other", logical: true},
	{name: "europe", display: "Europe", category: "Other", logical: true},
	{name: "france", display: "France", category: "Other", logical: true},
	{name: "germany", display: "Germany", category: "Other", logical: true},
	{name: "global", display: "Global", category: "Other", logical: true},
	{name: "india", display: "India", category: "Other", logical: true},
	{name: "japan", display: "Japan", category: "Other", logical: true},
	{name: "korea", display: "Korea", category: "Other", logical: true},
	{name: "uk", display: "United Kingdom", category: "Other", logical: true},
	{name: "unitedstates", display: "United States", category: "Other", logical: true},
	{name: "unitedstateseuap", display: "United States EUAP", category: "Other", logical: true},
}

// DefaultLocations is the location list of every simulated subscription
// (the local target's, the fake ARM's and the conformance suite's), a
// fresh copy each call.
func DefaultLocations() []cloud.Location {
	out := make([]cloud.Location, len(locationTable))
	for i, l := range locationTable {
		rt := cloud.RegionTypePhysical
		if l.logical {
			rt = cloud.RegionTypeLogical
		}
		out[i] = cloud.Location{Name: l.name, DisplayName: l.display, RegionType: rt, Category: l.category}
	}
	return out
}
