package packer

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeTemplateDir writes files into a new directory and returns it.
func writeTemplateDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	return dir
}

var dirTemplate = map[string]string{
	"variables.pkr.hcl": `
variable "req" { type = string }
variable "n" {
  type    = number
  default = 1
}
`,
	"main.pkr.hcl": `
source "null" "a" {
  communicator = "none"
  label        = "${var.req}-${var.n}"
}
build {
  sources = ["source.null.a"]
  provisioner "shell-local" { inline = ["echo VAL ${var.req} ${var.n}"] }
}
`,
	"x.auto.pkrvars.hcl":  `req = "fromauto"`,
	"y.auto.pkrvars.json": `{"n": 5}`,
}

func TestLoadHCL2TemplateDirectory(t *testing.T) {
	dir := writeTemplateDir(t, dirTemplate)
	tpl, err := LoadTemplate(dir)
	require.NoError(t, err)
	assert.True(t, tpl.IsHCL2())
	assert.Equal(t, dir, tpl.Path)
	assert.Equal(t, []string{"null.a"}, tpl.BuilderNames(), "sources and builds from several files")
	assert.True(t, tpl.Variables["req"].Required)

	assert.NoError(t, tpl.CheckVariables(nil), "auto var-files give values, as packer reads them from a directory")
	builds, err := tpl.Render(nil, nil)
	require.NoError(t, err)
	assert.Equal(t, "fromauto-5", builds["null.a"].(map[string]any)["label"])
	builds, err = tpl.Render(map[string]string{"req": "given"}, nil)
	require.NoError(t, err)
	assert.Equal(t, "given-5", builds["null.a"].(map[string]any)["label"], "var-files and vars override auto var-files")

	// Source changes with any file, the auto var-files included.
	before := string(tpl.Source())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "y.auto.pkrvars.json"), []byte(`{"n": 6}`), 0o644))
	again, err := LoadTemplate(dir)
	require.NoError(t, err)
	assert.NotEqual(t, before, string(again.Source()))
}

func TestLoadHCL2TemplateDirectoryErrors(t *testing.T) {
	_, err := LoadTemplate(t.TempDir())
	assert.ErrorContains(t, err, "has no *.pkr.hcl file")

	files := map[string]string{"extra.pkr.json": `{}`}
	for k, v := range dirTemplate {
		files[k] = v
	}
	_, err = LoadTemplate(writeTemplateDir(t, files))
	assert.ErrorContains(t, err, "extra.pkr.json: imgflow reads HCL2 templates written as .pkr.hcl")

	files = map[string]string{"other.pkr.hcl": `variable "n" {}`}
	for k, v := range dirTemplate {
		files[k] = v
	}
	_, err = LoadTemplate(writeTemplateDir(t, files))
	assert.ErrorContains(t, err, `variables.pkr.hcl:3,1-13: Duplicate variable; variable "n" is declared twice (also at `)
	assert.ErrorContains(t, err, `other.pkr.hcl:1,1-13); remove one`)
}
