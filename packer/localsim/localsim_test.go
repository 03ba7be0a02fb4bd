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
	"github.com/imgflow/imgflow/cloud/ensure"
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
	_, _, err = ensure.EnsureResourceGroup(ctx, p, cloud.ResourceGroup{Name: "rg", Location: "westeurope"})
	require.NoError(t, err)
	_, _, err = ensure.EnsureStorageAccount(ctx, p, cloud.StorageAccount{Name: "aksvhds", ResourceGroup: "rg", Location: "westeurope"})
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
		p, err := prepare(packer.BuildRequest{TemplatePath: tpl, Vars: map[string]string{"sa": "a", "rg": "b", packer.FilesDirVar: dir}}, nil)
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
	// image-builder's packer.json renders its source block to all "" (or {})
	// for a marketplace build: packer's source count ignores it.
	emptySigSrc := map[string]any{"shared_image_gallery": map[string]any{"gallery_name": "", "image_name": "", "image_version": "", "resource_group": "", "subscription": "", "community_gallery_image_id": ""}}
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
		"empty gallery block":     {merge(base, market, managed, dest, emptySigSrc), ""},
		"only an empty gallery":   {merge(base, managed, emptySigSrc), "specify exactly one source"},
		"community gallery":       {merge(base, managed, map[string]any{"shared_image_gallery": map[string]any{"community_gallery_image_id": "/CommunityGalleries/flatcar-0000/Images/flatcar-stable-amd64/Versions/4152.2.3"}}), "the local target cannot read a shared gallery"},
		"no location":             {merge(base, market, vhdOut, map[string]any{"location": ""}), `location is "": specify either a location to build in or an existing build_resource_group_name`},
		"location and build rg":   {merge(base, market, managed, map[string]any{"build_resource_group_name": "rg"}), "location and build_resource_group_name are both set"},
		"build rg, no location":   {merge(base, market, managed, map[string]any{"location": "", "build_resource_group_name": "rg"}), ""},
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
		"no os_type":              {merge(market, vhdOut, map[string]any{"type": "azure-arm", "location": "westeurope"}), "an os_type must be specified"},
		"bad version":             {merge(base, market, managed, map[string]any{"shared_image_gallery_destination": map[string]any{"resource_group": "rg", "gallery_name": "g", "image_name": "i", "image_version": "1.2"}}), "image_version"},
		"bad disk size":           {merge(base, market, vhdOut, map[string]any{"os_disk_size_gb": "thirty"}), `os_disk_size_gb is "thirty", not a whole number`},
		"bad exclude_from_latest": {merge(base, market, managed, dest, map[string]any{"shared_gallery_image_version_exclude_from_latest": "yes"}), "not true or false"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := parseConfig("azure-arm", tc.cfg, nil)
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}

	c, err := parseConfig("b", merge(base, market, managed, map[string]any{"shared_image_gallery": map[string]any{}}), nil)
	require.NoError(t, err, "an empty block is no source")
	assert.Nil(t, c.sigSource)
}

func TestReplicationRegionsFollowPacker(t *testing.T) {
	cfg := func(regions any) map[string]any {
		return map[string]any{"type": "azure-arm", "os_type": "Linux", "location": "westeurope",
			"image_publisher": "p", "image_offer": "o", "image_sku": "s", "managed_image_name": "img", "managed_image_resource_group_name": "rg",
			"shared_image_gallery_destination": map[string]any{"resource_group": "rg", "gallery_name": "g", "image_name": "i", "image_version": "1.0.1", "replication_regions": regions}}
	}
	for _, tc := range []struct {
		regions any
		want    []string
	}{
		// packer's decode hook splits a string on commas (image-builder's
		// azure-sig.json, Flatcar's override); regions are normalised.
		{"westeurope,eastus,eastus2", []string{"westeurope", "eastus", "eastus2"}},
		{"West Europe, East US", []string{"westeurope", "eastus"}},
		{[]any{"westeurope", "East US 2"}, []string{"westeurope", "eastus2"}},
		{"", nil},
	} {
		c, err := parseConfig("b", cfg(tc.regions), nil)
		require.NoError(t, err, "%v", tc.regions)
		assert.Equal(t, tc.want, c.regions, "%v", tc.regions)
	}

	_, err := parseConfig("b", cfg("westeurope,,eastus"), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `b.shared_image_gallery_destination.replication_regions "westeurope,,eastus" has an empty region at position 2`)

	// AgentBaker: ["{{user `location`}}"], location from {{env `PACKER_BUILD_LOCATION`}}.
	c := cfg([]any{""})
	c["location"] = ""
	_, err = parseConfig("b", c, map[string][]string{
		"location": {"PACKER_BUILD_LOCATION"}, "shared_image_gallery_destination.replication_regions[0]": {"PACKER_BUILD_LOCATION"},
	})
	require.Error(t, err)
	msg := err.Error()
	assert.Contains(t, msg, `b.location is "": specify either a location to build in or an existing build_resource_group_name (packer's rule) (made from {{env `+"`PACKER_BUILD_LOCATION`"+`}}, which packer renders as "" because packer_build's env does not set it or sets it to "": pass env = {"PACKER_BUILD_LOCATION": …})`)
	assert.Contains(t, msg, `b.shared_image_gallery_destination.replication_regions[0] is "": a region name is required (made from {{env `+"`PACKER_BUILD_LOCATION`"+`}}`)
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
		c, err := parseConfig("azure-arm", rendered["azure-arm"].(map[string]any), nil)
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

func TestEnvRendersTheBuildAndEntersItsIdentityUnlessSecret(t *testing.T) {
	body := strings.Replace(vhdTemplate, `"regions": "westeurope"`, `"regions": "westeurope", "where": "{{env `+"`PACKER_BUILD_LOCATION`"+`}}", "name": "{{env `+"`BUILD`"+`}}"`, 1)
	body = strings.Replace(body, `"location": "westeurope"`, `"location": "{{user `+"`where`"+`}}", "name": "vhd-{{user `+"`name`"+`}}"`, 1)
	tpl := writeTemplate(t, body)
	req := func(env map[string]string) packer.BuildRequest {
		return packer.BuildRequest{TemplatePath: tpl, Vars: map[string]string{"sa": "aksvhds", "rg": "rg"}, Only: []string{"vhd-gen2"},
			Env: env, SensitiveEnv: []string{"UA_TOKEN"}}
	}
	env := map[string]string{"PACKER_BUILD_LOCATION": "westeurope", "BUILD": "gen2", "UA_TOKEN": "t1"}
	p, err := prepare(req(env), nil)
	require.NoError(t, err, "-only matches the build name rendered from env")
	assert.Equal(t, []string{"vhd-gen2"}, p.builds)
	assert.Equal(t, "westeurope", p.rendered.Configs["vhd-gen2"]["location"])
	id := p.identity("vhd-gen2")

	env["UA_TOKEN"] = "t2"
	p, err = prepare(req(env), nil)
	require.NoError(t, err)
	assert.Equal(t, id, p.identity("vhd-gen2"), "a secret's value is not part of the build's identity")

	env["PACKER_BUILD_LOCATION"] = "West Europe"
	p, err = prepare(req(env), nil)
	require.NoError(t, err)
	assert.NotEqual(t, id, p.identity("vhd-gen2"), "another environment, another build")

	t.Setenv("BUILD", "gen2")
	t.Setenv("PACKER_BUILD_LOCATION", "westeurope")
	_, err = prepare(req(map[string]string{}), nil)
	require.Error(t, err, "imgflow's own environment is not the build's")
	assert.Contains(t, err.Error(), `-only "vhd-gen2" matches no builder (builders: vhd-)`)

	_, err = New(newCloud(t)).Build(context.Background(), packer.BuildRequest{TemplatePath: tpl, Vars: map[string]string{"sa": "aksvhds", "rg": "rg"}, Env: map[string]string{"BUILD": "x"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `vhd-x.location is "": specify either a location`)
	assert.Contains(t, err.Error(), `pass env = {"PACKER_BUILD_LOCATION": …}`)
}

func TestAFailedCheckNamesTheUnsetEnvBehindEmptySettings(t *testing.T) {
	cfg := map[string]any{"type": "azure-arm", "os_type": "Linux", "location": "westeurope",
		"image_publisher": "", "image_offer": "ubuntu-24_04-lts", "image_sku": "server",
		"managed_image_name": "img", "managed_image_resource_group_name": "rg"}
	_, err := parseConfig("b", cfg, map[string][]string{"image_publisher": {"IMG_PUBLISHER"}, "azure_tags.branch": {"BRANCH"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "a marketplace source needs image_publisher, image_offer and image_sku\n"+
		"(rendered from environment variables packer_build's env does not set or sets to \"\", which packer renders as \"\": "+
		"azure_tags.branch from {{env `BRANCH`}}; image_publisher from {{env `IMG_PUBLISHER`}}; pass them in env = {…})")

	_, err = parseConfig("b", cfg, nil)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "environment variables")
}
