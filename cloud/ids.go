package cloud

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/imgflow/imgflow/internal/redact"
)

// IDs are ARM resource ids, built in one place so every target spells them
// the same way.

// ResourceGroupID is the ARM id of a resource group.
func ResourceGroupID(sub, rg string) string {
	return fmt.Sprintf("/subscriptions/%s/resourceGroups/%s", sub, rg)
}

// GalleryID is the ARM id of a gallery.
func GalleryID(sub, rg, gallery string) string {
	return ResourceGroupID(sub, rg) + "/providers/Microsoft.Compute/galleries/" + gallery
}

// ImageDefinitionID is the ARM id of a gallery image definition.
func ImageDefinitionID(sub, rg, gallery, def string) string {
	return GalleryID(sub, rg, gallery) + "/images/" + def
}

// ImageVersionID is the ARM id of a gallery image version.
func ImageVersionID(sub, rg, gallery, def, version string) string {
	return ImageDefinitionID(sub, rg, gallery, def) + "/versions/" + version
}

// ManagedImageID is the ARM id of a managed image.
func ManagedImageID(sub, rg, name string) string {
	return ResourceGroupID(sub, rg) + "/providers/Microsoft.Compute/images/" + name
}

// DiskID is the ARM id of a managed disk.
func DiskID(sub, rg, name string) string {
	return ResourceGroupID(sub, rg) + "/providers/Microsoft.Compute/disks/" + name
}

// StorageAccountID is the ARM id of a storage account.
func StorageAccountID(sub, rg, name string) string {
	return ResourceGroupID(sub, rg) + "/providers/Microsoft.Storage/storageAccounts/" + name
}

// CommunityImageID is how consumers reference a community gallery image
// version (imageReference.communityGalleryImageId).
func CommunityImageID(publicName, def, version string) string {
	return fmt.Sprintf("/CommunityGalleries/%s/Images/%s/Versions/%s", publicName, def, version)
}

// ResourceID is a parsed ARM id: the subscription, resource group and the
// provider path as (type, name) pairs.
type ResourceID struct {
	Subscription  string
	ResourceGroup string
	Provider      string
	// Types and Names are parallel: e.g. [galleries images versions] and
	// [g d 1.0.0].
	Types []string
	Names []string
}

// ParseResourceID parses an ARM id such as a gallery image version id.
func ParseResourceID(id string) (*ResourceID, error) {
	parts := strings.Split(strings.Trim(id, "/"), "/")
	if len(parts) < 4 || !strings.EqualFold(parts[0], "subscriptions") || !strings.EqualFold(parts[2], "resourceGroups") {
		return nil, fmt.Errorf("invalid ARM resource id %q: want /subscriptions/<id>/resourceGroups/<name>/providers/<namespace>/<type>/<name>", id)
	}
	r := &ResourceID{Subscription: parts[1], ResourceGroup: parts[3]}
	rest := parts[4:]
	if len(rest) == 0 {
		return r, nil
	}
	if len(rest) < 4 || !strings.EqualFold(rest[0], "providers") || len(rest)%2 != 0 {
		return nil, fmt.Errorf("invalid ARM resource id %q: want …/providers/<namespace>/<type>/<name>[/<type>/<name>…]", id)
	}
	r.Provider = rest[1]
	for i := 2; i < len(rest); i += 2 {
		if rest[i] == "" || rest[i+1] == "" {
			return nil, fmt.Errorf("invalid ARM resource id %q: empty segment", id)
		}
		r.Types = append(r.Types, rest[i])
		r.Names = append(r.Names, rest[i+1])
	}
	return r, nil
}

// Is reports whether the id names a resource of the given provider and
// type path, e.g. Is("Microsoft.Compute", "galleries", "images", "versions").
func (r *ResourceID) Is(provider string, types ...string) bool {
	if !strings.EqualFold(r.Provider, provider) || len(types) != len(r.Types) {
		return false
	}
	for i, t := range types {
		if !strings.EqualFold(t, r.Types[i]) {
			return false
		}
	}
	return true
}

// BlobRef names a blob: storage account, container and blob name.
type BlobRef struct {
	Account   string `json:"account"`
	Container string `json:"container"`
	Name      string `json:"name"`
	// Endpoint is the blob service URL (https://<account>.blob.core.windows.net
	// by default; an emulator's http://127.0.0.1:10000/<account> otherwise).
	Endpoint string `json:"endpoint,omitempty"`
}

// PublicStorageSuffix is the storage endpoint suffix of Azure's public
// cloud; sovereign clouds have their own (cloud/azure.Cloud).
const PublicStorageSuffix = "core.windows.net"

// BlobEndpointIn is an account's blob endpoint in the cloud whose storage
// suffix is suffix (core.windows.net, core.usgovcloudapi.net, …): the one
// place the host is spelt.
func BlobEndpointIn(account, suffix string) string {
	return "https://" + account + ".blob." + suffix
}

// DefaultBlobEndpoint is the public-cloud blob endpoint of an account.
func DefaultBlobEndpoint(account string) string {
	return BlobEndpointIn(account, PublicStorageSuffix)
}

// URL is the blob's URL without any query (no SAS).
func (b BlobRef) URL() string {
	ep := b.Endpoint
	if ep == "" {
		ep = DefaultBlobEndpoint(b.Account)
	}
	return strings.TrimRight(ep, "/") + "/" + b.Container + "/" + b.Name
}

// String is the blob's URL.
func (b BlobRef) String() string { return b.URL() }

// ParseBlobURL parses https://<account>.blob.core.windows.net/<container>/<blob>
// or an emulator URL http://host:port/<account>/<container>/<blob>. The
// query (a SAS) is dropped.
func ParseBlobURL(raw string) (BlobRef, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return BlobRef{}, fmt.Errorf("invalid blob URL %q: want https://<account>.blob.core.windows.net/<container>/<blob>", redact.URL(raw))
	}
	path := strings.TrimPrefix(u.EscapedPath(), "/")
	host := u.Hostname()
	var account string
	endpoint := u.Scheme + "://" + u.Host
	if i := strings.Index(host, ".blob."); i > 0 {
		account = host[:i]
	} else {
		// Emulator style: the account is the first path segment.
		first, rest, ok := strings.Cut(path, "/")
		if !ok {
			return BlobRef{}, fmt.Errorf("invalid blob URL %q: missing container and blob name", redact.URL(raw))
		}
		account, path = first, rest
		endpoint += "/" + account
	}
	container, name, ok := strings.Cut(path, "/")
	if !ok || container == "" || name == "" {
		return BlobRef{}, fmt.Errorf("invalid blob URL %q: want <endpoint>/<container>/<blob>", redact.URL(raw))
	}
	if unescaped, err := url.PathUnescape(name); err == nil {
		name = unescaped
	}
	ref := BlobRef{Account: account, Container: container, Name: name}
	if endpoint != DefaultBlobEndpoint(account) {
		ref.Endpoint = endpoint
	}
	return ref, nil
}
