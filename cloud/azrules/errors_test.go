package azrules_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
)

func TestErrorConstructors(t *testing.T) {
	ref := cloud.BlobRef{Account: "acct", Container: "vhds", Name: "a.vhd"}
	for name, tc := range map[string]struct {
		err                     *cloud.Error
		status                  int
		code, resource, message string
	}{
		"resource group": {azrules.ResourceGroupNotFound("sub", "rg"), http.StatusNotFound, cloud.CodeResourceGroupNotFound,
			cloud.ResourceGroupID("sub", "rg"), "Resource group 'rg' could not be found."},
		"resource": {azrules.ResourceNotFound("/img", "Microsoft.Compute/images", "img", "rg"), http.StatusNotFound, cloud.CodeResourceNotFound,
			"/img", "The Resource 'Microsoft.Compute/images/img' under resource group 'rg' was not found."},
		"parent": {azrules.ParentNotFound("/v", "def"), http.StatusNotFound, cloud.CodeParentResourceNotFound,
			"/v", "Can not perform requested operation on nested resource. Parent resource 'def' not found."},
		"invalid": {azrules.InvalidParameter("/v", "bad %d", 1), http.StatusBadRequest, cloud.CodeInvalidParameter, "/v", "bad 1"},
		"location": {azrules.LocationChanged("/g", "g", "rg", "westeurope", "eastus"), http.StatusConflict, cloud.CodeInvalidResourceLocation,
			"/g", "The resource 'g' already exists in location 'westeurope' in resource group 'rg'. A resource with the same name cannot be created in location 'eastus'. Please select a new resource name."},
		"property": {azrules.PropertyChange("/v", "source"), http.StatusConflict, cloud.CodePropertyChangeNotAllowed, "/v", "Changing property 'source' is not allowed."},
		"blob":     {azrules.BlobNotFound(ref), http.StatusNotFound, cloud.CodeBlobNotFound, ref.URL(), "The specified blob does not exist."},
		"subscription": {azrules.SubscriptionNotFound("s"), http.StatusNotFound, cloud.CodeSubscriptionNotFound, "/subscriptions/s",
			"The subscription 's' could not be found."},
		"account taken": {azrules.AccountNameTaken("/sa", "sa"), http.StatusConflict, cloud.CodeStorageAccountAlreadyTaken, "/sa",
			"The storage account named sa is already taken."},
		"community gallery": {azrules.CommunityGalleryNotFound("p-1", "westeurope"), http.StatusNotFound, cloud.CodeGalleryNotFound, "",
			"The community gallery 'p-1' was not found in location 'westeurope'."},
		"features": {azrules.FeaturesNeedAllowUpdate("/d", "d"), http.StatusConflict, cloud.CodePropertyChangeNotAllowed, "/d",
			"Changing property 'features' of gallery image 'd' is not allowed unless 'allowUpdateImage' is set to true."},
		"gallery image": {azrules.GalleryImageNotFound("/vm", "/v", "eastus"), http.StatusNotFound, cloud.CodeGalleryImageNotFound, "/vm",
			"The gallery image /v is not available in eastus region. Please contact image owner to replicate to this region, or change your requested region."},
		"replication": {azrules.ReplicationFailed("/v", "1.0.0", []string{"East US: x"}), http.StatusInternalServerError, cloud.CodeReplicationFailed, "/v",
			"Replication of gallery image version '1.0.0' failed in East US: x."},
		"container": {azrules.ContainerNotFound(ref), http.StatusNotFound, cloud.CodeContainerNotFound, ref.URL(),
			"The specified container does not exist."},
		"account": {azrules.AccountNotFound("acct", ref.URL()), http.StatusNotFound, cloud.CodeResourceNotFound, ref.URL(), "storage account acct not found"},
		"disk write": {azrules.DiskWriteRefused(ref), http.StatusForbidden, cloud.CodeAuthorizationPermissionMismatch, ref.URL(),
			"This request is not authorized to perform this operation using this permission: a managed disk's SAS grants read access only."},
		"blob by URL": {azrules.BlobURLNotFound("u", "It holds half."), http.StatusNotFound, cloud.CodeBlobNotFound, "u",
			"The specified blob does not exist. It holds half."},
		"blob exists": {azrules.BlobAlreadyExists("u", ""), http.StatusConflict, cloud.CodeBlobAlreadyExists, "u", "The specified blob already exists."},
		"blob exists, detail": {azrules.BlobAlreadyExists("u", "Delete it."), http.StatusConflict, cloud.CodeBlobAlreadyExists, "u",
			"The specified blob already exists. Delete it."},
		"range": {azrules.InvalidRange("u"), http.StatusRequestedRangeNotSatisfiable, cloud.CodeInvalidRange, "u",
			"The range specified is invalid for the current size of the resource."},
		"copy source": {azrules.CannotVerifyCopySource("u", "cannot be read (AuthenticationFailed)"), http.StatusNotFound, cloud.CodeCannotVerifyCopySource, "u",
			"The specified resource does not exist: copy source u cannot be read (AuthenticationFailed)."},
		"deleted nothing": {azrules.DeletedNothing("/d"), http.StatusNotFound, cloud.CodeResourceNotFound, "/d",
			"not there: Azure answered the delete 204 No Content"},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, &cloud.Error{StatusCode: tc.status, Code: tc.code, Resource: tc.resource, Message: tc.message}, tc.err)
		})
	}
}

func TestCheckPageBlobSize(t *testing.T) {
	assert.NoError(t, azrules.CheckPageBlobSize("u", 0))
	assert.NoError(t, azrules.CheckPageBlobSize("u", 1024))
	for _, size := range []int64{-512, 1, 513} {
		requireRefusal(t, azrules.CheckPageBlobSize("u", size), cloud.CodeInvalidParameter, "u", "must be a multiple of 512 bytes")
	}
}
