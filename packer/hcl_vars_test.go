package packer

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const hclVarsTemplate = `
variable "region" {
  type = string
}
variable "unused_required" {}
variable "size" {
  type    = number
  default = 30
}
variable "client_id" {
  default = env("AZURE_CLIENT_ID")
}
variable "zones" {
  type    = list(string)
  default = []
}
locals {
  rg = "rg-${var.region}"
}
source "azure-arm" "x" {
  location  = var.region
  client_id = var.client_id
  token     = env("TOKEN")
  typo      = var.regoin
  size      = var.size
}
build {
  sources = ["source.azure-arm.x"]
  provisioner "shell" {
    inline = ["echo ${local.rg} ${var["region"]}"]
  }
}
`

func TestUsedVariablesHCL2(t *testing.T) {
	tpl := parseHCL(t, hclVarsTemplate)
	byName := map[string]VarRef{}
	var order []string
	for _, r := range tpl.UsedVariables() {
		byName[r.Kind+":"+r.Name] = r
		order = append(order, r.Kind+":"+r.Name)
	}
	assert.Equal(t, []string{"env:AZURE_CLIENT_ID", "env:TOKEN", "user:client_id", "user:region", "user:regoin", "user:size"}, order)
	assert.Equal(t, []string{
		"build[0].provisioner[0].inline (test.pkr.hcl:30)",
		"local.rg (test.pkr.hcl:18)",
		"source.azure-arm.x.location (test.pkr.hcl:21)",
	}, byName["user:region"].Paths)
	assert.Equal(t, []string{"variable.client_id.default (test.pkr.hcl:11)"}, byName["env:AZURE_CLIENT_ID"].Paths)
	assert.Equal(t, []string{"source.azure-arm.x.token (test.pkr.hcl:23)"}, byName["env:TOKEN"].Paths)
}

func TestCheckVariablesHCL2ListsEveryProblem(t *testing.T) {
	tpl := parseHCL(t, hclVarsTemplate)
	err := tpl.CheckVariables(map[string]string{})
	var mv *MissingVariablesError
	require.ErrorAs(t, err, &mv)
	assert.Equal(t, []string{"region", "regoin", "unused_required", "TOKEN"}, mv.Names())
	msg := err.Error()
	assert.Contains(t, msg, "packer template (template): 4 variables have no value:")
	assert.Contains(t, msg, `region: declared without a default and used at build[0].provisioner[0].inline (test.pkr.hcl:30), local.rg (test.pkr.hcl:18), source.azure-arm.x.location (test.pkr.hcl:21) (packer 1.9.5 fails with: Unset variable "region"); pass it with vars={"region": …} in the workflow`)
	assert.Contains(t, msg, `regoin: used at source.azure-arm.x.typo (test.pkr.hcl:24) but not declared (packer 1.9.5 fails with "Unsupported attribute"); add variable "regoin" { type = string } to the template`)
	assert.Contains(t, msg, `unused_required: declared without a default; packer 1.9.5 refuses to build without it (Unset variable "unused_required")`)
	assert.Contains(t, msg, `env("TOKEN"): used at source.azure-arm.x.token (test.pkr.hcl:23), but packer allows env() only in a variable's default`)
	assert.NotContains(t, msg, "AZURE_CLIENT_ID", "env() in a default is allowed")

	// A value for an undeclared variable does not declare it.
	err = tpl.CheckVariables(map[string]string{"region": "westus2", "unused_required": "x", "regoin": "y"})
	require.ErrorAs(t, err, &mv)
	assert.Equal(t, []string{"regoin", "TOKEN"}, mv.Names())
}

func TestCheckVariablesHCL2Types(t *testing.T) {
	tpl := parseHCL(t, `
variable "size" { type = number }
variable "zones" { type = list(string) }
variable "secret" {
  type      = number
  sensitive = true
}
source "null" "a" {
  x = var.size
  y = var.zones
  z = var.secret
}
build { sources = ["source.null.a"] }
`)
	assert.NoError(t, tpl.CheckVariables(map[string]string{"size": "30", "zones": `["1", "2"]`, "secret": "1"}))
	err := tpl.CheckVariables(map[string]string{"size": "thirty", "zones": "1,2", "secret": "hunter2"})
	require.Error(t, err)
	msg := err.Error()
	assert.Contains(t, msg, `variable size (test.pkr.hcl:2,1-16): the value is not a valid number`)
	assert.Contains(t, msg, `variable zones (test.pkr.hcl:3,1-17) is a list of string: pass its value as JSON, e.g. ["a", "b"]`)
	assert.NotContains(t, msg, "hunter2", "values are never shown: they may be secrets")
	assert.NotContains(t, msg, "thirty")
}

func TestCheckUndeclaredHCL2(t *testing.T) {
	tpl := parseHCL(t, hclVarsTemplate)
	assert.NoError(t, tpl.CheckUndeclared(map[string]string{"region": "westus2", "size": "1"}))
	err := tpl.CheckUndeclared(map[string]string{"region": "westus2", "sise": "1", "zone": "2"})
	var mv *MissingVariablesError
	require.ErrorAs(t, err, &mv)
	assert.Equal(t, []string{"sise", "zone"}, mv.Names())
	assert.Contains(t, err.Error(), "2 variables are not declared or have no value:")
	assert.Contains(t, err.Error(), `sise: set in vars, but the template declares no variable "sise" (packer 1.9.5 refuses it: "Undefined -var variable"); declare variable "sise" { type = string } or remove it from vars`)

	json := parse(t, `{"builders": [{"type": "null"}]}`)
	assert.NoError(t, json.CheckUndeclared(map[string]string{"anything": "x"}), "packer 1.6.6 accepts undeclared values")
}

func TestVarFileValuesHCL2(t *testing.T) {
	tpl := parseHCL(t, hclVarsTemplate)
	values, err := tpl.VarFileValues(map[string]string{"region": "westus2", "size": "12", "zones": `["1","2"]`, "extra": "e"})
	require.NoError(t, err)
	data, err := json.Marshal(values)
	require.NoError(t, err)
	assert.JSONEq(t, `{"region": "westus2", "size": "12", "zones": ["1", "2"], "extra": "e"}`, string(data))

	_, err = tpl.VarFileValues(map[string]string{"zones": "1,2"})
	assert.ErrorContains(t, err, "variable zones")

	jsonTpl := parse(t, `{"builders": [{"type": "null"}]}`)
	values, err = jsonTpl.VarFileValues(map[string]string{"zones": `["1"]`})
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"zones": `["1"]`}, values)
}

func TestCheckVariablesHCL2Validation(t *testing.T) {
	tpl := parseHCL(t, `
variable "version" {
  type = string
  validation {
    condition     = can(regex("^[0-9]+\\.[0-9]+\\.[0-9]+$", var.version))
    error_message = "The version must be MAJOR.MINOR.PATCH."
  }
}
variable "size" {
  type    = number
  default = 8
  validation {
    condition     = var.size >= 30
    error_message = "The OS disk needs at least 30 GiB."
  }
}
source "null" "a" { x = var.version }
build { sources = ["source.null.a"] }
`)
	assert.NoError(t, tpl.CheckVariables(map[string]string{"version": "1.2.3", "size": "30"}))
	err := tpl.CheckVariables(map[string]string{"version": "1.2", "size": "30"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `variable version: The version must be MAJOR.MINOR.PATCH. (the validation rule at test.pkr.hcl:4,3-13; packer 1.9.5 fails with "Invalid value for variable")`)

	_, err = tpl.Render(map[string]string{"version": "1.2.3"}, nil)
	require.Error(t, err, "a default is validated too")
	assert.Contains(t, err.Error(), "variable size: The OS disk needs at least 30 GiB.")
}
