package fakearm

import (
	"net/http"
	"strings"
)

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
	return editBody(resp, func(doc map[string]any) bool {
		changed := f.displayLocation(doc)
		if list, ok := doc["value"].([]any); ok {
			for _, item := range list {
				if m, ok := item.(map[string]any); ok && f.displayLocation(m) {
					changed = true
				}
			}
		}
		return changed
	})
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
