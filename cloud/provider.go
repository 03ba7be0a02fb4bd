package cloud

import (
	"context"
	"io"
	"time"

	"github.com/imgflow/imgflow/vhd"
)

// Provider is one cloud target: a subscription imgflow reads and changes.
//
// Operations are primitives with Azure's semantics: Get* return an *Error
// with StatusCode 404 when the resource does not exist; Create* create or
// update (PUT) and fail with Azure's error codes on a missing parent or a
// conflict. The idempotent "ensure" logic lives above, in this package's
// Ensure* functions, so every target behaves the same. Inputs reaching a
// Provider are already validated.
//
// Every method that waits takes ctx and stops when it is done.
type Provider interface {
	// Target names the target ("local", "azure").
	Target() string
	// SubscriptionID is the subscription every id is built in.
	SubscriptionID() string

	// ListLocations returns every location of the subscription, logical
	// geographies included (RegionType tells them apart).
	ListLocations(ctx context.Context) ([]Location, error)
	// ListMarketplaceImageVersions lists the versions of a marketplace
	// image in a location (VirtualMachineImages List, as `az vm image list
	// --all` reads them); an image the location does not have is not
	// found.
	ListMarketplaceImageVersions(ctx context.Context, location string, img MarketplaceImage) ([]string, error)

	GetResourceGroup(ctx context.Context, name string) (*ResourceGroup, error)
	CreateResourceGroup(ctx context.Context, rg ResourceGroup) (*ResourceGroup, error)
	// DeleteResourceGroup deletes the group and everything in it, as
	// Azure does, and returns once it is gone. imgflow deletes only the
	// throwaway groups it made (test_vm's).
	DeleteResourceGroup(ctx context.Context, name string) error

	// ListGalleries lists every gallery of the subscription (gallery names
	// are unique per subscription).
	ListGalleries(ctx context.Context) ([]Gallery, error)
	GetGallery(ctx context.Context, rg, name string) (*Gallery, error)
	// CreateGallery creates the gallery, a community gallery when
	// g.Community is set, or updates an existing one's description, tags
	// and community profile under azrules.CheckCommunityProfileChange; an input
	// without Community keeps the existing profile.
	CreateGallery(ctx context.Context, g Gallery) (*Gallery, error)
	// ShareCommunity enables community sharing of a gallery created as a
	// community gallery (POST /share EnableCommunity); the platform
	// generates the public name, returned in Gallery.PublicNames. A
	// private gallery is InvalidParameter.
	ShareCommunity(ctx context.Context, rg, name string) (*Gallery, error)

	ListImageDefinitions(ctx context.Context, rg, gallery string) ([]ImageDefinition, error)
	GetImageDefinition(ctx context.Context, rg, gallery, name string) (*ImageDefinition, error)
	CreateImageDefinition(ctx context.Context, d ImageDefinition) (*ImageDefinition, error)
	DeleteImageDefinition(ctx context.Context, rg, gallery, name string) error

	// GetImageVersion returns the version with its per-region replication
	// status.
	GetImageVersion(ctx context.Context, rg, gallery, def, version string) (*ImageVersion, error)
	// ListImageVersions lists a definition's versions, sorted by name,
	// without their per-region replication status (ARM's list by gallery
	// image does not expand it: GetImageVersion does).
	ListImageVersions(ctx context.Context, rg, gallery, def string) ([]ImageVersion, error)
	// CreateImageVersion creates a version from its Source and replicates
	// it to TargetRegions. It returns once the version exists; replication
	// may still be in progress (see GetImageVersion).
	CreateImageVersion(ctx context.Context, v ImageVersion) (*ImageVersion, error)
	// UpdateImageVersion changes the updatable fields: target regions,
	// replica count, exclude-from-latest, end of life, tags. Like
	// CreateImageVersion it returns once the update started; replication
	// to new regions may still be in progress.
	UpdateImageVersion(ctx context.Context, v ImageVersion) (*ImageVersion, error)
	DeleteImageVersion(ctx context.Context, rg, gallery, def, version string) error

	GetManagedImage(ctx context.Context, rg, name string) (*ManagedImage, error)
	CreateManagedImage(ctx context.Context, img ManagedImage) (*ManagedImage, error)
	DeleteManagedImage(ctx context.Context, rg, name string) error

	GetStorageAccount(ctx context.Context, rg, name string) (*StorageAccount, error)
	CreateStorageAccount(ctx context.Context, sa StorageAccount) (*StorageAccount, error)

	// GetDisk returns a managed disk.
	GetDisk(ctx context.Context, rg, name string) (*Disk, error)
	// CreateDiskFromImageVersion creates a managed disk from a gallery
	// image version (in the version's replicated d.Location), the first
	// step of exporting a version to a VHD.
	CreateDiskFromImageVersion(ctx context.Context, d Disk) (*Disk, error)
	// GrantDiskAccess opens read access to the disk for duration and
	// returns the SAS URL to read it (a secret: never print it unredacted).
	GrantDiskAccess(ctx context.Context, rg, name string, duration time.Duration) (string, error)
	// RevokeDiskAccess closes access granted by GrantDiskAccess.
	RevokeDiskAccess(ctx context.Context, rg, name string) error
	DeleteDisk(ctx context.Context, rg, name string) error

	// GetVM returns a virtual machine.
	GetVM(ctx context.Context, rg, name string) (*VM, error)
	// CreateVM creates a VM from vm.ImageID (a gallery image version
	// replicated to vm.Location, or a managed image) with its OS disk
	// (cloud.VMOSDiskName) and a network interface without a public
	// address, and returns once it is provisioned (provisioningState
	// Succeeded). An existing VM of the same image is returned as is.
	CreateVM(ctx context.Context, vm VM) (*VM, error)
	// DeleteVM deletes the VM with its OS disk and network interface.
	DeleteVM(ctx context.Context, rg, name string) error
	// RunCommand runs cmd in the VM as a managed run command, waits for it
	// to finish and returns its instance view. A script that fails is a
	// result with a non-zero ExitCode, not an error.
	RunCommand(ctx context.Context, rg, vm string, cmd RunCommand) (*RunCommandResult, error)

	// GetBlob returns a blob's properties.
	GetBlob(ctx context.Context, ref BlobRef) (*Blob, error)
	// EnsureContainer creates the container when it is missing.
	EnsureContainer(ctx context.Context, account, container string) error
	// ReadBlob reads length bytes at offset (e.g. a VHD footer).
	ReadBlob(ctx context.Context, ref BlobRef, offset, length int64) ([]byte, error)
	// UploadPageBlob writes src as a page blob of the given size at ref;
	// only the data ranges are sent, the rest of the blob reads as zeros.
	// An existing blob fails with BlobAlreadyExists unless overwrite.
	UploadPageBlob(ctx context.Context, ref BlobRef, src PageSource, overwrite bool) (*Blob, error)
	// CopyBlob copies the blob at srcURL (which may carry a SAS) to dest.
	CopyBlob(ctx context.Context, srcURL string, dest BlobRef, overwrite bool) (*Blob, error)
	// SetBlobMetadata replaces a blob's user metadata.
	SetBlobMetadata(ctx context.Context, ref BlobRef, metadata map[string]string) error
	DeleteBlob(ctx context.Context, ref BlobRef) error
}

// PageSource is the content of a page blob to upload: Size bytes read from
// Reader, of which only Ranges hold data (nil means all of it).
type PageSource struct {
	Reader io.ReaderAt
	Size   int64
	Ranges []vhd.Range
}
