package fakearm

import (
	"context"
	"strings"

	azfake "github.com/Azure/azure-sdk-for-go/sdk/azcore/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"
	computefake "github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources/v3"
	resourcesfake "github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources/v3/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armsubscriptions"
	subsfake "github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armsubscriptions/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/storage/armstorage/v2"
	storagefake "github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/storage/armstorage/v2/fake"
)

// operations are the ARM operations the Azure target (cloud/azure) calls:
// one method per SDK client method, with the signature of the SDK fake
// server's field for it (<client><Method>, e.g. galleryImagesGet for
// GalleryImagesClient.Get). The fake's router is built from an
// operations value (servers), so a Fake missing a handler does not
// compile; TestEveryAzureTargetCallHasAnOperation reads cloud/azure's
// source and fails for a client method it calls that is not listed here
// (docs/adding-an-azure-operation.md).
type operations interface {
	// Resource groups (armresources ResourceGroupsClient).
	resourceGroupsGet(ctx context.Context, name string, _ *armresources.ResourceGroupsClientGetOptions) (resp azfake.Responder[armresources.ResourceGroupsClientGetResponse], errResp azfake.ErrorResponder)
	resourceGroupsCheckExistence(ctx context.Context, name string, _ *armresources.ResourceGroupsClientCheckExistenceOptions) (resp azfake.Responder[armresources.ResourceGroupsClientCheckExistenceResponse], errResp azfake.ErrorResponder)
	resourceGroupsCreateOrUpdate(ctx context.Context, name string, in armresources.ResourceGroup, _ *armresources.ResourceGroupsClientCreateOrUpdateOptions) (resp azfake.Responder[armresources.ResourceGroupsClientCreateOrUpdateResponse], errResp azfake.ErrorResponder)
	resourceGroupsBeginDelete(ctx context.Context, name string, _ *armresources.ResourceGroupsClientBeginDeleteOptions) (resp azfake.PollerResponder[armresources.ResourceGroupsClientDeleteResponse], errResp azfake.ErrorResponder)

	// Generic resources by id (armresources Client): test_vm's virtual network.
	resourcesGetByID(ctx context.Context, id, apiVersion string, _ *armresources.ClientGetByIDOptions) (resp azfake.Responder[armresources.ClientGetByIDResponse], errResp azfake.ErrorResponder)
	resourcesBeginCreateOrUpdateByID(ctx context.Context, id, apiVersion string, in armresources.GenericResource, _ *armresources.ClientBeginCreateOrUpdateByIDOptions) (resp azfake.PollerResponder[armresources.ClientCreateOrUpdateByIDResponse], errResp azfake.ErrorResponder)

	// Subscriptions (armsubscriptions Client).
	subscriptionsGet(ctx context.Context, sub string, _ *armsubscriptions.ClientGetOptions) (resp azfake.Responder[armsubscriptions.ClientGetResponse], errResp azfake.ErrorResponder)
	subscriptionsNewListLocationsPager(sub string, _ *armsubscriptions.ClientListLocationsOptions) (resp azfake.PagerResponder[armsubscriptions.ClientListLocationsResponse])

	// Storage accounts (armstorage AccountsClient).
	accountsListKeys(_ context.Context, rg, name string, _ *armstorage.AccountsClientListKeysOptions) (resp azfake.Responder[armstorage.AccountsClientListKeysResponse], errResp azfake.ErrorResponder)
	accountsNewListPager(*armstorage.AccountsClientListOptions) (resp azfake.PagerResponder[armstorage.AccountsClientListResponse])
	accountsGetProperties(ctx context.Context, rg, name string, _ *armstorage.AccountsClientGetPropertiesOptions) (resp azfake.Responder[armstorage.AccountsClientGetPropertiesResponse], errResp azfake.ErrorResponder)
	accountsBeginCreate(ctx context.Context, rg, name string, in armstorage.AccountCreateParameters, _ *armstorage.AccountsClientBeginCreateOptions) (resp azfake.PollerResponder[armstorage.AccountsClientCreateResponse], errResp azfake.ErrorResponder)

	// Galleries (armcompute GalleriesClient).
	galleriesNewListPager(_ *armcompute.GalleriesClientListOptions) (resp azfake.PagerResponder[armcompute.GalleriesClientListResponse])
	galleriesGet(ctx context.Context, rg, name string, opts *armcompute.GalleriesClientGetOptions) (resp azfake.Responder[armcompute.GalleriesClientGetResponse], errResp azfake.ErrorResponder)
	galleriesBeginCreateOrUpdate(ctx context.Context, rg, name string, in armcompute.Gallery, _ *armcompute.GalleriesClientBeginCreateOrUpdateOptions) (resp azfake.PollerResponder[armcompute.GalleriesClientCreateOrUpdateResponse], errResp azfake.ErrorResponder)

	// Gallery sharing (armcompute GallerySharingProfileClient).
	gallerySharingBeginUpdate(ctx context.Context, rg, name string, in armcompute.SharingUpdate, _ *armcompute.GallerySharingProfileClientBeginUpdateOptions) (resp azfake.PollerResponder[armcompute.GallerySharingProfileClientUpdateResponse], errResp azfake.ErrorResponder)

	// Community galleries (armcompute CommunityGalleriesClient).
	communityGalleriesGet(ctx context.Context, location, public string, _ *armcompute.CommunityGalleriesClientGetOptions) (resp azfake.Responder[armcompute.CommunityGalleriesClientGetResponse], errResp azfake.ErrorResponder)

	// Image definitions (armcompute GalleryImagesClient).
	galleryImagesNewListByGalleryPager(rg, gallery string, _ *armcompute.GalleryImagesClientListByGalleryOptions) (resp azfake.PagerResponder[armcompute.GalleryImagesClientListByGalleryResponse])
	galleryImagesGet(ctx context.Context, rg, gallery, name string, _ *armcompute.GalleryImagesClientGetOptions) (resp azfake.Responder[armcompute.GalleryImagesClientGetResponse], errResp azfake.ErrorResponder)
	galleryImagesBeginCreateOrUpdate(ctx context.Context, rg, gallery, name string, in armcompute.GalleryImage, _ *armcompute.GalleryImagesClientBeginCreateOrUpdateOptions) (resp azfake.PollerResponder[armcompute.GalleryImagesClientCreateOrUpdateResponse], errResp azfake.ErrorResponder)
	galleryImagesBeginDelete(ctx context.Context, rg, gallery, name string, _ *armcompute.GalleryImagesClientBeginDeleteOptions) (resp azfake.PollerResponder[armcompute.GalleryImagesClientDeleteResponse], errResp azfake.ErrorResponder)

	// Image versions (armcompute GalleryImageVersionsClient).
	galleryImageVersionsGet(ctx context.Context, rg, gallery, def, name string, opts *armcompute.GalleryImageVersionsClientGetOptions) (resp azfake.Responder[armcompute.GalleryImageVersionsClientGetResponse], errResp azfake.ErrorResponder)
	galleryImageVersionsNewListByGalleryImagePager(rg, gallery, def string, _ *armcompute.GalleryImageVersionsClientListByGalleryImageOptions) (resp azfake.PagerResponder[armcompute.GalleryImageVersionsClientListByGalleryImageResponse])
	galleryImageVersionsBeginCreateOrUpdate(ctx context.Context, rg, gallery, def, name string, in armcompute.GalleryImageVersion, _ *armcompute.GalleryImageVersionsClientBeginCreateOrUpdateOptions) (resp azfake.PollerResponder[armcompute.GalleryImageVersionsClientCreateOrUpdateResponse], errResp azfake.ErrorResponder)
	galleryImageVersionsBeginUpdate(ctx context.Context, rg, gallery, def, name string, in armcompute.GalleryImageVersionUpdate, _ *armcompute.GalleryImageVersionsClientBeginUpdateOptions) (resp azfake.PollerResponder[armcompute.GalleryImageVersionsClientUpdateResponse], errResp azfake.ErrorResponder)
	galleryImageVersionsBeginDelete(ctx context.Context, rg, gallery, def, name string, _ *armcompute.GalleryImageVersionsClientBeginDeleteOptions) (resp azfake.PollerResponder[armcompute.GalleryImageVersionsClientDeleteResponse], errResp azfake.ErrorResponder)

	// Managed images (armcompute ImagesClient).
	imagesGet(ctx context.Context, rg, name string, _ *armcompute.ImagesClientGetOptions) (resp azfake.Responder[armcompute.ImagesClientGetResponse], errResp azfake.ErrorResponder)
	imagesBeginCreateOrUpdate(ctx context.Context, rg, name string, in armcompute.Image, _ *armcompute.ImagesClientBeginCreateOrUpdateOptions) (resp azfake.PollerResponder[armcompute.ImagesClientCreateOrUpdateResponse], errResp azfake.ErrorResponder)
	imagesBeginUpdate(ctx context.Context, rg, name string, in armcompute.ImageUpdate, _ *armcompute.ImagesClientBeginUpdateOptions) (resp azfake.PollerResponder[armcompute.ImagesClientUpdateResponse], errResp azfake.ErrorResponder)
	imagesBeginDelete(ctx context.Context, rg, name string, _ *armcompute.ImagesClientBeginDeleteOptions) (resp azfake.PollerResponder[armcompute.ImagesClientDeleteResponse], errResp azfake.ErrorResponder)

	// Managed disks (armcompute DisksClient).
	disksGet(ctx context.Context, rg, name string, _ *armcompute.DisksClientGetOptions) (resp azfake.Responder[armcompute.DisksClientGetResponse], errResp azfake.ErrorResponder)
	disksBeginCreateOrUpdate(ctx context.Context, rg, name string, in armcompute.Disk, _ *armcompute.DisksClientBeginCreateOrUpdateOptions) (resp azfake.PollerResponder[armcompute.DisksClientCreateOrUpdateResponse], errResp azfake.ErrorResponder)
	disksBeginGrantAccess(ctx context.Context, rg, name string, in armcompute.GrantAccessData, _ *armcompute.DisksClientBeginGrantAccessOptions) (resp azfake.PollerResponder[armcompute.DisksClientGrantAccessResponse], errResp azfake.ErrorResponder)
	disksBeginRevokeAccess(ctx context.Context, rg, name string, _ *armcompute.DisksClientBeginRevokeAccessOptions) (resp azfake.PollerResponder[armcompute.DisksClientRevokeAccessResponse], errResp azfake.ErrorResponder)
	disksBeginDelete(ctx context.Context, rg, name string, _ *armcompute.DisksClientBeginDeleteOptions) (resp azfake.PollerResponder[armcompute.DisksClientDeleteResponse], errResp azfake.ErrorResponder)

	// Marketplace images (armcompute VirtualMachineImagesClient): the
	// versions a build's base image resolves among.
	virtualMachineImagesList(ctx context.Context, location, publisher, offer, sku string, _ *armcompute.VirtualMachineImagesClientListOptions) (resp azfake.Responder[armcompute.VirtualMachineImagesClientListResponse], errResp azfake.ErrorResponder)

	// Virtual machines (armcompute VirtualMachinesClient): test_vm.
	virtualMachinesGet(ctx context.Context, rg, name string, _ *armcompute.VirtualMachinesClientGetOptions) (resp azfake.Responder[armcompute.VirtualMachinesClientGetResponse], errResp azfake.ErrorResponder)
	virtualMachinesBeginCreateOrUpdate(ctx context.Context, rg, name string, in armcompute.VirtualMachine, _ *armcompute.VirtualMachinesClientBeginCreateOrUpdateOptions) (resp azfake.PollerResponder[armcompute.VirtualMachinesClientCreateOrUpdateResponse], errResp azfake.ErrorResponder)
	virtualMachinesBeginDelete(ctx context.Context, rg, name string, _ *armcompute.VirtualMachinesClientBeginDeleteOptions) (resp azfake.PollerResponder[armcompute.VirtualMachinesClientDeleteResponse], errResp azfake.ErrorResponder)

	// Managed run commands (armcompute VirtualMachineRunCommandsClient): test_vm's checks.
	virtualMachineRunCommandsBeginCreateOrUpdate(ctx context.Context, rg, vmName, name string, in armcompute.VirtualMachineRunCommand, _ *armcompute.VirtualMachineRunCommandsClientBeginCreateOrUpdateOptions) (resp azfake.PollerResponder[armcompute.VirtualMachineRunCommandsClientCreateOrUpdateResponse], errResp azfake.ErrorResponder)
	virtualMachineRunCommandsGetByVirtualMachine(ctx context.Context, rg, vmName, name string, opts *armcompute.VirtualMachineRunCommandsClientGetByVirtualMachineOptions) (resp azfake.Responder[armcompute.VirtualMachineRunCommandsClientGetByVirtualMachineResponse], errResp azfake.ErrorResponder)
	virtualMachineRunCommandsBeginDelete(ctx context.Context, rg, vmName, name string, _ *armcompute.VirtualMachineRunCommandsClientBeginDeleteOptions) (resp azfake.PollerResponder[armcompute.VirtualMachineRunCommandsClientDeleteResponse], errResp azfake.ErrorResponder)
}

// routes (below) give each operation above its HTTP method and path, in
// the interface's order and groups, so an operation is declared, routed
// and wired to its SDK fake server (newServers) in this one file.
//
// route is an ARM operation: method and path pattern ("*" is any one
// segment; literal segments compare case-insensitively, as ARM's do, and
// are written in the casing the SDK fake server of the operation
// matches).
type route struct {
	method, pattern, api string
}

const (
	// The resource groups fake matches "resourcegroups", every other
	// server "resourceGroups" (as their REST specs spell them).
	rgPath      = "subscriptions/*/resourcegroups/*"
	inRGPath    = "subscriptions/*/resourceGroups/*"
	computePath = inRGPath + "/providers/Microsoft.Compute"
	galleryPath = computePath + "/galleries/*"
	defPath     = galleryPath + "/images/*"
	versionPath = defPath + "/versions/*"
	diskPath    = computePath + "/disks/*"
	imagePath   = computePath + "/images/*"
	accountPath = inRGPath + "/providers/Microsoft.Storage/storageAccounts/*"
	vmPath      = computePath + "/virtualMachines/*"
	vnetPath    = inRGPath + "/providers/Microsoft.Network/virtualNetworks/*"
)

var routes = []route{
	// Resource groups (armresources ResourceGroupsClient).
	{"GET", rgPath, "ResourceGroupsClient.Get"},
	{"HEAD", rgPath, "ResourceGroupsClient.CheckExistence"},
	{"PUT", rgPath, "ResourceGroupsClient.CreateOrUpdate"},
	{"DELETE", rgPath, "ResourceGroupsClient.BeginDelete"},

	// Generic resources by id (armresources Client): test_vm's virtual network.
	{"GET", vnetPath, "Client.GetByID"},
	{"PUT", vnetPath, "Client.BeginCreateOrUpdateByID"},

	// Subscriptions (armsubscriptions Client).
	{"GET", "subscriptions/*", "Client.Get"},
	{"GET", "subscriptions/*/locations", "Client.NewListLocationsPager"},

	// Storage accounts (armstorage AccountsClient).
	{"POST", accountPath + "/listKeys", "AccountsClient.ListKeys"},
	{"GET", "subscriptions/*/providers/Microsoft.Storage/storageAccounts", "AccountsClient.NewListPager"},
	{"GET", accountPath, "AccountsClient.GetProperties"},
	{"PUT", accountPath, "AccountsClient.BeginCreate"},

	// Galleries (armcompute GalleriesClient).
	{"GET", "subscriptions/*/providers/Microsoft.Compute/galleries", "GalleriesClient.NewListPager"},
	{"GET", galleryPath, "GalleriesClient.Get"},
	{"PUT", galleryPath, "GalleriesClient.BeginCreateOrUpdate"},

	// Gallery sharing (armcompute GallerySharingProfileClient).
	{"POST", galleryPath + "/share", "GallerySharingProfileClient.BeginUpdate"},

	// Community galleries (armcompute CommunityGalleriesClient).
	{"GET", "subscriptions/*/providers/Microsoft.Compute/locations/*/communityGalleries/*", "CommunityGalleriesClient.Get"},

	// Image definitions (armcompute GalleryImagesClient).
	{"GET", galleryPath + "/images", "GalleryImagesClient.NewListByGalleryPager"},
	{"GET", defPath, "GalleryImagesClient.Get"},
	{"PUT", defPath, "GalleryImagesClient.BeginCreateOrUpdate"},
	{"DELETE", defPath, "GalleryImagesClient.BeginDelete"},

	// Image versions (armcompute GalleryImageVersionsClient).
	{"GET", versionPath, "GalleryImageVersionsClient.Get"},
	{"GET", defPath + "/versions", "GalleryImageVersionsClient.NewListByGalleryImagePager"},
	{"PUT", versionPath, "GalleryImageVersionsClient.BeginCreateOrUpdate"},
	{"PATCH", versionPath, "GalleryImageVersionsClient.BeginUpdate"},
	{"DELETE", versionPath, "GalleryImageVersionsClient.BeginDelete"},

	// Managed images (armcompute ImagesClient).
	{"GET", imagePath, "ImagesClient.Get"},
	{"PUT", imagePath, "ImagesClient.BeginCreateOrUpdate"},
	{"PATCH", imagePath, "ImagesClient.BeginUpdate"},
	{"DELETE", imagePath, "ImagesClient.BeginDelete"},

	// Managed disks (armcompute DisksClient).
	{"GET", diskPath, "DisksClient.Get"},
	{"PUT", diskPath, "DisksClient.BeginCreateOrUpdate"},
	{"POST", diskPath + "/beginGetAccess", "DisksClient.BeginGrantAccess"},
	{"POST", diskPath + "/endGetAccess", "DisksClient.BeginRevokeAccess"},
	{"DELETE", diskPath, "DisksClient.BeginDelete"},

	// Marketplace images (armcompute VirtualMachineImagesClient): the
	// versions a build's base image resolves among.
	{"GET", "subscriptions/*/providers/Microsoft.Compute/locations/*/publishers/*/artifacttypes/vmimage/offers/*/skus/*/versions", "VirtualMachineImagesClient.List"},

	// Virtual machines (armcompute VirtualMachinesClient): test_vm.
	{"GET", vmPath, "VirtualMachinesClient.Get"},
	{"PUT", vmPath, "VirtualMachinesClient.BeginCreateOrUpdate"},
	{"DELETE", vmPath, "VirtualMachinesClient.BeginDelete"},

	// Managed run commands (armcompute VirtualMachineRunCommandsClient): test_vm's checks.
	{"PUT", vmPath + "/runCommands/*", "VirtualMachineRunCommandsClient.BeginCreateOrUpdate"},
	{"GET", vmPath + "/runCommands/*", "VirtualMachineRunCommandsClient.GetByVirtualMachine"},
	{"DELETE", vmPath + "/runCommands/*", "VirtualMachineRunCommandsClient.BeginDelete"},
}

// apiFor finds the SDK operation of a request and its path with the
// literal segments in the route's casing.
func apiFor(method, path string) (api, canonical string) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for _, r := range routes {
		if r.method != method {
			continue
		}
		pat := strings.Split(r.pattern, "/")
		if len(pat) != len(segs) {
			continue
		}
		ok := true
		for i, p := range pat {
			if p != "*" && !strings.EqualFold(p, segs[i]) {
				ok = false
				break
			}
		}
		if ok {
			out := make([]string, len(segs))
			for i, p := range pat {
				out[i] = segs[i]
				if p != "*" {
					out[i] = p
				}
			}
			return r.api, "/" + strings.Join(out, "/")
		}
	}
	return "", ""
}

// servers is the router: the SDK fake servers, each field answered by
// its operation.
type servers struct {
	compute   *computefake.ServerFactory
	resources *resourcesfake.ServerFactory
	storage   *storagefake.ServerFactory
	subs      *subsfake.ServerFactory
}

func newServers(ops operations) servers {
	return servers{
		compute: &computefake.ServerFactory{
			GalleriesServer: computefake.GalleriesServer{NewListPager: ops.galleriesNewListPager, Get: ops.galleriesGet,
				BeginCreateOrUpdate: ops.galleriesBeginCreateOrUpdate},
			GallerySharingProfileServer: computefake.GallerySharingProfileServer{BeginUpdate: ops.gallerySharingBeginUpdate},
			CommunityGalleriesServer:    computefake.CommunityGalleriesServer{Get: ops.communityGalleriesGet},
			GalleryImagesServer: computefake.GalleryImagesServer{NewListByGalleryPager: ops.galleryImagesNewListByGalleryPager,
				Get: ops.galleryImagesGet, BeginCreateOrUpdate: ops.galleryImagesBeginCreateOrUpdate, BeginDelete: ops.galleryImagesBeginDelete},
			GalleryImageVersionsServer: computefake.GalleryImageVersionsServer{Get: ops.galleryImageVersionsGet,
				NewListByGalleryImagePager: ops.galleryImageVersionsNewListByGalleryImagePager, BeginCreateOrUpdate: ops.galleryImageVersionsBeginCreateOrUpdate,
				BeginUpdate: ops.galleryImageVersionsBeginUpdate, BeginDelete: ops.galleryImageVersionsBeginDelete},
			ImagesServer: computefake.ImagesServer{Get: ops.imagesGet, BeginCreateOrUpdate: ops.imagesBeginCreateOrUpdate,
				BeginUpdate: ops.imagesBeginUpdate, BeginDelete: ops.imagesBeginDelete},
			DisksServer: computefake.DisksServer{Get: ops.disksGet, BeginCreateOrUpdate: ops.disksBeginCreateOrUpdate,
				BeginGrantAccess: ops.disksBeginGrantAccess, BeginRevokeAccess: ops.disksBeginRevokeAccess, BeginDelete: ops.disksBeginDelete},
			VirtualMachineImagesServer: computefake.VirtualMachineImagesServer{List: ops.virtualMachineImagesList},
			VirtualMachinesServer: computefake.VirtualMachinesServer{Get: ops.virtualMachinesGet,
				BeginCreateOrUpdate: ops.virtualMachinesBeginCreateOrUpdate, BeginDelete: ops.virtualMachinesBeginDelete},
			VirtualMachineRunCommandsServer: computefake.VirtualMachineRunCommandsServer{BeginCreateOrUpdate: ops.virtualMachineRunCommandsBeginCreateOrUpdate,
				GetByVirtualMachine: ops.virtualMachineRunCommandsGetByVirtualMachine, BeginDelete: ops.virtualMachineRunCommandsBeginDelete},
		},
		resources: &resourcesfake.ServerFactory{
			ResourceGroupsServer: resourcesfake.ResourceGroupsServer{Get: ops.resourceGroupsGet, CheckExistence: ops.resourceGroupsCheckExistence,
				CreateOrUpdate: ops.resourceGroupsCreateOrUpdate, BeginDelete: ops.resourceGroupsBeginDelete},
			Server: resourcesfake.Server{GetByID: ops.resourcesGetByID, BeginCreateOrUpdateByID: ops.resourcesBeginCreateOrUpdateByID},
		},
		storage: &storagefake.ServerFactory{AccountsServer: storagefake.AccountsServer{ListKeys: ops.accountsListKeys,
			NewListPager: ops.accountsNewListPager, GetProperties: ops.accountsGetProperties, BeginCreate: ops.accountsBeginCreate}},
		subs: &subsfake.ServerFactory{Server: subsfake.Server{Get: ops.subscriptionsGet, NewListLocationsPager: ops.subscriptionsNewListLocationsPager}},
	}
}
