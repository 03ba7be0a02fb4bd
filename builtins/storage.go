package builtins

import (
	"errors"
	"fmt"
	"os"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/ensure"
	"github.com/imgflow/imgflow/internal/redact"
	"github.com/imgflow/imgflow/vhd"
)

var (
	kindAccount = KindOneOf(KindStruct("storage_account"), KindString)
	kindBlob    = KindStruct("blob")
	kindBlobURL = KindOneOf(KindStruct("blob"), KindString)
)

func registerStorage(r *Registry) {
	r.add("Storage and VHDs",
		&Spec{
			Name: "storage_account", Positional: 1, Effect: Changes,
			Params: []Param{
				{Name: "name", Kind: KindString, Doc: "3–24 lowercase letters and digits"},
				{Name: "resource_group", Kind: kindRG, Doc: "the resource_group() or its name"},
				{Name: "location", Kind: KindLocation, Default: "None", Doc: "region; default: the resource group's"},
			},
			Returns: "struct(id, name, resource_group, location, blob_endpoint)",
			Doc:     "Ensures a storage account exists (for VHD page blobs).",
			Example: `sa = storage_account("flatcar", resource_group = rg)`,
			Impl:    storageAccountImpl,
		},
		&Spec{
			Name: "storage_account_name", Effect: Pure,
			Params: []Param{
				{Name: "prefix", Kind: KindString, Doc: "1–16 lowercase letters and digits, e.g. `aksvhdclassic`"},
			},
			Returns: "string: `prefix` and 8 hex digits, 3–24 lowercase letters and digits",
			Doc: "A storage account name of this subscription: `prefix` followed by a stable hash of the subscription id. " +
				"Storage account names are global across Azure, so a fixed name may be taken by another subscription (the run would fail at its PUT with StorageAccountAlreadyTaken, after other resources were made); " +
				"this one is the same on every run in one subscription and differs between subscriptions. Use it as the default of a param, so a subscription that owns an account of another name sets that. " +
				"The local target, whose accounts are not global, hashes a fixed id, so every state directory gets the same name.",
			Example: `classic = param("classic_storage_account", default = storage_account_name(prefix = "aksvhdclassic"))`,
			Impl:    storageAccountNameImpl,
		},
		&Spec{
			Name: "blob", Positional: 1, Effect: Pure,
			Params: []Param{
				{Name: "account", Kind: kindAccount, Doc: "the storage_account() or its name"},
				{Name: "container", Kind: KindString, Doc: "container name"},
				{Name: "name", Kind: KindString, Doc: "blob name"},
			},
			Returns: "struct(url, account, container, name)",
			Doc:     "Names a blob; nothing is read or written.",
			Example: `dest = blob(sa, container = "publish", name = "flatcar-linux-4152.2.3-stable-amd64.vhd")`,
			Impl:    blobImpl,
		},
		&Spec{
			Name: "vhd", Positional: 1, Effect: Pure,
			Params: []Param{
				{Name: "url", Kind: kindBlobURL, Doc: "the blob() or its URL"},
				{Name: "storage_account", Kind: kindAccount, Doc: "the storage_account() holding it, or its ARM id"},
			},
			Returns: "struct(url, storage_account_id)",
			Doc:     "A VHD page blob as an image source (Azure needs the account's id to read it).",
			Example: `src = vhd(uploaded, storage_account = sa)`,
			Impl:    vhdImpl,
		},
		&Spec{
			Name: "vhd_upload", Positional: 1, Effect: Changes,
			Params: []Param{
				{Name: "path", Kind: KindString, Doc: "a fixed VHD file in the workspace, relative to the calling file or `//path`"},
				{Name: "dest", Kind: kindBlob, Doc: "the blob() to write"},
				{Name: "overwrite", Kind: KindBool, Default: "False", Doc: "replace an existing blob with other content"},
			},
			Returns: "blob struct with url, size, digest and md5",
			Doc:     "Uploads a local VHD (checked first: fixed, virtual size a whole number of MiB) to a page blob, sending only data ranges (holes and all-zero chunks are skipped). A blob with the same content (same size and sparse digest, computed from the file's data ranges) is left alone; one with other content is an error unless `overwrite`.",
			Example: `uploaded = vhd_upload("//testdata/flatcar-test.vhd", dest = dest)`,
			Impl:    vhdUploadImpl,
		},
		&Spec{
			Name: "blob_copy", Positional: 1, Effect: Changes,
			Params: []Param{
				{Name: "src", Kind: kindBlobURL, Doc: "the source blob() or its URL (a SAS is never printed)"},
				{Name: "dest", Kind: kindBlob, Doc: "the blob() to write"},
				{Name: "overwrite", Kind: KindBool, Default: "False", Doc: "replace an existing blob with other content"},
			},
			Returns: "blob struct with url, size, digest and md5",
			Doc:     "Copies a blob, e.g. an external base VHD into the build's own storage. An identical destination (same size and digest, or same MD5 where a blob has no digest) is left alone.",
			Example: `base = blob_copy("https://example.blob.core.windows.net/vhds/base.vhd", dest = blob(sa, "vhds", "base.vhd"))`,
			Impl:    blobCopyImpl,
		},
		&Spec{
			Name: "managed_image", Positional: 1, Effect: Changes,
			Params: []Param{
				{Name: "name", Kind: KindString, Doc: "image name"},
				{Name: "resource_group", Kind: kindRG, Doc: "the resource_group() or its name"},
				{Name: "source", Kind: KindOneOf(KindStruct("vhd", "image_version"), KindString), Doc: "a vhd() or image_version()"},
				{Name: "location", Kind: KindLocation, Default: "None", Doc: "region; default: the resource group's"},
				{Name: "os_type", Kind: KindString, Default: `"Linux"`, Doc: "Linux or Windows"},
				{Name: "hyper_v_generation", Kind: KindString, Default: `"V2"`, Doc: "V1 or V2"},
			},
			Returns: "struct(id, name, resource_group, location)",
			Doc:     "Ensures a managed image exists, made from a VHD or a gallery version (the import paths).",
			Example: `img = managed_image("mariner-base", resource_group = rg, source = vhd(base, storage_account = sa))`,
			Impl:    managedImageImpl,
		},
	)
}

func storageAccountImpl(c *Call) (starlark.Value, error) {
	rg, rgLocation, rgSub := c.rgArg("resource_group")
	if err := c.targetSubscriptionOnly("storage account "+c.String("name", ""), rgSub); err != nil {
		return nil, err
	}
	want := cloud.StorageAccount{Name: c.String("name", ""), ResourceGroup: rg, Location: c.String("location", rgLocation), Tags: c.standardTags(nil)}
	if want.Location == "" {
		return nil, fmt.Errorf("storage account %s: location is required when resource_group is a name", want.Name)
	}
	sa, outcome, err := ensure.EnsureStorageAccount(c.Ctx(), c.Run.Provider, want)
	if err != nil {
		return nil, fmt.Errorf("storage account %s: %w", want.Name, err)
	}
	c.Report(outcome, sa.Name+" in "+sa.Location)
	return makeStruct("storage_account", fields{"id": sa.ID, "name": sa.Name, "resource_group": sa.ResourceGroup, "location": sa.Location, "blob_endpoint": sa.BlobEndpoint}), nil
}

// localSubscriptionSeed is what storage_account_name hashes on the local
// target, whose subscription id is random per state directory, and where
// no target is open (a test file or the docs loading a library), so those
// see the local target's names.
const localSubscriptionSeed = "local"

func storageAccountNameImpl(c *Call) (starlark.Value, error) {
	sub := localSubscriptionSeed
	if p := c.Run.Provider; p != nil && p.Target() != "local" {
		sub = p.SubscriptionID()
	}
	name, err := cloud.SubscriptionStorageAccountName(sub, c.String("prefix", ""))
	if err != nil {
		return nil, fmt.Errorf("storage_account_name: %w", err)
	}
	return starlark.String(name), nil
}

func blobImpl(c *Call) (starlark.Value, error) {
	ref := cloud.BlobRef{Container: c.String("container", ""), Name: c.String("name", "")}
	if sa := c.Struct("account"); sa != nil {
		ref.Account = attrString(sa, "name")
		if ep := attrString(sa, "blob_endpoint"); ep != cloud.DefaultBlobEndpoint(ref.Account) {
			ref.Endpoint = ep
		}
	} else {
		ref.Account = c.String("account", "")
	}
	if err := errors.Join(cloud.ValidateStorageAccountName(ref.Account), cloud.ValidateContainerName(ref.Container), cloud.ValidateBlobName(ref.Name)); err != nil {
		return nil, fmt.Errorf("blob: %w", err)
	}
	return blobValue(ref, nil), nil
}

func blobValue(ref cloud.BlobRef, b *cloud.Blob) *starlarkstruct.Struct {
	f := fields{"url": ref.URL(), "account": ref.Account, "container": ref.Container, "name": ref.Name}
	if ref.Endpoint != "" {
		f["endpoint"] = ref.Endpoint
	}
	if b != nil {
		f["size"] = b.Size
		f["md5"] = b.MD5
		f["digest"] = b.Digest
	}
	return makeStruct("blob", f)
}

// blobRefArg reads a blob() struct or URL argument.
func (c *Call) blobRefArg(name string) (cloud.BlobRef, string, error) {
	if s := c.Struct(name); s != nil {
		ref := cloud.BlobRef{Account: attrString(s, "account"), Container: attrString(s, "container"), Name: attrString(s, "name"), Endpoint: attrString(s, "endpoint")}
		return ref, ref.URL(), nil
	}
	raw := c.String(name, "")
	ref, err := cloud.ParseBlobURL(raw)
	return ref, raw, err
}

func vhdImpl(c *Call) (starlark.Value, error) {
	ref, raw, err := c.blobRefArg("url")
	if err != nil {
		return nil, fmt.Errorf("vhd: %w", err)
	}
	id := ""
	if sa := c.Struct("storage_account"); sa != nil {
		id = attrString(sa, "id")
	} else {
		id = c.String("storage_account", "")
		rid, err := cloud.ParseResourceID(id)
		if err != nil || !rid.Is("Microsoft.Storage", "storageAccounts") {
			return nil, fmt.Errorf("vhd: storage_account %q is not a storage account id (/subscriptions/…/providers/Microsoft.Storage/storageAccounts/<name>): pass storage_account(…) or its id", id)
		}
	}
	if err := cloud.ValidateVHDBlobName(ref.Name); err != nil {
		return nil, fmt.Errorf("vhd: %w", err)
	}
	return makeStruct("vhd", fields{"url": raw, "storage_account_id": id}), nil
}

func vhdUploadImpl(c *Call) (starlark.Value, error) {
	ref, _, _ := c.blobRefArg("dest")
	path := c.String("path", "")
	src, err := c.openWorkspaceFile(path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	info, err := vhd.Validate(src, statSize(src))
	if err != nil {
		return nil, fmt.Errorf("vhd_upload %s: %w", path, err)
	}
	ranges, err := vhd.DataRanges(src)
	if err != nil {
		return nil, fmt.Errorf("vhd_upload %s: %w", path, err)
	}
	b, outcome, err := ensure.EnsurePageBlob(c.Ctx(), c.Run.Provider, ref, cloud.PageSource{Reader: src, Size: info.FileSize, Ranges: ranges}, c.Bool("overwrite", false))
	if err != nil {
		return nil, fmt.Errorf("vhd_upload %s: %w", path, err)
	}
	if outcome == cloud.Exists {
		c.Report(outcome, ref.URL())
	} else {
		c.Report(outcome, fmt.Sprintf("%s (%d MiB)", ref.URL(), info.VirtualSize>>20))
	}
	return blobValue(ref, b), nil
}

func statSize(f *os.File) int64 {
	st, err := f.Stat()
	if err != nil {
		return 0
	}
	return st.Size()
}

func (c *Call) openWorkspaceFile(path string) (*os.File, error) {
	from := ""
	if len(c.step.Stack) >= 2 {
		from = c.step.Stack[len(c.step.Stack)-2].Pos.Filename()
	}
	_, abs, err := c.Run.Workspace.Resolve(from, path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Spec.Name, err)
	}
	f, err := os.Open(abs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.Spec.Name, err)
	}
	return f, nil
}

func blobCopyImpl(c *Call) (starlark.Value, error) {
	srcRef, srcURL, err := c.blobRefArg("src")
	if err != nil {
		return nil, fmt.Errorf("blob_copy: %w", err)
	}
	dest, _, _ := c.blobRefArg("dest")
	b, outcome, err := ensure.EnsureBlobCopy(c.Ctx(), c.Run.Provider, srcRef, srcURL, dest, c.Bool("overwrite", false))
	if err != nil {
		return nil, fmt.Errorf("blob_copy: %w", err)
	}
	if outcome == cloud.Exists {
		c.Report(outcome, dest.URL())
	} else {
		c.Report(outcome, fmt.Sprintf("%s → %s", redact.URL(srcURL), dest.URL()))
	}
	return blobValue(dest, b), nil
}

func managedImageImpl(c *Call) (starlark.Value, error) {
	rg, rgLocation, rgSub := c.rgArg("resource_group")
	if err := c.targetSubscriptionOnly("managed image "+c.String("name", ""), rgSub); err != nil {
		return nil, err
	}
	src, err := c.sourceArg("source")
	if err != nil {
		return nil, fmt.Errorf("managed image: %w", err)
	}
	want := cloud.ManagedImage{
		Name: c.String("name", ""), ResourceGroup: rg, Location: c.String("location", rgLocation), Source: src,
		OSType: c.String("os_type", cloud.OSTypeLinux), HyperVGeneration: c.String("hyper_v_generation", cloud.HyperVGenV2),
		Tags: c.standardTags(nil),
	}
	img, outcome, err := ensure.EnsureManagedImage(c.Ctx(), c.Run.Provider, want)
	if err != nil {
		return nil, fmt.Errorf("managed image %s: %w", want.Name, err)
	}
	c.Report(outcome, img.Name+" in "+img.Location)
	return makeStruct("managed_image", fields{"id": img.ID, "name": img.Name, "resource_group": img.ResourceGroup, "location": img.Location}), nil
}
