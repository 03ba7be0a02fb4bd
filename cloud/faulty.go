package cloud

import (
	"context"
	"time"
)

// WithFaults wraps p so that the Provider methods named in f fail (or
// crash after running) as the faults say. Tests use it on every target.
func WithFaults(p Provider, f *Faults) Provider { return &faulty{p: p, f: f} }

// faulty is a Provider with injected faults. Generated from the Provider
// interface: every method checks Before, calls through, checks After.
type faulty struct {
	p Provider
	f *Faults
}

func (x *faulty) Target() string         { return x.p.Target() }
func (x *faulty) SubscriptionID() string { return x.p.SubscriptionID() }

func (x *faulty) ListLocations(ctx context.Context) ([]Location, error) {
	if err := x.f.Before("ListLocations"); err != nil {
		return nil, err
	}
	res, err := x.p.ListLocations(ctx)
	if err == nil {
		err = x.f.After("ListLocations")
	}
	return res, err
}

func (x *faulty) GetResourceGroup(ctx context.Context, name string) (*ResourceGroup, error) {
	if err := x.f.Before("GetResourceGroup"); err != nil {
		return nil, err
	}
	res, err := x.p.GetResourceGroup(ctx, name)
	if err == nil {
		err = x.f.After("GetResourceGroup")
	}
	return res, err
}

func (x *faulty) CreateResourceGroup(ctx context.Context, rg ResourceGroup) (*ResourceGroup, error) {
	if err := x.f.Before("CreateResourceGroup"); err != nil {
		return nil, err
	}
	res, err := x.p.CreateResourceGroup(ctx, rg)
	if err == nil {
		err = x.f.After("CreateResourceGroup")
	}
	return res, err
}

func (x *faulty) ListGalleries(ctx context.Context) ([]Gallery, error) {
	if err := x.f.Before("ListGalleries"); err != nil {
		return nil, err
	}
	res, err := x.p.ListGalleries(ctx)
	if err == nil {
		err = x.f.After("ListGalleries")
	}
	return res, err
}

func (x *faulty) GetGallery(ctx context.Context, rg, name string) (*Gallery, error) {
	if err := x.f.Before("GetGallery"); err != nil {
		return nil, err
	}
	res, err := x.p.GetGallery(ctx, rg, name)
	if err == nil {
		err = x.f.After("GetGallery")
	}
	return res, err
}

func (x *faulty) CreateGallery(ctx context.Context, g Gallery) (*Gallery, error) {
	if err := x.f.Before("CreateGallery"); err != nil {
		return nil, err
	}
	res, err := x.p.CreateGallery(ctx, g)
	if err == nil {
		err = x.f.After("CreateGallery")
	}
	return res, err
}

func (x *faulty) ShareCommunity(ctx context.Context, rg, name string, info CommunityInfo) (*Gallery, error) {
	if err := x.f.Before("ShareCommunity"); err != nil {
		return nil, err
	}
	res, err := x.p.ShareCommunity(ctx, rg, name, info)
	if err == nil {
		err = x.f.After("ShareCommunity")
	}
	return res, err
}

func (x *faulty) ListImageDefinitions(ctx context.Context, rg, gallery string) ([]ImageDefinition, error) {
	if err := x.f.Before("ListImageDefinitions"); err != nil {
		return nil, err
	}
	res, err := x.p.ListImageDefinitions(ctx, rg, gallery)
	if err == nil {
		err = x.f.After("ListImageDefinitions")
	}
	return res, err
}

func (x *faulty) GetImageDefinition(ctx context.Context, rg, gallery, name string) (*ImageDefinition, error) {
	if err := x.f.Before("GetImageDefinition"); err != nil {
		return nil, err
	}
	res, err := x.p.GetImageDefinition(ctx, rg, gallery, name)
	if err == nil {
		err = x.f.After("GetImageDefinition")
	}
	return res, err
}

func (x *faulty) CreateImageDefinition(ctx context.Context, d ImageDefinition) (*ImageDefinition, error) {
	if err := x.f.Before("CreateImageDefinition"); err != nil {
		return nil, err
	}
	res, err := x.p.CreateImageDefinition(ctx, d)
	if err == nil {
		err = x.f.After("CreateImageDefinition")
	}
	return res, err
}

func (x *faulty) DeleteImageDefinition(ctx context.Context, rg, gallery, name string) error {
	if err := x.f.Before("DeleteImageDefinition"); err != nil {
		return err
	}
	if err := x.p.DeleteImageDefinition(ctx, rg, gallery, name); err != nil {
		return err
	}
	return x.f.After("DeleteImageDefinition")
}

func (x *faulty) GetImageVersion(ctx context.Context, rg, gallery, def, version string) (*ImageVersion, error) {
	if err := x.f.Before("GetImageVersion"); err != nil {
		return nil, err
	}
	res, err := x.p.GetImageVersion(ctx, rg, gallery, def, version)
	if err == nil {
		err = x.f.After("GetImageVersion")
	}
	return res, err
}

func (x *faulty) CreateImageVersion(ctx context.Context, v ImageVersion) (*ImageVersion, error) {
	if err := x.f.Before("CreateImageVersion"); err != nil {
		return nil, err
	}
	res, err := x.p.CreateImageVersion(ctx, v)
	if err == nil {
		err = x.f.After("CreateImageVersion")
	}
	return res, err
}

func (x *faulty) UpdateImageVersion(ctx context.Context, v ImageVersion) (*ImageVersion, error) {
	if err := x.f.Before("UpdateImageVersion"); err != nil {
		return nil, err
	}
	res, err := x.p.UpdateImageVersion(ctx, v)
	if err == nil {
		err = x.f.After("UpdateImageVersion")
	}
	return res, err
}

func (x *faulty) DeleteImageVersion(ctx context.Context, rg, gallery, def, version string) error {
	if err := x.f.Before("DeleteImageVersion"); err != nil {
		return err
	}
	if err := x.p.DeleteImageVersion(ctx, rg, gallery, def, version); err != nil {
		return err
	}
	return x.f.After("DeleteImageVersion")
}

func (x *faulty) GetManagedImage(ctx context.Context, rg, name string) (*ManagedImage, error) {
	if err := x.f.Before("GetManagedImage"); err != nil {
		return nil, err
	}
	res, err := x.p.GetManagedImage(ctx, rg, name)
	if err == nil {
		err = x.f.After("GetManagedImage")
	}
	return res, err
}

func (x *faulty) CreateManagedImage(ctx context.Context, img ManagedImage) (*ManagedImage, error) {
	if err := x.f.Before("CreateManagedImage"); err != nil {
		return nil, err
	}
	res, err := x.p.CreateManagedImage(ctx, img)
	if err == nil {
		err = x.f.After("CreateManagedImage")
	}
	return res, err
}

func (x *faulty) DeleteManagedImage(ctx context.Context, rg, name string) error {
	if err := x.f.Before("DeleteManagedImage"); err != nil {
		return err
	}
	if err := x.p.DeleteManagedImage(ctx, rg, name); err != nil {
		return err
	}
	return x.f.After("DeleteManagedImage")
}

func (x *faulty) GetStorageAccount(ctx context.Context, rg, name string) (*StorageAccount, error) {
	if err := x.f.Before("GetStorageAccount"); err != nil {
		return nil, err
	}
	res, err := x.p.GetStorageAccount(ctx, rg, name)
	if err == nil {
		err = x.f.After("GetStorageAccount")
	}
	return res, err
}

func (x *faulty) CreateStorageAccount(ctx context.Context, sa StorageAccount) (*StorageAccount, error) {
	if err := x.f.Before("CreateStorageAccount"); err != nil {
		return nil, err
	}
	res, err := x.p.CreateStorageAccount(ctx, sa)
	if err == nil {
		err = x.f.After("CreateStorageAccount")
	}
	return res, err
}

func (x *faulty) GetDisk(ctx context.Context, rg, name string) (*Disk, error) {
	if err := x.f.Before("GetDisk"); err != nil {
		return nil, err
	}
	res, err := x.p.GetDisk(ctx, rg, name)
	if err == nil {
		err = x.f.After("GetDisk")
	}
	return res, err
}

func (x *faulty) CreateDiskFromImageVersion(ctx context.Context, d Disk) (*Disk, error) {
	if err := x.f.Before("CreateDiskFromImageVersion"); err != nil {
		return nil, err
	}
	res, err := x.p.CreateDiskFromImageVersion(ctx, d)
	if err == nil {
		err = x.f.After("CreateDiskFromImageVersion")
	}
	return res, err
}

func (x *faulty) GrantDiskAccess(ctx context.Context, rg, name string, duration time.Duration) (string, error) {
	if err := x.f.Before("GrantDiskAccess"); err != nil {
		return "", err
	}
	res, err := x.p.GrantDiskAccess(ctx, rg, name, duration)
	if err == nil {
		err = x.f.After("GrantDiskAccess")
	}
	return res, err
}

func (x *faulty) RevokeDiskAccess(ctx context.Context, rg, name string) error {
	if err := x.f.Before("RevokeDiskAccess"); err != nil {
		return err
	}
	if err := x.p.RevokeDiskAccess(ctx, rg, name); err != nil {
		return err
	}
	return x.f.After("RevokeDiskAccess")
}

func (x *faulty) DeleteDisk(ctx context.Context, rg, name string) error {
	if err := x.f.Before("DeleteDisk"); err != nil {
		return err
	}
	if err := x.p.DeleteDisk(ctx, rg, name); err != nil {
		return err
	}
	return x.f.After("DeleteDisk")
}

func (x *faulty) GetBlob(ctx context.Context, ref BlobRef) (*Blob, error) {
	if err := x.f.Before("GetBlob"); err != nil {
		return nil, err
	}
	res, err := x.p.GetBlob(ctx, ref)
	if err == nil {
		err = x.f.After("GetBlob")
	}
	return res, err
}

func (x *faulty) EnsureContainer(ctx context.Context, account, container string) error {
	if err := x.f.Before("EnsureContainer"); err != nil {
		return err
	}
	if err := x.p.EnsureContainer(ctx, account, container); err != nil {
		return err
	}
	return x.f.After("EnsureContainer")
}

func (x *faulty) ReadBlob(ctx context.Context, ref BlobRef, offset, length int64) ([]byte, error) {
	if err := x.f.Before("ReadBlob"); err != nil {
		return nil, err
	}
	res, err := x.p.ReadBlob(ctx, ref, offset, length)
	if err == nil {
		err = x.f.After("ReadBlob")
	}
	return res, err
}

func (x *faulty) UploadPageBlob(ctx context.Context, ref BlobRef, src PageSource, overwrite bool) (*Blob, error) {
	if err := x.f.Before("UploadPageBlob"); err != nil {
		return nil, err
	}
	res, err := x.p.UploadPageBlob(ctx, ref, src, overwrite)
	if err == nil {
		err = x.f.After("UploadPageBlob")
	}
	return res, err
}

func (x *faulty) CopyBlob(ctx context.Context, srcURL string, dest BlobRef, overwrite bool) (*Blob, error) {
	if err := x.f.Before("CopyBlob"); err != nil {
		return nil, err
	}
	res, err := x.p.CopyBlob(ctx, srcURL, dest, overwrite)
	if err == nil {
		err = x.f.After("CopyBlob")
	}
	return res, err
}

func (x *faulty) DeleteBlob(ctx context.Context, ref BlobRef) error {
	if err := x.f.Before("DeleteBlob"); err != nil {
		return err
	}
	if err := x.p.DeleteBlob(ctx, ref); err != nil {
		return err
	}
	return x.f.After("DeleteBlob")
}

func (x *faulty) SetBlobMetadata(ctx context.Context, ref BlobRef, metadata map[string]string) error {
	if err := x.f.Before("SetBlobMetadata"); err != nil {
		return err
	}
	if err := x.p.SetBlobMetadata(ctx, ref, metadata); err != nil {
		return err
	}
	return x.f.After("SetBlobMetadata")
}
