package cloud

import (
	"errors"
	"fmt"
	"net/http"
)

// Error is an error answered by a cloud target, shaped like an Azure error
// response so local and Azure failures read the same.
type Error struct {
	StatusCode int
	// Code is Azure's error code, e.g. ResourceNotFound, ParentResourceNotFound.
	Code    string
	Message string
	// Resource names what the error concerns (an ARM id or blob URL, no SAS).
	Resource string
}

func (e *Error) Error() string {
	msg := e.Code
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if e.Resource != "" {
		msg += " (" + e.Resource + ")"
	}
	return msg
}

// Azure's error codes (ARM, Compute, Storage) that imgflow's targets answer
// with or recognise, declared once for the local, overlay and Azure
// targets and the fake ARM server. Each comes with one HTTP status, see
// StatusOf. Codes imgflow makes up for failures Azure reports without one
// live with the target that makes them (cloud/azure).
const (
	CodeResourceGroupNotFound  = "ResourceGroupNotFound"
	CodeResourceNotFound       = "ResourceNotFound"
	CodeParentResourceNotFound = "ParentResourceNotFound"
	// CodeNotFound is the compute resource provider's own 404, e.g. for a
	// marketplace image it does not have.
	CodeNotFound             = "NotFound"
	CodeSubscriptionNotFound = "SubscriptionNotFound"
	CodeBlobNotFound         = "BlobNotFound"
	CodeContainerNotFound    = "ContainerNotFound"
	// CodeCannotVerifyCopySource: a copy source that does not exist or
	// cannot be read.
	CodeCannotVerifyCopySource = "CannotVerifyCopySource"

	CodeConflict                 = "Conflict"
	CodePropertyChangeNotAllowed = "PropertyChangeNotAllowed"
	CodeBlobAlreadyExists        = "BlobAlreadyExists"
	// CodeOperationNotAllowed: e.g. deleting a disk with an open SAS.
	CodeOperationNotAllowed = "OperationNotAllowed"
	// CodeInvalidResourceGroupLocation: a resource group PUT with another
	// location than the existing group's.
	CodeInvalidResourceGroupLocation = "InvalidResourceGroupLocation"
	// CodeInvalidResourceLocation: a resource PUT with another location
	// than the existing resource's.
	CodeInvalidResourceLocation = "InvalidResourceLocation"
	// CodeStorageAccountAlreadyTaken: the global storage account name is
	// used by another resource group.
	CodeStorageAccountAlreadyTaken = "StorageAccountAlreadyTaken"

	CodeInvalidParameter = "InvalidParameter"
	// CodeLocationNotAvailableForResourceType: an unknown or logical
	// location.
	CodeLocationNotAvailableForResourceType = "LocationNotAvailableForResourceType"

	// CodeAuthenticationFailed: a SAS whose signature does not match, or
	// that was revoked or has expired.
	CodeAuthenticationFailed = "AuthenticationFailed"
	// CodeAuthorizationPermissionMismatch: a request the credentials do
	// not permit, e.g. a write through a read-only disk SAS, or a token
	// whose principal has no data role on the account.
	CodeAuthorizationPermissionMismatch = "AuthorizationPermissionMismatch"

	// CodeInvalidRange: a blob read starting past its end.
	CodeInvalidRange = "InvalidRange"

	// CodeReplicationFailed: a gallery image version whose replication to
	// a region failed.
	CodeReplicationFailed = "GalleryImageVersionReplicationFailed"
	// CodeGalleryImageNotFound: a VM of a gallery image version that is
	// missing or not replicated to the VM's region.
	CodeGalleryImageNotFound = "GalleryImageNotFound"
	// CodeGalleryNotFound: a community gallery public name no gallery
	// has in a location.
	CodeGalleryNotFound = "GalleryNotFound"
	// CodeLocationRequired: a PUT without the location its resource
	// type needs.
	CodeLocationRequired = "LocationRequired"
	// CodeInvalidResourceReference: a resource the request refers to
	// (a VM's subnet) does not exist.
	CodeInvalidResourceReference = "InvalidResourceReference"
)

// StatusOf is the HTTP status Azure answers an error code with; 0 for a
// code it does not know.
func StatusOf(code string) int {
	switch code {
	case CodeResourceGroupNotFound, CodeResourceNotFound, CodeParentResourceNotFound, CodeNotFound, CodeSubscriptionNotFound,
		CodeBlobNotFound, CodeContainerNotFound, CodeCannotVerifyCopySource, CodeGalleryImageNotFound, CodeGalleryNotFound:
		return http.StatusNotFound
	case CodeConflict, CodePropertyChangeNotAllowed, CodeBlobAlreadyExists, CodeOperationNotAllowed,
		CodeInvalidResourceGroupLocation, CodeInvalidResourceLocation, CodeStorageAccountAlreadyTaken:
		return http.StatusConflict
	case CodeInvalidParameter, CodeLocationNotAvailableForResourceType, CodeLocationRequired, CodeInvalidResourceReference:
		return http.StatusBadRequest
	case CodeAuthenticationFailed, CodeAuthorizationPermissionMismatch:
		return http.StatusForbidden
	case CodeInvalidRange:
		return http.StatusRequestedRangeNotSatisfiable
	case CodeReplicationFailed:
		return http.StatusInternalServerError
	}
	return 0
}

// Errorf builds the error Azure answers with code (its status from
// StatusOf) for resource.
func Errorf(code, resource, format string, args ...any) *Error {
	return &Error{StatusCode: StatusOf(code), Code: code, Resource: resource, Message: fmt.Sprintf(format, args...)}
}

// NotFound builds a 404 error for a resource.
func NotFound(code, resource, format string, args ...any) *Error {
	return &Error{StatusCode: http.StatusNotFound, Code: code, Resource: resource, Message: fmt.Sprintf(format, args...)}
}

// Conflict builds a 409 error for a resource.
func Conflict(code, resource, format string, args ...any) *Error {
	return &Error{StatusCode: http.StatusConflict, Code: code, Resource: resource, Message: fmt.Sprintf(format, args...)}
}

// BadRequest builds a 400 error for a resource.
func BadRequest(code, resource, format string, args ...any) *Error {
	return &Error{StatusCode: http.StatusBadRequest, Code: code, Resource: resource, Message: fmt.Sprintf(format, args...)}
}

// IsNotFound reports whether err is a cloud 404.
func IsNotFound(err error) bool {
	var ce *Error
	return errors.As(err, &ce) && ce.StatusCode == http.StatusNotFound
}

// HasCode reports whether err is a cloud error with the given code.
func HasCode(err error, code string) bool {
	var ce *Error
	return errors.As(err, &ce) && ce.Code == code
}
