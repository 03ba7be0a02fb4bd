package fakearm

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/imgflow/imgflow/cloud"
)

// DefaultLocations is the built-in location list: public-cloud physical
// regions (Recommended or Other) and the logical geographies Azure lists
// with them, as `az account list-locations` shows them.
func DefaultLocations() []cloud.Location {
	out := make([]cloud.Location, 0, len(locationTable))
	for _, l := range locationTable {
		rt := cloud.RegionTypePhysical
		if l[3] == "logical" {
			rt = cloud.RegionTypeLogical
		}
		out = append(out, cloud.Location{Name: l[0], DisplayName: l[1], Category: l[2], RegionType: rt})
	}
	return out
}

var locationTable = [][4]string{
	{"eastus", "East US", "Recommended", ""},
	{"southcentralus", "South Central US", "Recommended", ""},
	{"westus2", "West US 2", "Recommended", ""},
	{"westus3", "West US 3", "Recommended", ""},
	{"australiaeast", "Australia East", "Recommended", ""},
	{"southeastasia", "Southeast Asia", "Recommended", ""},
	{"northeurope", "North Europe", "Recommended", ""},
	{"swedencentral", "Sweden Central", "Recommended", ""},
	{"uksouth", "UK South", "Recommended", ""},
	{"westeurope", "West Europe", "Recommended", ""},
	{"centralus", "Central US", "Recommended", ""},
	{"southafricanorth", "South Africa North", "Recommended", ""},
	{"centralindia", "Central India", "Recommended", ""},
	{"eastasia", "East Asia", "Recommended", ""},
	{"indonesiacentral", "Indonesia Central", "Recommended", ""},
	{"japaneast", "Japan East", "Recommended", ""},
	{"koreacentral", "Korea Central", "Recommended", ""},
	{"newzealandnorth", "New Zealand North", "Recommended", ""},
	{"canadacentral", "Canada Central", "Recommended", ""},
	{"francecentral", "France Central", "Recommended", ""},
	{"germanywestcentral", "Germany West Central", "Recommended", ""},
	{"italynorth", "Italy North", "Recommended", ""},
	{"norwayeast", "Norway East", "Recommended", ""},
	{"polandcentral", "Poland Central", "Recommended", ""},
	{"spaincentral", "Spain Central", "Recommended", ""},
	{"switzerlandnorth", "Switzerland North", "Recommended", ""},
	{"mexicocentral", "Mexico Central", "Recommended", ""},
	{"uaenorth", "UAE North", "Recommended", ""},
	{"brazilsouth", "Brazil South", "Recommended", ""},
	{"chilecentral", "Chile Central", "Recommended", ""},
	{"eastus2euap", "East US 2 EUAP", "Recommended", ""},
	{"israelcentral", "Israel Central", "Recommended", ""},
	{"qatarcentral", "Qatar Central", "Recommended", ""},
	{"malaysiawest", "Malaysia West", "Recommended", ""},
	{"eastus2", "East US 2", "Recommended", ""},
	{"northcentralus", "North Central US", "Other", ""},
	{"westus", "West US", "Other", ""},
	{"japanwest", "Japan West", "Other", ""},
	{"centraluseuap", "Central US EUAP", "Other", ""},
	{"westcentralus", "West Central US", "Other", ""},
	{"southafricawest", "South Africa West", "Other", ""},
	{"australiacentral", "Australia Central", "Other", ""},
	{"australiacentral2", "Australia Central 2", "Other", ""},
	{"australiasoutheast", "Australia Southeast", "Other", ""},
	{"jioindiacentral", "Jio India Central", "Other", ""},
	{"jioindiawest", "Jio India West", "Other", ""},
	{"koreasouth", "Korea South", "Other", ""},
	{"southindia", "South India", "Other", ""},
	{"westindia", "West India", "Other", ""},
	{"canadaeast", "Canada East", "Other", ""},
	{"francesouth", "France South", "Other", ""},
	{"germanynorth", "Germany North", "Other", ""},
	{"norwaywest", "Norway West", "Other", ""},
	{"switzerlandwest", "Switzerland West", "Other", ""},
	{"swedensouth", "Sweden South", "Other", ""},
	{"ukwest", "UK West", "Other", ""},
	{"uaecentral", "UAE Central", "Other", ""},
	{"brazilsoutheast", "Brazil Southeast", "Other", ""},
	{"asia", "Asia", "Other", "logical"},
	{"asiapacific", "Asia Pacific", "Other", "logical"},
	{"australia", "Australia", "Other", "logical"},
	{"brazil", "Brazil", "Other", "logical"},
	{"canada", "Canada", "Other", "logical"},
	{"europe", "Europe", "Other", "logical"},
	{"france", "France", "Other", "logical"},
	{"germany", "Germany", "Other", "logical"},
	{"global", "Global", "Other", "logical"},
	{"india", "India", "Other", "logical"},
	{"japan", "Japan", "Other", "logical"},
	{"korea", "Korea", "Other", "logical"},
	{"uk", "United Kingdom", "Other", "logical"},
	{"unitedstates", "United States", "Other", "logical"},
	{"unitedstateseuap", "United States EUAP", "Other", "logical"},
}

// displaysLocation reports whether an SDK client's resources answer their
// location by display name: the gallery and disk resource providers do;
// resource groups, storage accounts, the subscription, and VMs and their
// run commands answer the name (the ComputeRP VirtualMachine_Create_* and
// VirtualMachineRunCommand_* examples echo "westus", even for a request
// that said "West US").
func displaysLocation(client string) bool {
	switch client {
	case "ResourceGroupsClient", "AccountsClient", "Client", "VirtualMachinesClient", "VirtualMachineRunCommandsClient", "VirtualMachineImagesClient":
		return false
	}
	return true
}

// displayLocations rewrites the location of a compute answer (a resource,
// or each resource of a list) to its display name: the compute resource
// provider answers "West Europe" whatever the request said, as every
// GalleryRP and DiskRP example shows. The state keeps names.
func (f *Fake) displayLocations(resp *http.Response) *http.Response {
	if resp.StatusCode >= 300 || resp.Body == nil || !strings.Contains(resp.Header.Get("Content-Type"), "json") {
		return resp
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	out := body
	doc := map[string]any{}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err == nil && dec.Decode(&doc) == nil {
		changed := f.displayLocation(doc)
		if list, ok := doc["value"].([]any); ok {
			for _, item := range list {
				if m, ok := item.(map[string]any); ok && f.displayLocation(m) {
					changed = true
				}
			}
		}
		if changed {
			if b, err := json.Marshal(doc); err == nil {
				out = b
			}
		}
	}
	resp.Body = io.NopCloser(bytes.NewReader(out))
	resp.ContentLength = int64(len(out))
	resp.Header.Del("Content-Length")
	return resp
}

func (f *Fake) displayLocation(doc map[string]any) bool {
	loc, ok := doc["location"].(string)
	if !ok {
		return false
	}
	d := f.regions.DisplayName(loc)
	doc["location"] = d
	return d != loc
}
