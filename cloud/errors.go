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

// Azure error codes used by every target.
const (
	CodeResourceGroupNotFound    = "ResourceGroupNotFound"
	CodeResourceNotFound         = "ResourceNotFound"
	CodeParentResourceNotFound   = "ParentResourceNotFound"
	CodeConflict                 = "Conflict"
	CodePropertyChangeNotAllowed = "PropertyChangeNotAllowed"
	CodeInvalidParameter         = "InvalidParameter"
	CodeBlobNotFound             = "BlobNotFound"
	CodeContainerNotFound        = "ContainerNotFound"
	CodeBlobAlreadyExists        = "BlobAlreadyExists"
	CodeOperationNotAllowed      = "OperationNotAllowed"
)

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
