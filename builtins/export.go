package builtins

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/vhd"
)

// sourceMetadataKey marks a VHD exported by sig_to_vhd with the version it
// came from, so a rerun recognises its own export.
const sourceMetadataKey = "imgflowsource"

func registerExport(r *Registry) {
	r.add("Exporting VHDs",
		&Spec{
			Name: "sig_to_vhd", Positional: 1, Effect: Changes,
			Params: []Param{
				{Name: "version", Kind: kindVersion, Doc: "the image_version() to export"},
				{Name: "dest", Kind: kindBlob, Doc: "the blob() to write the VHD to"},
				{Name: "location", Kind: KindLocation, Default: "None", Doc: "region of the temporary disk; default: the version's region (it must be replicated there)"},
				{Name: "security_type", Kind: KindString, Default: "None", Doc: "TrustedLaunch or ConfidentialVM for images that need a secure disk"},
				{Name: "sas_duration", Kind: KindDuration, Default: `"1h"`, Doc: "how long the disk's read access stays open"},
				{Name: "overwrite", Kind: KindBool, Default: "False", Doc: "replace an existing blob that is not this version's export"},
			},
			Returns: "blob struct with url and size; a ConfidentialVM export also has guest_state: the blob of the VM guest state (`<name>.vmgs` next to the VHD), or None where the target has none",
			Doc: "Exports a gallery image version to a VHD page blob: a temporary managed disk from the version, read access (SAS), " +
				"a copy into `dest`, verification (size and VHD footer), then access revoked and the disk deleted. Revoke and delete " +
				"are on the cleanup stack from the moment the disk exists, so they also happen on failure and cancel; a failure of " +
				"either fails the run. A failed copy always fails the workflow. An existing blob is never overwritten unless " +
				"`overwrite`, except that a rerun finds its own earlier export and leaves it. With `security_type = \"ConfidentialVM\"` the disk's VM guest state " +
				"is copied too, to the VHD's name with `.vmgs` for `.vhd`: a confidential VM needs both.",
			Example: `exported = sig_to_vhd(v, dest = blob(sa, container = "vhds", name = "2204gen2-%s.vhd" % v.name))`,
			Impl:    sigToVHDImpl,
		},
	)
}

func sigToVHDImpl(c *Call) (starlark.Value, error) {
	vs := c.Struct("version")
	ds := attrStruct(vs, "definition")
	versionID := attrString(vs, "id")
	rg := attrString(ds, "resource_group")
	dest, _, _ := c.blobRefArg("dest")
	overwrite := c.Bool("overwrite", false)
	location := c.String("location", attrString(vs, "location"))
	securityType := c.String("security_type", "")
	if securityType != "" && securityType != "TrustedLaunch" && securityType != "ConfidentialVM" {
		return nil, fmt.Errorf("sig_to_vhd: security_type %q: use TrustedLaunch or ConfidentialVM (or leave it unset)", securityType)
	}
	if err := cloud.ValidateVHDBlobName(dest.Name); err != nil {
		return nil, fmt.Errorf("sig_to_vhd: %w", err)
	}
	ctx, p := c.Ctx(), c.Run.Provider

	existing, err := p.GetBlob(ctx, dest)
	switch {
	case err == nil:
		if existing.Metadata[sourceMetadataKey] == versionID && !overwrite {
			c.Report(cloud.Exists, dest.URL()+" (exported earlier)")
			return c.exportValue(dest, existing, securityType)
		}
		if !overwrite && !c.interruptedExport(rg, versionID, dest) {
			return nil, fmt.Errorf("sig_to_vhd: %s already exists and is not an export of %s: pass overwrite=True to replace it, or export to another name", dest.URL(), attrString(vs, "name"))
		}
	case !cloud.IsNotFound(err):
		return nil, fmt.Errorf("sig_to_vhd: %w", err)
	}

	disk, err := c.exportDisk(rg, location, versionID, securityType, dest)
	if err != nil {
		return nil, err
	}
	if disk.AccessGranted {
		// An interrupted attempt left its grant open; its SAS is not kept
		// anywhere, so close it and open a new one.
		if err := p.RevokeDiskAccess(ctx, rg, disk.Name); err != nil {
			return nil, fmt.Errorf("sig_to_vhd: revoke the earlier access to disk %s: %w", disk.Name, err)
		}
	}
	sas, err := p.GrantDiskAccess(ctx, rg, disk.Name, c.Duration("sas_duration", time.Hour))
	if err != nil {
		return nil, fmt.Errorf("sig_to_vhd: grant read access to disk %s: %w", disk.Name, err)
	}
	if err := c.AddCleanup("revoke_disk_access", "revoke access to disk "+disk.Name, map[string]any{"resource_group": rg, "name": disk.Name}); err != nil {
		return nil, err
	}
	if err := p.EnsureContainer(ctx, dest.Account, dest.Container); err != nil {
		return nil, fmt.Errorf("sig_to_vhd: %w", err)
	}
	if existing == nil || !overwrite { // here an existing blob is this export's interrupted copy

		// The blob is this export's from its first byte until it is
		// marked: journaled before the copy, so a run killed or
		// cancelled before the mark, and gc, delete the unmarked copy
		// (a resume then exports again) instead of leaving tens of GiB
		// that no cleanup names and a resume refuses to overwrite. A
		// blob the workflow asked to overwrite stays its owner's.
		if err := c.AddCleanup("delete_unfinished_export", "delete unfinished export "+dest.URL(), exportCleanupArgs(dest, versionID)); err != nil {
			return nil, err
		}
	}
	b, err := p.CopyBlob(ctx, sas, dest, overwrite || existing != nil)
	if err != nil {
		return nil, fmt.Errorf("sig_to_vhd: copy disk %s to %s: %w", disk.Name, dest.URL(), err)
	}
	if err := verifyExport(c, dest, b, disk); err != nil {
		return nil, err
	}
	if err := p.SetBlobMetadata(ctx, dest, map[string]string{sourceMetadataKey: versionID}); err != nil {
		return nil, fmt.Errorf("sig_to_vhd: mark %s: %w", dest.URL(), err)
	}
	// The copy is verified: the disk can go now rather than at the end of
	// the workflow (the cleanups registered above then find nothing to do).
	if err := p.RevokeDiskAccess(ctx, rg, disk.Name); err != nil {
		return nil, fmt.Errorf("sig_to_vhd: revoke access to disk %s: %w", disk.Name, err)
	}
	if err := p.DeleteDisk(ctx, rg, disk.Name); err != nil {
		return nil, fmt.Errorf("sig_to_vhd: delete disk %s: %w", disk.Name, err)
	}
	outcome := cloud.Created
	if existing != nil {
		outcome = cloud.Updated
	}
	c.Report(outcome, fmt.Sprintf("%s → %s (%d MiB)", attrString(vs, "name"), dest.URL(), b.Size>>20))
	b.Metadata = map[string]string{sourceMetadataKey: versionID}
	return c.exportValue(dest, b, securityType)
}

// exportValue is sig_to_vhd's result: the VHD's blob and, for a
// ConfidentialVM export, guest_state: the blob the target copied the VM
// guest state to (cloud.GuestStateBlobName), or None when it has none
// (the local target simulates no guest state). The validation pass
// returns the blob the export will write.
func (c *Call) exportValue(dest cloud.BlobRef, b *cloud.Blob, securityType string) (starlark.Value, error) {
	v := blobValue(dest, b)
	if securityType != "ConfidentialVM" {
		return v, nil
	}
	gsRef := dest
	gsRef.Name = cloud.GuestStateBlobName(dest.Name)
	var guest starlark.Value = starlark.None
	switch gs, err := c.Run.Provider.GetBlob(c.Ctx(), gsRef); {
	case err == nil:
		guest = blobValue(gsRef, gs)
	case cloud.IsNotFound(err) && c.Run.Validating:
		// A dry run copies nothing: the blob the export will write.
		guest = blobValue(gsRef, nil)
	case !cloud.IsNotFound(err):
		return nil, fmt.Errorf("sig_to_vhd: the VM guest state %s: %w", gsRef.URL(), err)
	}
	d := starlark.StringDict{}
	v.ToStringDict(d)
	d["guest_state"] = guest
	return starlarkstruct.FromStringDict(starlark.String("blob"), d), nil
}

// exportCleanupArgs are the args of a delete_unfinished_export cleanup.
func exportCleanupArgs(dest cloud.BlobRef, versionID string) map[string]any {
	a := blobArgs(dest)
	a["version_id"] = versionID
	return a
}

// deleteUnfinishedExport deletes an export's destination blob unless it
// is marked as the finished export of its version: a finished export is
// what the run made, an unmarked one a copy it did not finish.
func deleteUnfinishedExport(ctx context.Context, p cloud.Provider, a map[string]any) error {
	str := func(k string) string { s, _ := a[k].(string); return s }
	ref := cloud.BlobRef{Account: str("account"), Container: str("container"), Name: str("name"), Endpoint: str("endpoint")}
	b, err := p.GetBlob(ctx, ref)
	switch {
	case cloud.IsNotFound(err):
		return nil
	case err != nil:
		return err
	case b.Metadata[sourceMetadataKey] == str("version_id"):
		return nil
	}
	if err := p.DeleteBlob(ctx, ref); err != nil && !cloud.IsNotFound(err) {
		return err
	}
	return nil
}

// exportDiskName is derived from the version and destination, so a
// resumed run finds the disk of its interrupted attempt.
func exportDiskName(versionID string, dest cloud.BlobRef) string {
	sum := sha256.Sum256([]byte(versionID + "\x00" + dest.URL()))
	return "imgflow-export-" + hex.EncodeToString(sum[:6])
}

// interruptedExport reports that an unmarked destination blob is this
// export's own interrupted copy: the export's disk still exists (the
// attempt died between the copy and its mark), so copying again is safe.
func (c *Call) interruptedExport(rg, versionID string, dest cloud.BlobRef) bool {
	_, err := c.Run.Provider.GetDisk(c.Ctx(), rg, exportDiskName(versionID, dest))
	return err == nil
}

// exportDisk creates the temporary disk and registers its deletion at once.
func (c *Call) exportDisk(rg, location, versionID, securityType string, dest cloud.BlobRef) (*cloud.Disk, error) {
	name := exportDiskName(versionID, dest)
	disk, err := c.Run.Provider.CreateDiskFromImageVersion(c.Ctx(), cloud.Disk{
		Name: name, ResourceGroup: rg, Location: location, SourceImageVersionID: versionID,
		SecurityType: securityType, Tags: c.temporaryTags(),
	})
	if err != nil {
		return nil, fmt.Errorf("sig_to_vhd: create disk %s from %s in %s: %w", name, versionID, location, err)
	}
	if err := c.AddCleanup("delete_disk", "delete disk "+name, map[string]any{"resource_group": rg, "name": name}); err != nil {
		return nil, err
	}
	return disk, nil
}

// temporaryTags mark resources imgflow deletes itself, for garbage
// collection of what a dead run left.
func (c *Call) temporaryTags() cloud.Tags {
	tags := c.standardTags(nil)
	tags["imgflowTemporary"] = "true"
	return tags
}

// verifyExport checks the copy before anything is deleted: the size of the
// disk, and a fixed VHD footer describing that size.
func verifyExport(c *Call, dest cloud.BlobRef, b *cloud.Blob, disk *cloud.Disk) error {
	if disk.SizeBytes > 0 && b.Size != disk.SizeBytes {
		return fmt.Errorf("sig_to_vhd: copy of disk %s to %s has %d bytes, the disk %d: the copy is incomplete", disk.Name, dest.URL(), b.Size, disk.SizeBytes)
	}
	if c.Run.Validating {
		return nil // a dry run has no data to read
	}
	if b.Size < vhd.FooterSize {
		return fmt.Errorf("sig_to_vhd: %s is too small to be a VHD (%d bytes)", dest.URL(), b.Size)
	}
	footer, err := c.Run.Provider.ReadBlob(c.Ctx(), dest, b.Size-vhd.FooterSize, vhd.FooterSize)
	if err != nil {
		return fmt.Errorf("sig_to_vhd: read the footer of %s: %w", dest.URL(), err)
	}
	f, err := vhd.ParseFooter(footer)
	if err != nil {
		return fmt.Errorf("sig_to_vhd: %s is not a valid VHD after the copy: %w", dest.URL(), err)
	}
	if f.DiskType != vhd.DiskTypeFixed || int64(f.CurrentSize)+vhd.FooterSize != b.Size {
		return fmt.Errorf("sig_to_vhd: %s is a %s VHD of %d bytes in a blob of %d: not the fixed VHD a disk export gives", dest.URL(),
			strings.ToLower(f.DiskType.String()), f.CurrentSize, b.Size)
	}
	return nil
}

func registerDelete(r *Registry) {
	r.add("Deleting",
		&Spec{
			Name: "delete", Positional: 1, Effect: Changes,
			Params: []Param{
				{Name: "resource", Kind: KindOneOf(KindStruct("managed_image", "image_version", "image_definition", "blob"), KindString),
					Doc: "a managed_image(), image_version(), image_definition() or blob() (or a blob URL, or the ARM id of a gallery image version, e.g. a published version a release replaces)"},
			},
			Returns: "None",
			Doc: "Deletes a temporary resource the workflow made (lib/temporary.star calls it from cleanups). A resource " +
				"already gone is not an error; a definition that still has versions is. Galleries, resource groups and " +
				"storage accounts are never deleted by imgflow.",
			Example: `cleanup(lambda: delete(build.managed_image))`,
			Impl:    deleteImpl,
		},
	)
}

func deleteImpl(c *Call) (starlark.Value, error) {
	kind, args, what, err := deletionOf(c.Value("resource"))
	if err != nil {
		return nil, fmt.Errorf("delete: %w", err)
	}
	p, err := cleanupProvider(c.Ctx(), c.Run.Provider, c.Run.Subscriptions, c.Run.withSubscription(args, what))
	if err != nil {
		return nil, fmt.Errorf("delete %s: %w", what, err)
	}
	err = deleters()[kind](c.Ctx(), p, args)
	switch {
	case cloud.IsNotFound(err):
		c.Report(cloud.Exists, what+" (already gone)")
	case err != nil:
		return nil, fmt.Errorf("delete %s: %w", what, err)
	default:
		c.Report(cloud.Outcome("deleted"), what)
	}
	return starlark.None, nil
}

// deletionOf is how to delete a resource delete() accepts: the deleter's
// kind, its JSON-like args (a journal keeps them, so imgflow gc can delete
// the resource of a dead run) and the resource as messages name it.
func deletionOf(v starlark.Value) (kind string, args map[string]any, what string, err error) {
	if s, ok := v.(*starlarkstruct.Struct); ok {
		switch ctorOf(s) {
		case "managed_image":
			return "delete_managed_image", map[string]any{"resource_group": attrString(s, "resource_group"), "name": attrString(s, "name")}, attrString(s, "id"), nil
		case "image_version":
			ds := attrStruct(s, "definition")
			return "delete_image_version", map[string]any{
				"resource_group": attrString(ds, "resource_group"), "gallery": attrString(attrStruct(ds, "gallery"), "name"),
				"definition": attrString(ds, "name"), "version": attrString(s, "name"),
			}, attrString(s, "id"), nil
		case "image_definition":
			return "delete_image_definition", map[string]any{
				"resource_group": attrString(s, "resource_group"), "gallery": attrString(attrStruct(s, "gallery"), "name"), "name": attrString(s, "name"),
			}, attrString(s, "id"), nil
		case "blob":
			ref := cloud.BlobRef{Account: attrString(s, "account"), Container: attrString(s, "container"), Name: attrString(s, "name"), Endpoint: attrString(s, "endpoint")}
			return "delete_blob", blobArgs(ref), ref.URL(), nil
		}
		return "", nil, "", fmt.Errorf("cannot delete a %s: pass a managed_image(), image_version(), image_definition() or blob()", ctorOf(s))
	}
	raw, ok := starlark.AsString(v)
	if !ok {
		return "", nil, "", fmt.Errorf("cannot delete a %s: pass a managed_image(), image_version(), image_definition(), blob() or a blob URL", v.Type())
	}
	if strings.HasPrefix(raw, "/") {
		return versionDeletion(raw)
	}
	ref, err := cloud.ParseBlobURL(raw)
	if err != nil {
		return "", nil, "", err
	}
	return "delete_blob", blobArgs(ref), ref.URL(), nil
}

// versionDeletion is the deletion of a gallery image version named by its
// ARM id: one the workflow did not make in this run, such as the published
// version a promotion replaces.
func versionDeletion(id string) (kind string, args map[string]any, what string, err error) {
	r, err := cloud.ParseResourceID(id)
	if err != nil {
		return "", nil, "", err
	}
	if !r.Is("Microsoft.Compute", "galleries", "images", "versions") {
		return "", nil, "", fmt.Errorf("%s is not a gallery image version: delete() takes the ARM id of a version (…/galleries/<g>/images/<d>/versions/<v>), or a managed_image(), image_version(), image_definition() or blob()", id)
	}
	return "delete_image_version", map[string]any{
		"resource_group": r.ResourceGroup, "gallery": r.Names[0], "definition": r.Names[1], "version": r.Names[2],
	}, id, nil
}

func blobArgs(ref cloud.BlobRef) map[string]any {
	return map[string]any{"account": ref.Account, "container": ref.Container, "name": ref.Name, "endpoint": ref.Endpoint}
}
