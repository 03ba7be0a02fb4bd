package azure_test

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/container"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azure"
	"github.com/imgflow/imgflow/cloud/azure/azuritetest"
	"github.com/imgflow/imgflow/cloud/azure/fakearm"
	"github.com/imgflow/imgflow/cloud/ensure"
	"github.com/imgflow/imgflow/cloud/overlay"
	"github.com/imgflow/imgflow/internal/testharness"
	"github.com/imgflow/imgflow/interp"
)

// containerOfSAS is a shared-key client for the container a disk SAS
// points into (Azurite), to look at or end its stored access policy.
func containerOfSAS(t *testing.T, sas string) *container.Client {
	ref, err := cloud.ParseBlobURL(sas)
	require.NoError(t, err)
	u, err := url.Parse(sas)
	require.NoError(t, err)
	cred, err := azblob.NewSharedKeyCredential(ref.Account, azuritetest.DevKey)
	require.NoError(t, err)
	cc, err := container.NewClientWithSharedKeyCredential(u.Scheme+"://"+u.Host+"/"+ref.Account+"/"+ref.Container, cred, nil)
	require.NoError(t, err)
	return cc
}

// TestExportConfidentialVMGuestState: a ConfidentialVM disk's grant asks
// for the VM guest state, and the copy puts it next to the VHD as .vmgs;
// no SAS reaches a log line.
func TestExportConfidentialVMGuestState(t *testing.T) {
	w := newWorld(t, fakearm.Options{}, nil)
	sa, c := w.base("imgflowtest")
	v, img := w.version(sa, c)
	d, err := w.p.CreateDiskFromImageVersion(w.ctx, cloud.Disk{Name: "cvm", ResourceGroup: "rg", SourceImageVersionID: v.ID,
		SecurityType: azure.SecurityConfidentialVM, HyperVGeneration: cloud.HyperVGenV2})
	require.NoError(t, err)
	require.Equal(t, azure.SecurityConfidentialVM, d.SecurityType)
	sas, err := w.p.GrantDiskAccess(w.ctx, "rg", "cvm", time.Hour)
	require.NoError(t, err)

	dest := ref(sa, c, "2204-cvm.vhd")
	b, err := w.p.CopyBlob(w.ctx, sas, dest, false)
	require.NoError(t, err)
	assert.Equal(t, int64(len(img.content)), b.Size)
	gsRef := ref(sa, c, "2204-cvm.vmgs")
	gs, err := w.p.GetBlob(w.ctx, gsRef)
	require.NoError(t, err, "the guest state is next to the VHD")
	assert.Equal(t, cloud.BlobTypePage, gs.Type)
	head, err := w.p.ReadBlob(w.ctx, gsRef, 0, 512)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(head), fakearm.GuestStateHeader+d.ID), "the guest state of this disk: %q", head[:64])

	u, err := url.Parse(sas)
	require.NoError(t, err)
	for _, l := range w.logLines() {
		assert.NotContains(t, strings.ToLower(l), "sig=", l)
		assert.NotContains(t, l, u.Query().Get("sig"), l)
	}

	// A standard disk has no guest state: nothing else is written.
	_, err = w.p.CreateDiskFromImageVersion(w.ctx, cloud.Disk{Name: "plain", ResourceGroup: "rg", SourceImageVersionID: v.ID})
	require.NoError(t, err)
	plain, err := w.p.GrantDiskAccess(w.ctx, "rg", "plain", time.Hour)
	require.NoError(t, err)
	_, err = w.p.CopyBlob(w.ctx, plain, ref(sa, c, "plain.vhd"), false)
	require.NoError(t, err)
	_, err = w.p.GetBlob(w.ctx, ref(sa, c, "plain.vmgs"))
	assert.True(t, cloud.HasCode(err, cloud.CodeBlobNotFound), "%v", err)
}

// TestCopyRegrantsEndedDiskAccess: a disk SAS that stops working before
// the copy (its stored access policy gone, as at expiry) is granted
// again and the copy succeeds.
func TestCopyRegrantsEndedDiskAccess(t *testing.T) {
	w := newWorld(t, fakearm.Options{}, nil)
	sa, c := w.base("imgflowtest")
	v, img := w.version(sa, c)
	_, err := w.p.CreateDiskFromImageVersion(w.ctx, cloud.Disk{Name: "export", ResourceGroup: "rg", SourceImageVersionID: v.ID})
	require.NoError(t, err)
	sas, err := w.p.GrantDiskAccess(w.ctx, "rg", "export", time.Hour)
	require.NoError(t, err)

	cc := containerOfSAS(t, sas)
	acl, err := cc.GetAccessPolicy(context.Background(), nil)
	require.NoError(t, err)
	require.Len(t, acl.SignedIdentifiers, 1)
	ttl := time.Until(*acl.SignedIdentifiers[0].AccessPolicy.Expiry)
	assert.InDelta(t, time.Hour.Seconds(), ttl.Seconds(), 120, "a small disk gets the hour asked for")

	_, err = cc.SetAccessPolicy(context.Background(), nil) // the SAS ends
	require.NoError(t, err)
	dest := ref(sa, c, "export.vhd")
	b, err := w.p.CopyBlob(w.ctx, sas, dest, false)
	require.NoError(t, err)
	assert.Equal(t, int64(len(img.content)), b.Size)
	assert.True(t, equalBytes(img.content, w.read(dest)))
	assert.Condition(t, func() bool {
		for _, l := range w.logLines() {
			if strings.Contains(l, "granting it again") {
				return true
			}
		}
		return false
	}, "the re-grant is logged: %q", w.logLines())
	u, err := url.Parse(sas)
	require.NoError(t, err)
	for _, l := range w.logLines() {
		assert.NotContains(t, strings.ToLower(l), "sig=", l)
		assert.NotContains(t, l, u.Query().Get("sig"), l)
	}

	// Access revoked on purpose is not granted again.
	require.NoError(t, w.p.RevokeDiskAccess(w.ctx, "rg", "export"))
	_, err = w.p.CopyBlob(w.ctx, sas, ref(sa, c, "late.vhd"), false)
	require.Error(t, err)
}

// TestSigToVHDConfidentialVMWorkflow: sig_to_vhd with security_type
// ConfidentialVM on the Azure target returns the guest state blob it
// copied next to the VHD.
func TestSigToVHDConfidentialVMWorkflow(t *testing.T) {
	w := newWorld(t, fakearm.Options{}, nil)
	// Azurite serves the account already: it must exist in ARM too, or
	// the validation pass sees its name taken elsewhere.
	_, _, err := ensure.EnsureResourceGroup(w.ctx, w.p, cloud.ResourceGroup{Name: "imgflow-cvm", Location: loc})
	require.NoError(t, err)
	sa, _, err := ensure.EnsureStorageAccount(w.ctx, w.p, cloud.StorageAccount{Name: "imgflowtest", ResourceGroup: "imgflow-cvm", Location: loc})
	require.NoError(t, err)
	root := t.TempDir()
	img := makeVHD(t, 2<<20, 4096, 0)
	require.NoError(t, os.Rename(img.path, filepath.Join(root, "base.vhd")))
	require.NoError(t, os.WriteFile(filepath.Join(root, "cvm.star"), []byte(`
rg = resource_group("imgflow-cvm", location = "westeurope")
sa = storage_account("imgflowtest", resource_group = rg)
base = vhd_upload("//base.vhd", dest = blob(sa, container = "cvmbase", name = "base.vhd"))
g = gallery("imgflow_cvm", resource_group = rg)
d = image_definition(g, name = "cvm", publisher = "imgflow", offer = "aks", sku = "cvm", hyper_v_generation = "V2",
                     features = {"SecurityType": "ConfidentialVMSupported"})
v = image_version(d, version = "1.0.0", source = vhd(base, storage_account = sa))
exported = sig_to_vhd(v, dest = blob(sa, container = "cvmexport", name = "cvm-1.0.0.vhd"), security_type = "ConfidentialVM")
output("vhd", exported.url)
output("guest_state", exported.guest_state.url)
`), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h := testharness.New(t, root, "azure-cvm")
	h.Info.Time = time.Now()
	res := h.Run(ctx, "//cvm.star", nil, interp.Target{Apply: w.p, Validate: overlay.New(w.p)})
	require.NoError(t, res.Err)
	outputs := map[string]string{}
	for _, o := range res.Outputs {
		outputs[o.Name] = starlarkString(o.Value)
	}
	assert.True(t, strings.HasSuffix(outputs["vhd"], "/cvmexport/cvm-1.0.0.vhd"), outputs["vhd"])
	assert.True(t, strings.HasSuffix(outputs["guest_state"], "/cvmexport/cvm-1.0.0.vmgs"), outputs["guest_state"])
	head, err := w.p.ReadBlob(w.ctx, ref(sa, "cvmexport", "cvm-1.0.0.vmgs"), 0, int64(len(fakearm.GuestStateHeader)))
	require.NoError(t, err)
	assert.Equal(t, fakearm.GuestStateHeader, string(head))
}
