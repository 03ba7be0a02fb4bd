package packer

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const cvmTemplate = "../testdata/packer/hcl/cvm-sig.pkr.hcl"

func parseHCL(t *testing.T, src string) *Template {
	t.Helper()
	tpl, err := ParseHCL2Template([]byte(src), "test.pkr.hcl")
	require.NoError(t, err)
	return tpl
}

func TestLoadHCL2TemplateCVM(t *testing.T) {
	tpl, err := LoadTemplate(cvmTemplate)
	require.NoError(t, err)

	assert.True(t, tpl.IsHCL2())
	assert.True(t, filepath.IsAbs(tpl.Path))
	assert.Equal(t, map[string]Plugin{"azure": {Source: "github.com/hashicorp/azure", Version: ">= 2.5.0"}}, tpl.RequiredPlugins)
	assert.Equal(t, []string{"client_secret"}, tpl.SensitiveVariables)

	assert.Equal(t, Variable{Name: "subscription_id", Required: true}, tpl.Variables["subscription_id"])
	assert.Equal(t, Variable{Name: "client_secret", Sensitive: true}, tpl.Variables["client_secret"])
	assert.Equal(t, Variable{Name: "client_id", Default: `env("AZURE_CLIENT_ID")`}, tpl.Variables["client_id"], "a default that calls env() is shown as written")
	assert.Equal(t, Variable{Name: "os_disk_size_gb", Default: "30"}, tpl.Variables["os_disk_size_gb"])
	assert.Equal(t, Variable{Name: "replication_regions", Default: `["westus2","eastus"]`}, tpl.Variables["replication_regions"])

	require.Len(t, tpl.Builders, 1)
	b := tpl.Builders[0]
	assert.Equal(t, "azure-arm", b.Type)
	assert.Equal(t, "cvm.azure-arm.cvm", b.Name, "a named build block prefixes its name, as packer 1.9.5 does")
	assert.Equal(t, "ConfidentialVM", b.Config["security_type"])
	assert.Equal(t, true, b.Config["skip_create_image"])
	assert.Equal(t, "DiskWithVMGuestState", b.Config["security_encryption_type"])
	assert.NotContains(t, b.Config, "confidential_vm_image_encryption_type", "a destination setting, not the builder's")
	assert.Equal(t, "var.location", b.Config["location"], "unevaluated until Render")
	dest, ok := b.Config["shared_image_gallery_destination"].(map[string]any)
	require.True(t, ok, "a nested block is an object")
	assert.Equal(t, true, dest["specialized"])
	assert.Equal(t, "EncryptedWithPmk", dest["confidential_vm_image_encryption_type"])

	require.Len(t, tpl.Provisioners, 1)
	assert.Equal(t, "shell", tpl.Provisioners[0]["type"])
	assert.Equal(t, "sudo -E sh '{{ .Path }}'", tpl.Provisioners[0]["execute_command"])
	require.Len(t, tpl.PostProcessors, 1)
	assert.Equal(t, map[string]any{"type": "manifest", "output": "manifest.json"}, tpl.PostProcessors[0])
}

func TestRenderHCL2CVM(t *testing.T) {
	tpl, err := LoadTemplate(cvmTemplate)
	require.NoError(t, err)
	values := map[string]string{
		"subscription_id":     "00000000-0000-0000-0000-000000000000",
		"sig_image_version":   "1.2.3",
		"os_disk_size_gb":     "64",
		"replication_regions": `["westeurope", "northeurope"]`,
		"tags":                `{"team": "node"}`,
	}
	builds, err := tpl.Render(values, map[string]string{"AZURE_CLIENT_ID": "app-id"})
	require.NoError(t, err)
	cfg := builds["cvm.azure-arm.cvm"].(map[string]any)

	assert.Equal(t, "app-id", cfg["client_id"], "env() in a default reads the environment")
	assert.Equal(t, "westus2", cfg["location"])
	assert.Equal(t, float64(64), cfg["os_disk_size_gb"], "a number variable renders as a JSON number")
	assert.Equal(t, "azure-arm", cfg["type"])
	assert.Equal(t, "cvm.azure-arm.cvm", cfg["name"])
	assert.Equal(t, map[string]any{"createdBy": "imgflow", "os": "ubuntu2204-cvm", "team": "node"}, cfg["azure_tags"], "locals refer to other locals and variables")
	assert.Equal(t, map[string]any{
		"subscription":                          "00000000-0000-0000-0000-000000000000",
		"resource_group":                        "aks-cvm",
		"gallery_name":                          "aks_cvm_gallery",
		"image_name":                            "ubuntu2204-cvm",
		"image_version":                         "1.2.3",
		"replication_regions":                   []any{"westeurope", "northeurope"},
		"specialized":                           true,
		"confidential_vm_image_encryption_type": "EncryptedWithPmk",
	}, cfg["shared_image_gallery_destination"])
	assert.Equal(t, `"imgflow-${source.name}-${local.build_stamp}"`, cfg["temp_resource_group_name"],
		"what depends on timestamp() is left as written, like {{timestamp}} in JSON")
	assert.Equal(t, "", cfg["client_secret"])
}

func TestRenderHCL2Functions(t *testing.T) {
	tpl := parseHCL(t, `
variable "csv" { default = "a,b,c" }
variable "flag" {
  type    = bool
  default = false
}
variable "nothing" {
  type    = string
  default = null
}
locals {
  parts = split(",", var.csv)
}
source "azure-arm" "x" {
  joined    = join("-", concat(local.parts, ["d"]))
  up        = upper(format("%s/%d", var.csv, length(local.parts)))
  replaced  = replace("a.b.c", ".", "_")
  regex     = replace("v1.2.3", "/[0-9]/", "N")
  first     = coalesce(var.nothing, "fallback")
  found     = contains(local.parts, "b")
  looked_up = lookup({ a = "1" }, "b", "none")
  trimmed   = trimspace("  x  ")
  date      = formatdate("YYYY-MM-DD", "2026-12-03T09:00:00Z")
  flag      = var.flag
  null_attr = var.nothing
  name_type = "${source.type}/${source.name}"
  root      = path.root
}
build { sources = ["source.azure-arm.x"] }
`)
	builds, err := tpl.Render(map[string]string{"flag": "true"}, nil)
	require.NoError(t, err)
	cfg := builds["azure-arm.x"].(map[string]any)
	assert.Equal(t, "a-b-c-d", cfg["joined"])
	assert.Equal(t, "A,B,C/3", cfg["up"])
	assert.Equal(t, "a_b_c", cfg["replaced"])
	assert.Equal(t, "v1.2.3", cfg["regex"], "packer 1.9.5's replace is literal, /…/ included (measured)")
	assert.Equal(t, "fallback", cfg["first"])
	assert.Equal(t, true, cfg["found"])
	assert.Equal(t, "none", cfg["looked_up"])
	assert.Equal(t, "x", cfg["trimmed"])
	assert.Equal(t, "2026-12-03", cfg["date"])
	assert.Equal(t, true, cfg["flag"], `"true" converts to the bool variable`)
	assert.NotContains(t, cfg, "null_attr", "null means unset in HCL2")
	assert.Equal(t, "azure-arm/x", cfg["name_type"])
	assert.Equal(t, "path.root", cfg["root"], "no path: path.root is unknown")
}

func TestHCL2BuildNamesAndOverrides(t *testing.T) {
	tpl := parseHCL(t, `
source "null" "a" { communicator = "none" }
source "null" "b" { communicator = "none" }
build {
  name    = "both"
  sources = ["source.null.a", "source.null.b"]
}
build {
  sources = ["source.null.a"]
  source "source.null.b" {
    name         = "b2"
    communicator = "ssh"
  }
}
`)
	assert.Equal(t, []string{"both.null.a", "both.null.b", "null.a", "null.b2"}, tpl.BuilderNames())
	builds, err := tpl.Render(nil, nil)
	require.NoError(t, err)
	assert.Equal(t, "ssh", builds["null.b2"].(map[string]any)["communicator"], "a build-level source block overrides the source's attributes")
	assert.Equal(t, "none", builds["both.null.b"].(map[string]any)["communicator"])
}

func TestHCL2RepeatedBlocksAreLists(t *testing.T) {
	tpl := parseHCL(t, `
source "azure-arm" "x" {
  disk_additional_size = [32]
  spot { eviction_policy = "Delete" }
  user_data_file { path = "a" }
  user_data_file { path = "b" }
}
build { sources = ["source.azure-arm.x"] }
`)
	builds, err := tpl.Render(nil, nil)
	require.NoError(t, err)
	cfg := builds["azure-arm.x"].(map[string]any)
	assert.Equal(t, map[string]any{"eviction_policy": "Delete"}, cfg["spot"])
	assert.Equal(t, []any{map[string]any{"path": "a"}, map[string]any{"path": "b"}}, cfg["user_data_file"])
	assert.Equal(t, []any{float64(32)}, cfg["disk_additional_size"])
}

func TestParseHCL2TemplateErrors(t *testing.T) {
	for name, tc := range map[string]struct{ src, want string }{
		"syntax":            {`source "null" "a" {`, "test.pkr.hcl:1"},
		"no build":          {`source "null" "a" {}`, "no build block"},
		"unknown source":    {"source \"null\" \"a\" {}\nbuild { sources = [\"source.null.b\"] }", `test.pkr.hcl:2,20-35: Unknown source; "source.null.b" is not a source of this template (sources: source.null.a)`},
		"duplicate build":   {"source \"null\" \"a\" {}\nbuild { sources = [\"source.null.a\"] }\nbuild { sources = [\"source.null.a\"] }", `Duplicate build; build "null.a" is also defined at test.pkr.hcl:2`},
		"bad type":          {"variable \"x\" { type = lisst(string) }\nsource \"null\" \"a\" {}\nbuild { sources = [\"source.null.a\"] }", "test.pkr.hcl:1"},
		"plugin no source":  {"packer {\n required_plugins {\n  azure = { version = \">= 2\" }\n }\n}\nsource \"null\" \"a\" {}\nbuild { sources = [\"source.null.a\"] }", `test.pkr.hcl:3,11-31: Missing plugin source; required_plugins azure needs a source`},
		"duplicate var":     {"variable \"x\" {}\nvariable \"x\" {}\nsource \"null\" \"a\" {}\nbuild { sources = [\"source.null.a\"] }", `Duplicate variable`},
		"top-level attr":    {"x = 1\nsource \"null\" \"a\" {}\nbuild { sources = [\"source.null.a\"] }", `test.pkr.hcl:1,1-2: Unexpected attribute`},
		"data source":       {"data \"amazon-ami\" \"x\" {}\nsource \"null\" \"a\" {}\nbuild { sources = [\"source.null.a\"] }", `Unsupported data source`},
		"build without src": {"source \"null\" \"a\" {}\nbuild { name = \"x\" }", `Build without sources`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseHCL2Template([]byte(tc.src), "test.pkr.hcl")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	_, err := LoadTemplate(filepath.Join(t.TempDir(), "missing.pkr.hcl"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestRenderHCL2LocalsCycle(t *testing.T) {
	tpl := parseHCL(t, `
locals {
  a = local.b
  b = local.a
}
source "null" "a" { x = local.a }
build { sources = ["source.null.a"] }
`)
	_, err := tpl.Render(nil, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "locals a, b refer to each other in a cycle")
}
