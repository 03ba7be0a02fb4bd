package localsim

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/local"
	"github.com/imgflow/imgflow/packer"
)

func writeTemplate(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.json")
	require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
	return path
}

const vhdTemplate = `{
  "variables": {"sa": null, "rg": null, "size": "1", "token": "", "regions": "westeurope"},
  "sensitive-variables": ["token"],
  "builders": [{
    "type": "azure-arm", "os_type": "Linux", "location": "westeurope", "os_disk_size_gb": "{{user ` + "`size`" + `}}",
    "image_publisher": "Canonical", "image_offer": "ubuntu", "image_sku": "22_04-lts",
    "storage_account": "{{user ` + "`sa`" + `}}", "resource_group_name": "{{user ` + "`rg`" + `}}",
    "capture_container_name": "aks-vhds", "capture_name_prefix": "aks"
  }]
}`

func newCloud(t *testing.T) *local.Provider {
	t.Helper()
	p, err := local.NewMemory(local.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	ctx := context.Background()
	_, _, err = cloud.EnsureResourceGroup(ctx, p, cloud.ResourceGroup{Name: "rg", Location: "westeurope"})
	require.NoError(t, err)
	_, _, err = cloud.EnsureStorageAccount(ctx, p, cloud.StorageAccount{Name: "aksvhds", ResourceGroup: "rg", Location: "westeurope"})
	require.NoError(t, err)
	return p
}

func TestVHDModeUploadsAFixedVHDAndReusesIt(t *testing.T) {
	p := newCloud(t)
	tpl := writeTemplate(t, vhdTemplate)
	req := packer.BuildRequest{TemplatePath: tpl, Vars: map[string]string{"sa": "aksvhds", "rg": "rg", "token": "secret-1"}}
	b := New(p)
	res, outcome, err := b.BuildOutcome(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, cloud.Created, outcome)
	require.Len(t, res.Builds, 1)
	art := res.Builds[0].Artifacts[0]
	assert.Equal(t, packer.AzureARMBuilderID, art.BuilderID)
	assert.Equal(t, res.OSDiskVHDURL, art.ID)
	assert.Equal(t, "westeurope", art.Azure.StorageAccountLocation)
	assert.Regexp(t, `^https://aksvhds\.blob\.core\.windows\.net/system/Microsoft\.Compute/Images/aks-vhds/aks-osDisk\.[0-9a-f-]{36}\.vhd$`, res.OSDiskVHDURL)
	assert.Empty(t, res.ManagedImageID)

	// Same inputs, another secret value: the same build.
	req.Vars["token"] = "secret-2"
	again, outcome, err := b.BuildOutcome(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, cloud.Exists, outcome)
	assert.Equal(t, res.OSDiskVHDURL, again.OSDiskVHDURL)

	// Other inputs: another VHD.
	req.Vars["regions"] = "eastus"
	other, outcome, err := b.BuildOutcome(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, cloud.Created, outcome)
	assert.NotEqual(t, res.OSDiskVHDURL, other.OSDiskVHDURL)
}

func TestIdentityCoversStagedFilesNotTheirDirectory(t *testing.T) {
	tpl := writeTemplate(t, vhdTemplate)
	stage := func(content string) string {
		dir := t.TempDir()
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "home", "packer"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "home", "packer", "x.sh"), []byte(content), 0o744))
		return dir
	}
	id := func(dir string) string {
		p, err := prepare(packer.BuildRequest{TemplatePath: tpl, Vars: map[string]string{"sa": "a", "rg": "b", FilesDirVar: dir}})
		require.NoError(t, err)
		return p.identity("azure-arm").String()
	}
	assert.Equal(t, id(stage("one")), id(stage("one")), "another temporary directory, the same files")
	assert.NotEqual(t, id(stage("one")), id(stage("two")), "other file content")
}

func TestConfigRulesFollowPacker(t *testing.T) {
	base := map[string]any{"type": "azure-arm", "os_type": "Linux", "location": "westeurope"}
	market := map[string]any{"image_publisher": "p", "image_offer": "o", "image_sku": "s"}
	vhdOut := map[string]any{"storage_account": "sa", "resource_group_name": "rg", "capture_container_name": "c", "capture_name_prefix": "p"}
	managed := map[string]any{"managed_image_name": "img", "managed_image_resource_group_name": "rg"}
	sigSrc := map[string]any{"shared_image_gallery": map[string]any{"resource_group": "rg", "gallery_name": "g", "image_name": "i", "image_version": "1.0.0"}}
	dest := map[string]any{"shared_image_gallery_destination": map[string]any{"resource_group": "rg", "gallery_name": "g", "image_name": "i", "image_version": "1.0.1"}}
	specializedDest := map[string]any{"shared_image_gallery_destination": map[string]any{"resource_group": "rg", "gallery_name": "g", "image_name": "i", "image_version": "1.0.1",
		"specialized": true, "confidential_vm_image_encryption_type": "EncryptedVMGuestStateOnlyWithPmk"}}
	cvm := map[string]any{"security_type": "ConfidentialVM", "security_encryption_type": "VMGuestStateOnly", "secure_boot_enabled": true, "vtpm_enabled": true}
	merge := func(parts ...map[string]any) map[string]any {
		out := map[string]any{}
		for _, p := range parts {
			for k, v := range p {
				out[k] = v
			}
		}
		return out
	}
	for name, tc := range map[string]struct {
		cfg  map[string]any
		want string
	}{
		"marketplace VHD":         {merge(base, market, vhdOut), ""},
		"marketplace SIG":         {merge(base, market, managed, dest), ""},
		"gallery source SIG":      {merge(base, sigSrc, managed, dest), ""},
		"image_url managed":       {merge(base, map[string]any{"image_url": "https://a.blob.core.windows.net/c/x.vhd"}, managed), "A managed image must be created from a managed image"},
		"gallery source VHD":      {merge(base, sigSrc, vhdOut), "VHD Target [capture_container_name] is not supported when using Shared Image Gallery as source"},
		"gallery dest in VHD":     {merge(base, market, vhdOut, dest), "shared_image_gallery_destination with a VHD output"},
		"straight to the gallery": {merge(base, market, dest), ""},
		"cvm straight to gallery": {merge(base, market, cvm, specializedDest), ""},
		"cvm managed image":       {merge(base, market, managed, cvm, specializedDest), `security_type of "ConfidentialVM" cannot build a VHD or a managed image`},
		"cvm VHD":                 {merge(base, market, vhdOut, cvm), `security_type of "ConfidentialVM" cannot build a VHD or a managed image`},
		"specialized managed":     {merge(base, market, managed, specializedDest), "a managed image (managed_image_name, managed_image_resource_group_name) can not be specialized"},
		"secure boot managed":     {merge(base, market, managed, dest, map[string]any{"secure_boot_enabled": true}), "can not set secure_boot_enabled or vtpm_enabled"},
		"encryption without cvm":  {merge(base, market, dest, map[string]any{"security_encryption_type": "VMGuestStateOnly"}), "security_encryption_type must be unset"},
		"bad security type":       {merge(base, market, dest, map[string]any{"security_type": "Confidential"}), `security_type "Confidential" must be TrustedLaunch or ConfidentialVM`},
		"cvm encryption mismatch": {merge(base, market, cvm, map[string]any{"shared_image_gallery_destination": map[string]any{"resource_group": "rg", "gallery_name": "g", "image_name": "i", "image_version": "1.0.1", "specialized": true, "confidential_vm_image_encryption_type": "EncryptedWithCmk"}}), `needs shared_image_gallery_destination.confidential_vm_image_encryption_type "EncryptedVMGuestStateOnlyWithPmk"`},
		"no source":               {merge(base, managed), "specify exactly one source"},
		"two sources":             {merge(base, market, sigSrc, managed), "specify exactly one source"},
		"two outputs":             {merge(base, market, vhdOut, managed), "not both"},
		"no output":               {merge(base, market), "no output"},
		"no os_type":              {merge(market, vhdOut, map[string]any{"type": "azure-arm"}), "an os_type must be specified"},
		"bad version":             {merge(base, market, managed, map[string]any{"shared_image_gallery_destination": map[string]any{"resource_group": "rg", "gallery_name": "g", "image_name": "i", "image_version": "1.2"}}), "image_version"},
		"bad disk size":           {merge(base, market, vhdOut, map[string]any{"os_disk_size_gb": "thirty"}), `os_disk_size_gb is "thirty", not a whole number`},
		"bad exclude_from_latest": {merge(base, market, managed, dest, map[string]any{"shared_gallery_image_version_exclude_from_latest": "yes"}), "not true or false"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := parseConfig("azure-arm", tc.cfg)
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}

	// packer lifts a string to a one-element list: "a,b" is ONE region.
	c, err := parseConfig("b", merge(base, market, managed, map[string]any{"shared_image_gallery_destination": map[string]any{
		"resource_group": "rg", "gallery_name": "g", "image_name": "i", "image_version": "1.0.1", "replication_regions": "westeurope,eastus"}}))
	require.NoError(t, err)
	assert.Equal(t, []string{"westeurope,eastus"}, c.regions)
}

func TestTheArtifactsTemplatesDefaultTo30GiB(t *testing.T) {
	for _, name := range []string{"vhd-marketplace.json", "sig-marketplace.json"} {
		tpl, err := packer.LoadTemplate("../../artifacts/packer/" + name)
		require.NoError(t, err)
		values := map[string]string{}
		for _, v := range tpl.Declared() {
			if v.Required {
				values[v.Name] = "x"
			}
		}
		values["sig_image_version"] = "1.0.0"
		rendered, err := tpl.Render(values, nil)
		require.NoError(t, err)
		c, err := parseConfig("azure-arm", rendered["azure-arm"].(map[string]any))
		require.NoError(t, err, name)
		s := &simulation{cfg: c}
		assert.Equal(t, int64(30<<30), s.diskSize(), name)
	}
}

func TestOnlyAzureArmBuildsAreSimulated(t *testing.T) {
	p := newCloud(t)
	_, err := New(p).Build(context.Background(), packer.BuildRequest{TemplatePath: "../../testdata/packer/null-file.json", Vars: map[string]string{"outdir": "/tmp", "sleep": "0"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "build nullb is of type null: the local target simulates only azure-arm builds")

	_, err = New(p).Build(context.Background(), packer.BuildRequest{TemplatePath: writeTemplate(t, vhdTemplate), Vars: map[string]string{"sa": "aksvhds", "rg": "rg"}, Only: []string{"nope"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `-only "nope" matches no builder`)

	_, err = New(p).Build(context.Background(), packer.BuildRequest{TemplatePath: writeTemplate(t, vhdTemplate)})
	var mv *packer.MissingVariablesError
	require.ErrorAs(t, err, &mv)
	assert.Equal(t, []string{"rg", "sa"}, mv.Names())
}

func TestTheCaptureAccountMustBeInTheBuildLocation(t *testing.T) {
	p := newCloud(t)
	body := strings.Replace(vhdTemplate, `"location": "westeurope"`, `"location": "East US"`, 1)
	_, err := New(p).Build(context.Background(), packer.BuildRequest{TemplatePath: writeTemplate(t, body), Vars: map[string]string{"sa": "aksvhds", "rg": "rg"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the storage account is located in westeurope, but the build will take place in East US")
}

func TestAMissingCaptureAccountFailsLikeAzure(t *testing.T) {
	p := newCloud(t)
	_, err := New(p).Build(context.Background(), packer.BuildRequest{TemplatePath: writeTemplate(t, vhdTemplate), Vars: map[string]string{"sa": "nosuch", "rg": "rg"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "storage_account nosuch in resource group rg")
	assert.True(t, strings.Contains(err.Error(), "ResourceNotFound") || cloud.IsNotFound(err), err.Error())
}
