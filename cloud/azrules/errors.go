package azrules

import "github.com/imgflow/imgflow/cloud"

// ResourceGroupNotFound is ARM's answer for a missing resource group.
func ResourceGroupNotFound(sub, rg string) *cloud.Error {
	return cloud.Errorf(cloud.CodeResourceGroupNotFound, cloud.ResourceGroupID(sub, rg),
		"Resource group '%s' could not be found.", rg)
}

// ResourceNotFound is ARM's answer for a missing top-level resource or
// leaf: typ is its resource type ("Microsoft.Compute/images"), name its
// names below the group joined by "/".
func ResourceNotFound(id, typ, name, rg string) *cloud.Error {
	return cloud.Errorf(cloud.CodeResourceNotFound, id,
		"The Resource '%s/%s' under resource group '%s' was not found.", typ, name, rg)
}

// ParentNotFound is Compute's answer for a nested resource whose parent
// (named parent) is missing.
func ParentNotFound(id, parent string) *cloud.Error {
	return cloud.Errorf(cloud.CodeParentResourceNotFound, id,
		"Can not perform requested operation on nested resource. Parent resource '%s' not found.", parent)
}

// InvalidParameter is the 400 answer for a request Azure refuses as
// malformed or inconsistent.
func InvalidParameter(resource, format string, args ...any) *cloud.Error {
	return cloud.Errorf(cloud.CodeInvalidParameter, resource, format, args...)
}

// LocationChanged is ARM's answer for a PUT moving an existing resource
// to another location.
func LocationChanged(id, name, rg, old, new string) *cloud.Error {
	return cloud.Errorf(cloud.CodeInvalidResourceLocation, id,
		"The resource '%s' already exists in location '%s' in resource group '%s'. A resource with the same name cannot be created in location '%s'. Please select a new resource name.",
		name, old, rg, new)
}

// PropertyChange is Compute's answer for a PUT changing a property that
// is fixed once the resource exists.
func PropertyChange(id, property string) *cloud.Error {
	return cloud.Errorf(cloud.CodePropertyChangeNotAllowed, id, "Changing property '%s' is not allowed.", property)
}

// BlobNotFound is Storage's answer for a missing blob.
func BlobNotFound(ref cloud.BlobRef) *cloud.Error {
	return BlobURLNotFound(ref.URL(), "")
}

// ContainerNotFound is Storage's answer for a missing container.
func ContainerNotFound(ref cloud.BlobRef) *cloud.Error {
	return cloud.Errorf(cloud.CodeContainerNotFound, ref.URL(), "The specified container does not exist.")
}

// AccountNotFound answers a blob URL whose storage account is not one of
// the subscription's.
func AccountNotFound(account, resource string) *cloud.Error {
	return cloud.Errorf(cloud.CodeResourceNotFound, resource, "storage account %s not found", account)
}

// DiskWriteRefused is Storage's answer to a write through a managed
// disk's SAS URL, which grants read access only. ref must not carry the
// SAS.
func DiskWriteRefused(ref cloud.BlobRef) *cloud.Error {
	return cloud.Errorf(cloud.CodeAuthorizationPermissionMismatch, ref.URL(),
		"This request is not authorized to perform this operation using this permission: a managed disk's SAS grants read access only.")
}

// BlobURLNotFound is BlobNotFound for a blob known by its URL (without
// SAS); detail, when not "", says more (what the blob holds instead).
func BlobURLNotFound(resource, detail string) *cloud.Error {
	return cloud.Errorf(cloud.CodeBlobNotFound, resource, "%s", withDetail("The specified blob does not exist.", detail))
}

// BlobAlreadyExists is Storage's answer for a write without overwrite
// onto an existing blob; detail, when not "", says more (what the blob
// holds, what to do).
func BlobAlreadyExists(resource, detail string) *cloud.Error {
	return cloud.Errorf(cloud.CodeBlobAlreadyExists, resource, "%s", withDetail("The specified blob already exists.", detail))
}

// InvalidRange is Storage's 416 for a read starting at or past the
// blob's end.
func InvalidRange(resource string) *cloud.Error {
	return cloud.Errorf(cloud.CodeInvalidRange, resource, "The range specified is invalid for the current size of the resource.")
}

// PageBlobAlignment is the size a page blob's size is a multiple of.
const PageBlobAlignment = 512

// CheckPageBlobSize is Storage's rule for a page blob's size: a multiple
// of 512 bytes.
func CheckPageBlobSize(resource string, size int64) error {
	if size < 0 || size%PageBlobAlignment != 0 {
		return InvalidParameter(resource, "The page blob size %d must be a multiple of %d bytes.", size, PageBlobAlignment)
	}
	return nil
}

// CannotVerifyCopySource is Storage's answer for a copy whose source it
// cannot read; why says what is wrong with it ("cannot be read (code)").
func CannotVerifyCopySource(source, why string) *cloud.Error {
	return cloud.Errorf(cloud.CodeCannotVerifyCopySource, source, "The specified resource does not exist: copy source %s %s.", source, why)
}

// DeletedNothing is a target's answer for a DELETE that found nothing:
// ARM answers it 204 No Content where the simulation answers 404, and
// every target answers ResourceNotFound so that callers tell "already
// gone" from "deleted".
func DeletedNothing(id string) *cloud.Error {
	return cloud.Errorf(cloud.CodeResourceNotFound, id, "not there: Azure answered the delete 204 No Content")
}

func withDetail(msg, detail string) string {
	if detail == "" {
		return msg
	}
	return msg + " " + detail
}

// SubscriptionNotFound is ARM's answer for a subscription the caller
// cannot see.
func SubscriptionNotFound(sub string) *cloud.Error {
	return cloud.Errorf(cloud.CodeSubscriptionNotFound, "/subscriptions/"+sub, "The subscription '%s' could not be found.", sub)
}

// AccountNameTaken is Storage's answer for a storage account name (global)
// another resource group or subscription holds.
func AccountNameTaken(id, name string) *cloud.Error {
	return cloud.Errorf(cloud.CodeStorageAccountAlreadyTaken, id, "The storage account named %s is already taken.", name)
}

// CommunityGalleryNotFound is Compute's answer for a community gallery
// public name that no gallery shares in location.
func CommunityGalleryNotFound(public, location string) *cloud.Error {
	return cloud.Errorf(cloud.CodeGalleryNotFound, "", "The community gallery '%s' was not found in location '%s'.", public, location)
}

// FeaturesNeedAllowUpdate refuses a PUT changing the features of image
// definition name without allowUpdateImage. Azure documents that the flag
// "must be set to true if the gallery image features are being updated"
// (armcompute GalleryImageProperties.AllowUpdateImage) but not the error
// it answers without it; this is the closest documented one.
func FeaturesNeedAllowUpdate(id, name string) *cloud.Error {
	return cloud.Errorf(cloud.CodePropertyChangeNotAllowed, id,
		"Changing property 'features' of gallery image '%s' is not allowed unless 'allowUpdateImage' is set to true.", name)
}
