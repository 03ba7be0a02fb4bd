package workflows

import (
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.starlark.net/starlark"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/cloud/local"
	"github.com/imgflow/imgflow/cloud/overlay"
	"github.com/imgflow/imgflow/internal/testharness"
	"github.com/imgflow/imgflow/interp"
)

// linuxCell is one SKU of today's AKS matrix (AgentBaker's release jobs)
// that workflows/linux.star builds.
type linuxCell struct {
	os, osVersion, arch, generation string
	features                        []string
	// Expected: the SKU name, the definition, and how packer publishes.
	sku, image, template string
	osState, archName    string
	defFeatures          map[string]string
	direct               bool
	imgSKU               string // marketplace image SKU
}

const linuxMatrixUATokenEnv = "IMGFLOW_SECRET_UA_TOKEN"

var nvme = map[string]string{"DiskControllerTypes": "SCSI,NVMe"}
var nvmeTL = map[string]string{"DiskControllerTypes": "SCSI,NVMe", "SecurityType": "TrustedLaunch"}
var cvmFeatures = map[string]string{"SecurityType": "ConfidentialVM"}

// linuxMatrix are the cells: Ubuntu 22.04 and 24.04 and Azure Linux 3.0 ×
// gen1/gen2/arm64 × the features AgentBaker builds them with.
var linuxMatrix = []linuxCell{
	{os: "Ubuntu", osVersion: "22.04", arch: "amd64", generation: "V1", sku: "2204containerd", image: "2204containerd", template: "aks-ubuntu.json", osState: "Generalized", archName: "x64", imgSKU: "22_04-lts"},
	{os: "Ubuntu", osVersion: "22.04", arch: "amd64", generation: "V1", features: []string{"fips"}, sku: "2204fipscontainerd", image: "2204fipscontainerd", template: "aks-ubuntu.json", osState: "Generalized", archName: "x64", imgSKU: "22_04-lts"},
	{os: "Ubuntu", osVersion: "22.04", arch: "amd64", generation: "V2", sku: "2204gen2containerd", image: "2204gen2containerd", template: "aks-ubuntu.json", osState: "Generalized", archName: "x64", defFeatures: nvme, imgSKU: "22_04-lts-gen2"},
	{os: "Ubuntu", osVersion: "22.04", arch: "amd64", generation: "V2", features: []string{"fips"}, sku: "2204gen2fipscontainerd", image: "2204gen2fipscontainerd", template: "aks-ubuntu.json", osState: "Generalized", archName: "x64", defFeatures: nvme, imgSKU: "22_04-lts-gen2"},
	{os: "Ubuntu", osVersion: "22.04", arch: "amd64", generation: "V2", features: []string{"fips", "tl"}, sku: "2204gen2fipsTLcontainerd", image: "2204gen2fipsTLcontainerd", template: "aks-ubuntu.json", osState: "Generalized", archName: "x64", defFeatures: nvmeTL, imgSKU: "22_04-lts-gen2"},
	{os: "Ubuntu", osVersion: "22.04", arch: "amd64", generation: "V2", features: []string{"tl"}, sku: "2204gen2TLcontainerd", image: "2204gen2TLcontainerd", template: "aks-ubuntu.json", osState: "Generalized", archName: "x64", defFeatures: nvmeTL, imgSKU: "22_04-lts-gen2"},
	{os: "Ubuntu", osVersion: "22.04", arch: "arm64", generation: "V2", sku: "2204gen2arm64containerd", image: "2204gen2arm64containerd", template: "aks-ubuntu-arm64.json", osState: "Generalized", archName: "Arm64", defFeatures: nvme, direct: true, imgSKU: "22_04-lts-arm64"},
	{os: "Ubuntu", osVersion: "24.04", arch: "amd64", generation: "V1", sku: "2404containerd", image: "2404containerd", template: "aks-ubuntu.json", osState: "Generalized", archName: "x64", imgSKU: "server-gen1"},
	{os: "Ubuntu", osVersion: "24.04", arch: "amd64", generation: "V2", sku: "2404gen2containerd", image: "2404gen2containerd", template: "aks-ubuntu.json", osState: "Generalized", archName: "x64", defFeatures: nvme, imgSKU: "server"},
	{os: "Ubuntu", osVersion: "24.04", arch: "amd64", generation: "V2", features: []string{"tl"}, sku: "2404gen2TLcontainerd", image: "2404gen2TLcontainerd", template: "aks-ubuntu.json", osState: "Generalized", archName: "x64", defFeatures: nvmeTL, imgSKU: "server"},
	{os: "Ubuntu", osVersion: "24.04", arch: "amd64", generation: "V2", features: []string{"cvm"}, sku: "2404gen2CVMcontainerd", image: "2404gen2CVMcontainerdSpecialized", template: "aks-ubuntu-cvm.pkr.hcl", osState: "Specialized", archName: "x64", defFeatures: cvmFeatures, direct: true, imgSKU: "cvm"},
	{os: "Ubuntu", osVersion: "24.04", arch: "arm64", generation: "V2", sku: "2404gen2arm64containerd", image: "2404gen2arm64containerd", template: "aks-ubuntu-arm64.json", osState: "Generalized", archName: "Arm64", defFeatures: nvme, direct: true, imgSKU: "server-arm64"},
	{os: "AzureLinux", osVersion: "3.0", arch: "amd64", generation: "V1", sku: "V3", image: "AzureLinuxV3", template: "aks-azurelinux.json", osState: "Generalized", archName: "x64", imgSKU: "azure-linux-3"},
	{os: "AzureLinux", osVersion: "3.0", arch: "amd64", generation: "V1", features: []string{"fips"}, sku: "V3fips", image: "AzureLinuxV3fips", template: "aks-azurelinux.json", osState: "Generalized", archName: "x64", imgSKU: "azure-linux-3"},
	{os: "AzureLinux", osVersion: "3.0", arch: "amd64", generation: "V2", sku: "V3gen2", image: "AzureLinuxV3gen2", template: "aks-azurelinux.json", osState: "Generalized", archName: "x64", defFeatures: nvme, imgSKU: "azure-linux-3-gen2"},
	{os: "AzureLinux", osVersion: "3.0", arch: "amd64", generation: "V2", features: []string{"fips"}, sku: "V3gen2fips", image: "AzureLinuxV3gen2fips", template: "aks-azurelinux.json", osState: "Generalized", archName: "x64", defFeatures: nvme, imgSKU: "azure-linux-3-gen2"},
	{os: "AzureLinux", osVersion: "3.0", arch: "amd64", generation: "V2", features: []string{"tl"}, sku: "V3gen2TL", image: "AzureLinuxV3gen2TL", template: "aks-azurelinux.json", osState: "Generalized", archName: "x64", defFeatures: nvmeTL, imgSKU: "azure-linux-3-gen2"},
	{os: "AzureLinux", osVersion: "3.0", arch: "amd64", generation: "V2", features: []string{"cvm"}, sku: "V3gen2CVM", image: "AzureLinuxV3gen2CVM", template: "aks-azurelinux-cvm.pkr.hcl", osState: "Specialized", archName: "x64", defFeatures: cvmFeatures, direct: true, imgSKU: "azure-linux-3-cvm"},
	{os: "AzureLinux", osVersion: "3.0", arch: "arm64", generation: "V2", sku: "V3gen2arm64", image: "AzureLinuxV3gen2arm64", template: "aks-azurelinux-arm64.json", osState: "Generalized", archName: "Arm64", defFeatures: nvme, direct: true, imgSKU: "azure-linux-3-arm64"},
	{os: "AzureLinux", osVersion: "3.0", arch: "arm64", generation: "V2", features: []string{"fips"}, sku: "V3gen2arm64fips", image: "AzureLinuxV3gen2arm64fips", template: "aks-azurelinux-arm64.json", osState: "Generalized", archName: "Arm64", defFeatures: nvme, direct: true, imgSKU: "azure-linux-3-arm64-gen2-fips"},
}

func (c linuxCell) name() string {
	parts := []string{strings.ToLower(c.os), strings.ReplaceAll(c.osVersion, ".", ""), map[string]string{"V1": "gen1", "V2": "gen2"}[c.generation]}
	if c.arch == "arm64" {
		parts[2] = "arm64"
	}
	parts = append(parts, c.features...)
	if len(c.features) == 0 {
		parts = append(parts, "plain")
	}
	return strings.Join(parts, "-")
}

func (c linuxCell) vars() map[string]starlark.Value {
	features := make([]any, len(c.features))
	for i, f := range c.features {
		features[i] = f
	}
	return map[string]starlark.Value{
		"os": starlark.String(c.os), "os_version": starlark.String(c.osVersion), "arch": starlark.String(c.arch),
		"generation": starlark.String(c.generation), "features": builtins.FromGo(features),
	}
}

func (c linuxCell) needsUAToken() bool {
	return c.os == "Ubuntu" && strings.Contains(strings.Join(c.features, ","), "fips")
}

func runLinux(t *testing.T, p *local.Provider, vars map[string]starlark.Value, plan bool) *interp.Result {
	t.Helper()
	h := testharness.New(t, "..", "plan")
	h.Info.Time = runTime
	cfg := h.Config(vars)
	cfg.Programs = &compiled
	if plan {
		return interp.Plan(context.Background(), "//workflows/linux.star", cfg, overlay.New(p))
	}
	return interp.Run(context.Background(), "//workflows/linux.star", cfg, testharness.Local(p))
}

// TestLinuxMatrixOnTheLocalTarget runs every cell of the matrix on the
// local target: the definition has AgentBaker's features, x64 builds go
// through a (temporary, deleted) managed image, Arm64 and CVM builds are
// published straight to the gallery with no managed image, FIPS reaches
// the build. Each cell's plan matches testdata/plans/linux/<cell>.plan.json
// (go test ./workflows/ -run TestLinuxMatrix -update rewrites them).
func TestLinuxMatrixOnTheLocalTarget(t *testing.T) {
	t.Setenv(linuxMatrixUATokenEnv, "matrix-ua-token")
	for _, c := range linuxMatrix {
		t.Run(c.name(), func(t *testing.T) {
			p, err := local.Open(t.TempDir(), local.Options{Now: func() time.Time { return runTime }, Rand: rand.New(rand.NewSource(1))})
			require.NoError(t, err)
			t.Cleanup(func() { p.Close() })

			planned := runLinux(t, p, c.vars(), true)
			require.NoError(t, planned.Err)
			got := planJSON(t, planned)
			golden := filepath.Join("..", "testdata", "plans", "linux", c.name()+".plan.json")
			if *updateGolden {
				require.NoError(t, os.WriteFile(golden, got, 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "no golden plan: run go test ./workflows/ -run TestLinuxMatrix -update")
			assert.Equal(t, string(want), string(got), "the plan of %s changed: review it, then go test ./workflows/ -run TestLinuxMatrix -update", c.name())
			assert.NotContains(t, string(got), "matrix-ua-token", "the secret never reaches a plan")

			res := runLinux(t, p, c.vars(), false)
			require.NoError(t, res.Err)
			out := outputMap(res)
			assert.Equal(t, c.sku, out["sku_name"])
			assert.Equal(t, c.archName, out["image_architecture"])

			def := findDefinition(p.Snapshot(), "aks-vhd-build", "PackerSigGalleryEastUS", c.image)
			require.NotNil(t, def, "definition %s", c.image)
			assert.Equal(t, []string{c.generation, c.archName, c.osState}, []string{def.HyperVGeneration, def.Architecture, def.OSState})
			assert.Equal(t, c.defFeatures, map[string]string(def.Features))
			require.Len(t, def.Versions, 1)

			var build *builtins.Step
			for _, s := range res.Steps {
				if s.Builtin == "packer_build" {
					build = s
				}
			}
			require.NotNil(t, build)
			if c.direct {
				assert.True(t, strings.HasPrefix(build.Summary, "version PackerSigGalleryEastUS/"+c.image+"/"), build.Summary)
			} else {
				assert.True(t, strings.HasPrefix(build.Summary, "managed image "+c.image+"-"), build.Summary)
			}
			for _, rg := range p.Snapshot().ResourceGroups {
				assert.Empty(t, rg.Images, "no managed image is left")
			}

			args := string(mustJSON(t, build.Args))
			assert.Contains(t, args, "//artifacts/packer/"+c.template)
			assert.Contains(t, args, `"img_sku":"`+c.imgSKU+`"`)
			fips := "false"
			if strings.Contains(strings.Join(c.features, ","), "fips") {
				fips = "true"
			}
			assert.Contains(t, args, `"enable_fips":"`+fips+`"`)
			vars, _ := build.Args["vars"].(map[string]any)
			if c.needsUAToken() {
				assert.Equal(t, "<secret ua_token>", vars["ua_token"])
			} else {
				assert.NotContains(t, vars, "ua_token")
			}
			assert.NotContains(t, args, "matrix-ua-token")
			assert.Equal(t, !c.direct, strings.Contains(args, "managed_image_resource_group_name"), "a straight-to-gallery build names no managed image")
		})
	}
}

// Ubuntu FIPS needs the Ubuntu Pro token: without it the run fails in the
// validation pass, saying how to pass it, and nothing is created.
func TestUbuntuFIPSWithoutTheUATokenChangesNothing(t *testing.T) {
	t.Setenv(linuxMatrixUATokenEnv, "")
	p := newPlanCloud(t)
	before := mustJSON(t, p.Snapshot())
	res := runLinux(t, p, linuxCell{os: "Ubuntu", osVersion: "22.04", arch: "amd64", generation: "V2", features: []string{"fips"}}.vars(), false)
	require.Error(t, res.Err)
	assert.Contains(t, res.Err.Error(), `secret "ua_token" is not set: export IMGFLOW_SECRET_UA_TOKEN=<value>`)
	assert.Contains(t, res.Err.Error(), "workflows/linux.star:")
	assert.Equal(t, before, mustJSON(t, p.Snapshot()))
}

// `imgflow plan workflows/linux.star --var arch=arm64` shows a build
// straight to the gallery; a managed-image template with an Arm64 source
// fails before any change, naming Azure's rule.
func TestArm64ManagedImageBuildIsRefusedBeforeAnyChange(t *testing.T) {
	h := testharness.New(t, "..", "arm64")
	h.Info.Time = runTime
	p := newPlanCloud(t)
	before := mustJSON(t, p.Snapshot())
	res := h.Run(context.Background(), "//testdata/build/arm64_managed_image.star", nil, testharness.Local(p))
	require.Error(t, res.Err)
	assert.Contains(t, res.Err.Error(), "Azure cannot capture a managed image from an Arm64 VM")
	assert.Contains(t, res.Err.Error(), "remove managed_image_name and managed_image_resource_group_name")
	assert.Contains(t, res.Err.Error(), "testdata/build/arm64_managed_image.star:")
	assert.Equal(t, before, mustJSON(t, p.Snapshot()), "refused in the validation pass")
}

// findDefinition finds a definition in a local state (whose maps are keyed
// by lower-cased names).
func findDefinition(st *local.State, rg, gallery, name string) *local.DefinitionState {
	for rgName, r := range st.ResourceGroups {
		if !strings.EqualFold(rgName, rg) {
			continue
		}
		for gName, g := range r.Galleries {
			if !strings.EqualFold(gName, gallery) {
				continue
			}
			for dName, d := range g.Definitions {
				if strings.EqualFold(dName, name) {
					return d
				}
			}
		}
	}
	return nil
}

// A build straight to the gallery survives a crash after every step: the
// resumed run finds what the crashed one made (the version packer
// published among them) and ends as an uninterrupted run.
func TestLinuxDirectGalleryBuildCrashAtEveryStepThenResume(t *testing.T) {
	crashAtEveryStepThenResume(t, "workflows/linux.star", stringVars(map[string]string{"os": "AzureLinux", "os_version": "3.0", "arch": "arm64"}))
}
