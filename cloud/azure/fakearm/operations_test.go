package fakearm

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// clientOf names the SDK client of each operations method prefix.
var clientOf = map[string]string{
	"resourceGroups":            "ResourceGroupsClient",
	"subscriptions":             "Client",
	"accounts":                  "AccountsClient",
	"galleries":                 "GalleriesClient",
	"gallerySharing":            "GallerySharingProfileClient",
	"communityGalleries":        "CommunityGalleriesClient",
	"galleryImages":             "GalleryImagesClient",
	"galleryImageVersions":      "GalleryImageVersionsClient",
	"images":                    "ImagesClient",
	"disks":                     "DisksClient",
	"resources":                 "Client", // armresources' generic client: ...ByID
	"virtualMachines":           "VirtualMachinesClient",
	"virtualMachineRunCommands": "VirtualMachineRunCommandsClient",
	"virtualMachineImages":      "VirtualMachineImagesClient",
}

// apiOf is the SDK operation ("GalleryImagesClient.Get") of an operations
// method ("galleryImagesGet"): the longest client prefix, then the method.
func apiOf(method string) string {
	best := ""
	for prefix := range clientOf {
		if strings.HasPrefix(method, prefix) && len(prefix) > len(best) {
			best = prefix
		}
	}
	if best == "" {
		return ""
	}
	return clientOf[best] + "." + strings.TrimPrefix(method, best)
}

// The HTTP server (Handler) maps requests to operations through routes:
// every operation needs a route, and every route an operation.
func TestEveryOperationHasARoute(t *testing.T) {
	ops := reflect.TypeOf((*operations)(nil)).Elem()
	handled := map[string]bool{}
	for i := range ops.NumMethod() {
		api := apiOf(ops.Method(i).Name)
		if assert.NotEmpty(t, api, "operations.%s names no SDK client", ops.Method(i).Name) {
			handled[api] = true
		}
	}
	routed := map[string]bool{}
	for _, r := range routes {
		routed[r.api] = true
		assert.True(t, handled[r.api], "route %s %s answers %s, which operations lacks", r.method, r.pattern, r.api)
	}
	for api := range handled {
		assert.True(t, routed[api], "operation %s has no route: add it to routes in operations.go", api)
	}
	assert.Len(t, handled, ops.NumMethod())
}
