package packer

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(body), 0o600))
	return path
}

func TestHCL2VarFilesTakeTypedValues(t *testing.T) {
	tpl, err := LoadTemplate(cvmTemplate)
	require.NoError(t, err)
	want := map[string]string{
		"sig_image_version": "1.2.3", "os_disk_size_gb": "64", "replication_regions": `["westeurope","eastus"]`,
		"tags": `{"team":"node"}`, "subscription_id": "s",
	}

	jsonFile := writeFile(t, "vars.json", `{"sig_image_version": "1.2.3", "os_disk_size_gb": 64, "replication_regions": ["westeurope", "eastus"], "tags": {"team": "node"}, "subscription_id": "s"}`)
	got, err := tpl.ReadVarFile(jsonFile)
	require.NoError(t, err)
	assert.Equal(t, want, got)

	hclFile := writeFile(t, "vars.pkrvars.hcl", `
sig_image_version   = "1.2.3"
os_disk_size_gb     = 64
replication_regions = ["westeurope", "eastus"]
tags                = { team = "node" }
subscription_id     = "s"
`)
	got, err = tpl.ReadVarFile(hclFile)
	require.NoError(t, err)
	assert.Equal(t, want, got)

	builds, err := tpl.Render(got, nil)
	require.NoError(t, err)
	cfg := builds["cvm.azure-arm.cvm"].(map[string]any)
	assert.Equal(t, float64(64), cfg["os_disk_size_gb"])
	assert.Equal(t, []any{"westeurope", "eastus"}, cfg["shared_image_gallery_destination"].(map[string]any)["replication_regions"])

	_, err = tpl.ReadVarFile(writeFile(t, "bad.pkrvars.hcl", `x = var.y`))
	assert.ErrorContains(t, err, "bad.pkrvars.hcl:1")
	_, err = tpl.ReadVarFile(writeFile(t, "bad.pkrvars.hcl", "variable \"x\" {}\n"))
	assert.ErrorContains(t, err, "a var-file holds only name = value lines")

	jsonTpl, err := LoadTemplate(azureVHDTemplate)
	require.NoError(t, err)
	_, err = jsonTpl.ReadVarFile(jsonFile)
	assert.ErrorContains(t, err, "accepts only strings", "packer 1.6.6 rules for JSON templates")
}

func TestBuildPassesTypedVarFilesToPacker(t *testing.T) {
	log := fakePackerOnPath(t)
	vf := writeFile(t, "vars.json", `{"subscription_id": "s", "sig_image_version": "1.2.3", "replication_regions": ["westeurope"]}`)
	_, err := (&Runner{}).Build(context.Background(), BuildRequest{TemplatePath: cvmTemplate, VarFiles: []string{vf}})
	require.NoError(t, err, "typed values in a var-file count for the variable check")
	lines := readLog(t, log)
	require.GreaterOrEqual(t, len(lines), 2)
	assert.Contains(t, lines[1], "-var-file="+vf, "the user's var-file goes to packer as it is")
}
