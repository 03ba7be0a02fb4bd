package localsim

import (
	"context"
	"encoding/json"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/ensure"
	"github.com/imgflow/imgflow/cloud/local"
	"github.com/imgflow/imgflow/packer"
)

// A JSON template and the HCL2 template a user would write for the same
// build: marketplace source, managed image, gallery version. Both must
// simulate to the same products.
const sigJSONTemplate = `{
  "variables": {"sub": null, "version": null, "size": "1", "regions": "westeurope", "token": ""},
  "sensitive-variables": ["token"],
  "builders": [{
    "type": "azure-arm", "name": "azure-arm.sig",
    "os_type": "Linux", "location": "westeurope", "os_disk_size_gb": "{{user ` + "`size`" + `}}",
    "image_publisher": "Canonical", "image_offer": "ubuntu", "image_sku": "22_04-lts-gen2",
    "managed_image_name": "ubuntu-{{user ` + "`version`" + `}}", "managed_image_resource_group_name": "rg",
    "shared_image_gallery_destination": {
      "subscription": "{{user ` + "`sub`" + `}}", "resource_group": "rg", "gallery_name": "gal",
      "image_name": "ubuntu", "image_version": "{{user ` + "`version`" + `}}",
      "replication_regions": ["westeurope", "northeurope"]
    },
    "azure_tags": {"createdBy": "imgflow", "version": "{{user ` + "`version`" + `}}"}
  }]
}`

const sigHCL2Template = `
packer {
  required_plugins {
    azure = {
      source  = "github.com/hashicorp/azure"
      version = ">= 2.5.0"
    }
  }
}

variable "sub" { type = string }
variable "version" { type = string }
variable "size" {
  type    = number
  default = 1
}
variable "regions" {
  type    = list(string)
  default = ["westeurope", "northeurope"]
}
variable "token" {
  type      = string
  default   = ""
  sensitive = true
}

locals {
  image = "ubuntu"
}

source "azure-arm" "sig" {
  os_type         = "Linux"
  location        = "westeurope"
  os_disk_size_gb = var.size
  image_publisher = "Canonical"
  image_offer     = "ubuntu"
  image_sku       = "22_04-lts-gen2"

  managed_image_name                = "${local.image}-${var.version}"
  managed_image_resource_group_name = "rg"

  shared_image_gallery_destination {
    subscription        = var.sub
    resource_group      = "rg"
    gallery_name        = "gal"
    image_name          = local.image
    image_version       = var.version
    replication_regions = var.regions
  }

  azure_tags = {
    createdBy = "imgflow"
    version   = var.version
  }
}

build {
  sources = ["source.azure-arm.sig"]
}
`

// newGalleryCloud is a cloud with a gallery image definition; its
// subscription and clock are the same on every call.
func newGalleryCloud(t *testing.T) *local.Provider {
	t.Helper()
	now := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	p, err := local.NewMemory(local.Options{Rand: rand.New(rand.NewSource(1)), Now: func() time.Time { return now }})
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	ctx := context.Background()
	_, _, err = ensure.EnsureResourceGroup(ctx, p, cloud.ResourceGroup{Name: "rg", Location: "westeurope"})
	require.NoError(t, err)
	_, _, err = ensure.EnsureGallery(ctx, p, cloud.Gallery{Name: "gal", ResourceGroup: "rg", Location: "westeurope"})
	require.NoError(t, err)
	_, _, err = ensure.EnsureImageDefinition(ctx, p, cloud.ImageDefinition{
		Name: "ubuntu", ResourceGroup: "rg", Gallery: "gal", Location: "westeurope",
		Publisher: "imgflow", Offer: "ubuntu", SKU: "2204", OSType: "Linux", OSState: "Generalized", HyperVGeneration: "V2", Architecture: "x64",
	}, now)
	require.NoError(t, err)
	return p
}

func writeNamed(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
	return path
}

// identityRE matches the names a simulation derives from the template's
// bytes (the staged OS disk and its account), which differ between two
// files that describe the same build.
var identityRE = regexp.MustCompile(`osDisk\.[0-9a-f-]{36}|pkr[0-9a-f]{16}`)

func TestHCL2TemplateSimulatesLikeTheJSONOne(t *testing.T) {
	run := func(path string) (string, string) {
		p := newGalleryCloud(t)
		res, outcome, err := New(p).BuildOutcome(context.Background(), packer.BuildRequest{
			TemplatePath: path,
			Vars:         map[string]string{"sub": p.SubscriptionID(), "version": "1.0.1", "token": "secret"},
			Sensitive:    []string{"token"},
		})
		require.NoError(t, err, path)
		assert.Equal(t, cloud.Created, outcome)
		resJSON, err := json.Marshal(res)
		require.NoError(t, err)
		state, err := json.Marshal(p.Snapshot())
		require.NoError(t, err)
		return identityRE.ReplaceAllString(string(resJSON), "X"), identityRE.ReplaceAllString(string(state), "X")
	}
	jsonRes, jsonState := run(writeNamed(t, "sig.json", sigJSONTemplate))
	hclRes, hclState := run(writeNamed(t, "sig.pkr.hcl", sigHCL2Template))

	assert.JSONEq(t, jsonRes, hclRes, "same artifacts, build names and IDs")
	assert.JSONEq(t, jsonState, hclState, "same resources")
	assert.Contains(t, hclRes, "/galleries/gal/images/ubuntu/versions/1.0.1")
	assert.Contains(t, hclState, `"ubuntu-1.0.1"`)
	assert.NotContains(t, hclState+hclRes, "secret")
}

func TestHCL2TemplateBuildIsReused(t *testing.T) {
	p := newGalleryCloud(t)
	req := packer.BuildRequest{TemplatePath: writeNamed(t, "sig.pkr.hcl", sigHCL2Template), Vars: map[string]string{"sub": p.SubscriptionID(), "version": "1.0.1"}}
	first, outcome, err := New(p).BuildOutcome(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, cloud.Created, outcome)
	again, outcome, err := New(p).BuildOutcome(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, cloud.Exists, outcome)
	assert.Equal(t, first, again)

	_, err = New(p).Build(context.Background(), packer.BuildRequest{TemplatePath: req.TemplatePath, Vars: map[string]string{"version": "1.0.2"}})
	var mv *packer.MissingVariablesError
	require.ErrorAs(t, err, &mv)
	assert.Equal(t, []string{"sub"}, mv.Names())
}
