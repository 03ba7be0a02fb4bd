package local

import (
	"net/http"

	"github.com/imgflow/imgflow/cloud"
)

// Real Azure error codes the shared cloud package does not define.
const (
	// CodeInvalidResourceGroupLocation: a resource group PUT with another
	// location than the existing group's (409).
	CodeInvalidResourceGroupLocation = "InvalidResourceGroupLocation"
	// CodeInvalidResourceLocation: a resource PUT with another location
	// than the existing resource's (409).
	CodeInvalidResourceLocation = "InvalidResourceLocation"
	// CodeLocationNotAvailableForResourceType: an unknown or logical
	// location (400).
	CodeLocationNotAvailableForResourceType = "LocationNotAvailableForResourceType"
	// CodeStorageAccountAlreadyTaken: the global storage account name is
	// used by another resource group (409).
	CodeStorageAccountAlreadyTaken = "StorageAccountAlreadyTaken"
	// CodeCannotVerifyCopySource: a copy source that does not exist or
	// cannot be read (404).
	CodeCannotVerifyCopySource = "CannotVerifyCopySource"
	// CodeInvalidRange: a blob read starting past its end (416).
	CodeInvalidRange = "InvalidRange"
	// CodeAuthenticationFailed: a SAS whose signature does not match, or
	// that was revoked or has expired (403).
	CodeAuthenticationFailed = "AuthenticationFailed"
	// CodeAuthorizationPermissionMismatch: a request the credentials do
	// not permit, e.g. a write through a read-only disk SAS (403).
	CodeAuthorizationPermissionMismatch = "AuthorizationPermissionMismatch"
)

func rgNotFound(sub, rg string) error {
	return cloud.NotFound(cloud.CodeResourceGroupNotFound, cloud.ResourceGroupID(sub, rg),
		"Resource group '%s' could not be found.", rg)
}

// resourceNotFound is ARM's 404 for a missing top-level resource or leaf.
func resourceNotFound(id, typ, name, rg string) error {
	return cloud.NotFound(cloud.CodeResourceNotFound, id,
		"The Resource '%s/%s' under resource group '%s' was not found.", typ, name, rg)
}

// parentNotFound is Compute's 404 for a nested resource whose parent is
// missing.
func parentNotFound(id, parent string) error {
	return cloud.NotFound(cloud.CodeParentResourceNotFound, id,
		"Can not perform requested operation on nested resource. Parent resource '%s' not found.", parent)
}

func invalidParameter(resource, format string, args ...any) error {
	return cloud.BadRequest(cloud.CodeInvalidParameter, resource, format, args...)
}

func locationChanged(id, name, rg, old, new string) error {
	return cloud.Conflict(CodeInvalidResourceLocation, id,
		"The resource '%s' already exists in location '%s' in resource group '%s'. A resource with the same name cannot be created in location '%s'. Please select a new resource name.",
		name, old, rg, new)
}

func invalidRange(resource string) error {
	return &cloud.Error{StatusCode: http.StatusRequestedRangeNotSatisfiable, Code: CodeInvalidRange,
		Resource: resource, Message: "The range specified is invalid for the current size of the resource."}
}

// authenticationFailed is Storage's 403 for a SAS it refuses; resource
// must not carry the SAS.
func authenticationFailed(resource, detail string) error {
	return &cloud.Error{StatusCode: http.StatusForbidden, Code: CodeAuthenticationFailed, Resource: resource,
		Message: "Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature. " + detail}
}
