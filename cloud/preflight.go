package cloud

import "context"

// Change is one write a dry run (cloud/overlay) recorded, in call order.
type Change struct {
	// Op is create, update or delete.
	Op string `json:"op"`
	// Kind is what was written: resource_group, gallery, …
	Kind string `json:"kind"`
	// ID is the ARM id of the resource, or the URL of a container or blob.
	ID string `json:"id"`
}

// Change operations.
const (
	OpCreate = "create"
	OpUpdate = "update"
	OpDelete = "delete"
)

// Change kinds.
const (
	KindResourceGroup    = "resource_group"
	KindGallery          = "gallery"
	KindCommunitySharing = "community_sharing"
	KindImageDefinition  = "image_definition"
	KindImageVersion     = "image_version"
	KindManagedImage     = "managed_image"
	KindStorageAccount   = "storage_account"
	KindDisk             = "disk"
	KindDiskAccess       = "disk_access"
	KindContainer        = "container"
	KindBlob             = "blob"
	KindVM               = "vm"
	KindRunCommand       = "run_command"
)

// NameAvailability is Storage's answer to checkNameAvailability.
type NameAvailability struct {
	Available bool
	// Reason is AlreadyExists or AccountNameInvalid when not available.
	Reason  string
	Message string
}

// Permission is one entry of what the caller may do at a scope
// (Microsoft.Authorization permissions): the union of its role
// assignments there and above. Patterns may hold '*'.
type Permission struct {
	Actions, NotActions         []string
	DataActions, NotDataActions []string
}

// Preflighter is a target that can tell, before a run changes anything,
// what Azure would refuse: a storage account name taken elsewhere and the
// actions the caller may not perform. The Azure target is one; the local
// target, which refuses nothing for want of rights, is not.
type Preflighter interface {
	// StorageAccountNameAvailability asks Storage whether name is free.
	StorageAccountNameAvailability(ctx context.Context, name string) (NameAvailability, error)
	// Permissions lists the caller's permissions at scope (an ARM id).
	Permissions(ctx context.Context, scope string) ([]Permission, error)
	// BlobAuth says what blob calls to account need of the caller.
	BlobAuth(account string) BlobAuthMode
}

// BlobAuthMode is how a target's blob calls authenticate, and so which
// right they need.
type BlobAuthMode int

const (
	// BlobAuthToken: the caller's token; blob data actions.
	BlobAuthToken BlobAuthMode = iota
	// BlobAuthKeys: the account key read through ARM (listKeys).
	BlobAuthKeys
	// BlobAuthEither: the token where the caller may use it, else the
	// key; either right will do.
	BlobAuthEither
	// BlobAuthGiven: a key given to imgflow (emulators); no right needed.
	BlobAuthGiven
)
