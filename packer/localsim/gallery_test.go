package localsim

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/ensure"
	"github.com/imgflow/imgflow/cloud/local"
	"github.com/imgflow/imgflow/packer"
)

// galleryTemplate publishes a marketplace build to a gallery: straight
// (no managed_image_* keys) unless {{MANAGED}} adds them; {{EXTRA}} adds
// builder keys, {{DEST}} destination keys.
const galleryTemplate = `{
  "variables": {"sku": "22_04-lts-gen2", "image": null, "version": "1.0.0"},
  "builders": [{
    "type": "azure-arm", "os_type": "Linux", "location": "westeurope",
    "image_publisher": "Canonical", "image_offer": "ubuntu", "image_sku": "{{user ` + "`sku`" + `}}",
    {{MANAGED}}{{EXTRA}}
    "shared_image_gallery_destination": {
      {{DEST}}"resource_group": "rg", "gallery_name": "g", "image_name": "{{user ` + "`image`" + `}}",
      "image_version": "{{user ` + "`version`" + `}}", "replication_regions": ["westeurope", "northeurope"]
    }
  }]
}`

func galleryTpl(t *testing.T, managed bool, extra, dest string) string {
	t.Helper()
	m := ""
	if managed {
		m = `"managed_image_name": "img-{{user ` + "`version`" + `}}", "managed_image_resource_group_name": "rg",` + "\n"
	}
	r := strings.NewReplacer("{{MANAGED}}", m, "{{EXTRA}}", extra, "{{DEST}}", dest)
	return writeTemplate(t, r.Replace(galleryTemplate))
}

// newGallery adds gallery g to newCloud's and the definitions x64 (V2),
// arm64 (V2, Arm64) and cvm (Specialized, SecurityType ConfidentialVM).
func newGallery(t *testing.T) *local.Provider {
	t.Helper()
	p := newCloud(t)
	ctx := context.Background()
	_, _, err := ensure.EnsureGallery(ctx, p, cloud.Gallery{Name: "g", ResourceGroup: "rg", Location: "westeurope"})
	require.NoError(t, err)
	for _, d := range []cloud.ImageDefinition{
		{Name: "x64", OSState: cloud.OSStateGeneralized, Architecture: cloud.ArchX64},
		{Name: "arm64", OSState: cloud.OSStateGeneralized, Architecture: cloud.ArchArm64},
		{Name: "cvm", OSState: cloud.OSStateSpecialized, Architecture: cloud.ArchX64, Features: map[string]string{"SecurityType": "ConfidentialVM"}},
	} {
		d.ResourceGroup, d.Gallery, d.Location = "rg", "g", "westeurope"
		d.Publisher, d.Offer, d.SKU, d.OSType, d.HyperVGeneration = "p", "o", d.Name, cloud.OSTypeLinux, cloud.HyperVGenV2
		_, _, err := ensure.EnsureImageDefinition(ctx, p, d, time.Now())
		require.NoError(t, err)
	}
	return p
}

func TestStraightToTheGalleryLeavesNoManagedImage(t *testing.T) {
	p := newGallery(t)
	req := packer.BuildRequest{TemplatePath: galleryTpl(t, false, "", ""), Vars: map[string]string{"image": "arm64", "sku": "22_04-lts-arm64"}}
	res, outcome, err := New(p).BuildOutcome(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, cloud.Created, outcome)

	v, err := p.GetImageVersion(context.Background(), "rg", "g", "arm64", "1.0.0")
	require.NoError(t, err)
	assert.Equal(t, v.ID, res.GalleryImageVersionID)
	assert.Empty(t, res.ManagedImageID)
	assert.Empty(t, res.ResourceGroup)
	assert.Empty(t, res.OSDiskVHDURL)
	assert.Equal(t, []string{"westeurope", "northeurope"}, v.RegionNames())
	assert.Equal(t, int64(DefaultOSDiskGB<<30), v.SizeBytes)
	snap := p.Snapshot()
	assert.Empty(t, snap.ResourceGroups["rg"].Images, "no managed image to clean up")

	// azure plugin 1.4.0's String() of a gallery-only artifact; Id() is the version.
	art := res.Builds[0].Artifacts[0]
	assert.Equal(t, v.ID, art.ID)
	assert.Equal(t, "Azure.ResourceManagement.VMImage:\n\nOSType: Linux\n"+
		"ManagedImageSharedImageGalleryId: "+v.ID+"\n"+
		"SharedImageGalleryResourceGroup: rg\nSharedImageGalleryName: g\nSharedImageGalleryImageName: arm64\n"+
		"SharedImageGalleryImageVersion: 1.0.0\nSharedImageGalleryReplicatedRegions: westeurope, northeurope\n", art.String)
	assert.False(t, art.Azure.IsManagedImage())
	assert.Equal(t, "westeurope, northeurope", art.Azure.Extra["SharedImageGalleryReplicatedRegions"])

	// The staged OS disk is gone; a rerun finds the version.
	staging := snap.ResourceGroups["rg"].StorageAccounts[StagingAccount(p.SubscriptionID(), "rg")]
	require.NotNil(t, staging)
	assert.Empty(t, staging.Containers[captureContainer].Blobs)
	again, outcome, err := New(p).BuildOutcome(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, cloud.Exists, outcome)
	assert.Equal(t, res.GalleryImageVersionID, again.GalleryImageVersionID)
}

func TestConfidentialVMPublishesASpecializedVersion(t *testing.T) {
	p := newGallery(t)
	cvm := `"security_type": "ConfidentialVM", "security_encryption_type": "VMGuestStateOnly", "secure_boot_enabled": true, "vtpm_enabled": true,` + "\n"
	dest := `"specialized": true, "confidential_vm_image_encryption_type": "EncryptedVMGuestStateOnlyWithPmk",`
	res, err := New(p).Build(context.Background(), packer.BuildRequest{TemplatePath: galleryTpl(t, false, cvm, dest), Vars: map[string]string{"image": "cvm", "sku": "22_04-lts-cvm"}})
	require.NoError(t, err)
	assert.Contains(t, res.GalleryImageVersionID, "/images/cvm/versions/1.0.0")
	assert.Empty(t, res.ManagedImageID)
}

func TestTheSimulationRefusesWhatAzureRefusesBeforeAnyChange(t *testing.T) {
	cvm := `"security_type": "ConfidentialVM", "security_encryption_type": "VMGuestStateOnly",` + "\n"
	for name, tc := range map[string]struct {
		managed     bool
		extra, dest string
		vars        map[string]string
		want        []string
	}{
		"arm64 managed image": {managed: true, vars: map[string]string{"image": "arm64", "sku": "22_04-lts-arm64"},
			want: []string{"Azure cannot capture a managed image from an Arm64 VM", "publish straight to the gallery"}},
		"arm64 build into an x64 definition": {vars: map[string]string{"image": "x64", "sku": "server-arm64"},
			want: []string{"the build VM is Arm64, but gallery image definition x64 is x64"}},
		"x64 build into an Arm64 definition": {vars: map[string]string{"image": "arm64"},
			want: []string{"the build VM is x64, but gallery image definition arm64 is Arm64"}},
		"specialized build into a generalized definition": {dest: `"specialized": true,`, vars: map[string]string{"image": "x64"},
			want: []string{"publishes a specialized VM, but gallery image definition x64 is Generalized"}},
		"generalized CVM build into a specialized definition": {extra: cvm, vars: map[string]string{"image": "cvm", "sku": "22_04-lts-cvm"},
			want: []string{"publishes a generalized VM, but gallery image definition cvm is Specialized", "specialized = true"}},
		"CVM through a managed image": {managed: true, extra: cvm, vars: map[string]string{"image": "cvm", "sku": "22_04-lts-cvm"},
			want: []string{`security_type of "ConfidentialVM" cannot build a VHD or a managed image`}},
	} {
		t.Run(name, func(t *testing.T) {
			p := newGallery(t)
			before := p.Snapshot()
			_, err := New(p).Build(context.Background(), packer.BuildRequest{TemplatePath: galleryTpl(t, tc.managed, tc.extra, tc.dest), Vars: tc.vars})
			require.Error(t, err)
			for _, w := range tc.want {
				assert.ErrorContains(t, err, w)
			}
			assert.Equal(t, before, p.Snapshot(), "nothing may change")
		})
	}
}

func TestAnArm64GallerySourceIsArm64(t *testing.T) {
	p := newGallery(t)
	ctx := context.Background()
	_, err := New(p).Build(ctx, packer.BuildRequest{TemplatePath: galleryTpl(t, false, "", ""), Vars: map[string]string{"image": "arm64", "sku": "server-arm64"}})
	require.NoError(t, err)
	body := `{"builders": [{"type": "azure-arm", "os_type": "Linux", "location": "westeurope",
	  "shared_image_gallery": {"resource_group": "rg", "gallery_name": "g", "image_name": "arm64", "image_version": "1.0.0"},
	  "managed_image_name": "img", "managed_image_resource_group_name": "rg"}]}`
	_, err = New(p).Build(ctx, packer.BuildRequest{TemplatePath: writeTemplate(t, body)})
	assert.ErrorContains(t, err, "Azure cannot capture a managed image from an Arm64 VM")
}

func TestSkipCreateImagePublishesNothing(t *testing.T) {
	p := newGallery(t)
	before := p.Snapshot()
	res, err := New(p).Build(context.Background(), packer.BuildRequest{TemplatePath: galleryTpl(t, false, `"skip_create_image": true,`, ""), Vars: map[string]string{"image": "x64"}})
	require.NoError(t, err)
	require.Len(t, res.Builds, 1)
	assert.Empty(t, res.Builds[0].Artifacts)
	assert.Empty(t, res.GalleryImageVersionID)
	assert.Equal(t, before, p.Snapshot())

	// Nothing is captured, so no capture rule applies (an Arm64 managed image).
	res, err = New(p).Build(context.Background(), packer.BuildRequest{TemplatePath: galleryTpl(t, true, `"skip_create_image": true,`, ""), Vars: map[string]string{"image": "arm64", "sku": "server-arm64"}})
	require.NoError(t, err)
	assert.Empty(t, res.Builds[0].Artifacts)
	assert.Equal(t, before, p.Snapshot())
}

func TestAManagedImageBuildPrintsThePluginsGalleryLines(t *testing.T) {
	p := newGallery(t)
	res, err := New(p).Build(context.Background(), packer.BuildRequest{TemplatePath: galleryTpl(t, true, "", ""), Vars: map[string]string{"image": "x64"}})
	require.NoError(t, err)
	art := res.Builds[0].Artifacts[0]
	assert.Equal(t, res.ManagedImageID, art.ID)
	assert.Contains(t, art.String, "ManagedImageName: img-1.0.0\n")
	assert.Contains(t, art.String, "ManagedImageSharedImageGalleryId: "+res.GalleryImageVersionID+"\nSharedImageGalleryResourceGroup: rg\n")
}

func TestPackerRegionsFollowThePlugin(t *testing.T) {
	assert.Equal(t, []string{"West Europe", "eastus"}, packerRegions([]string{"West Europe", "eastus"}, "westeurope"), "kept as given")
	assert.Equal(t, []string{"eastus", "westeurope"}, packerRegions([]string{"East US"}, "West Europe"), "normalized, location appended")
}

// linux.star's templates: x64 through a managed image; Arm64 and CVM
// straight to the gallery, CVM as a specialized confidential VM; each
// forwards enable_fips to the build VM as ENABLE_FIPS.
func TestTheAKSTemplatesPublishAsAzureAllows(t *testing.T) {
	for name, want := range map[string]struct{ gallery, cvm bool }{
		"aks-ubuntu.json": {}, "aks-ubuntu-arm64.json": {gallery: true}, "aks-ubuntu-cvm.pkr.hcl": {gallery: true, cvm: true},
		"aks-azurelinux.json": {}, "aks-azurelinux-arm64.json": {gallery: true}, "aks-azurelinux-cvm.pkr.hcl": {gallery: true, cvm: true},
	} {
		t.Run(name, func(t *testing.T) {
			tpl, err := packer.LoadTemplate("../../artifacts/packer/" + name)
			require.NoError(t, err)
			values := map[string]string{"sig_image_version": "1.0.0", "img_sku": "sku"}
			for _, v := range tpl.Declared() {
				if v.Required && values[v.Name] == "" {
					values[v.Name] = "x"
				}
			}
			rendered, err := tpl.Render(values, nil)
			require.NoError(t, err)
			c, err := parseConfig("azure-arm", rendered[tpl.BuilderNames()[0]].(map[string]any), nil)
			require.NoError(t, err)
			assert.Equal(t, want.gallery, c.galleryMode(), "straight to the gallery")
			assert.Equal(t, !want.gallery, c.managedMode(), "through a managed image")
			assert.Equal(t, want.cvm, c.specialized)
			if want.cvm {
				assert.Equal(t, []any{"ConfidentialVM", "VMGuestStateOnly", "EncryptedVMGuestStateOnlyWithPmk"}, []any{c.securityType, c.securityEncryptionType, c.cvmEncryptionType})
			}
			forwards := false
			for _, p := range tpl.Provisioners {
				// JSON keeps the list; HCL2 keeps an expression's source.
				env := fmt.Sprint(p["environment_vars"])
				forwards = forwards || strings.Contains(env, "ENABLE_FIPS={{user `enable_fips`}}") || strings.Contains(env, "ENABLE_FIPS=${var.enable_fips}")
			}
			assert.True(t, forwards, "ENABLE_FIPS reaches the build VM")
			assert.Equal(t, "false", tpl.Variables["enable_fips"].Default)
		})
	}
}
