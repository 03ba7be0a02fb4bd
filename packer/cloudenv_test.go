package packer

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCloudEnvironmentReachesTemplatesThatDeclareIt: --cloud's packer
// name fills an unset cloud_environment_name; a value the workflow or a
// var-file gives wins, and templates without the variable are untouched.
func TestCloudEnvironmentReachesTemplatesThatDeclareIt(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
		return p
	}
	declares := write("ib.json", `{"variables": {"cloud_environment_name": "public"}, "builders": [{"type": "azure-arm", "cloud_environment_name": "{{user `+"`cloud_environment_name`"+`}}"}]}`)
	plain := write("ab.json", `{"variables": {}, "builders": [{"type": "azure-arm"}]}`)
	varFile := write("vars.json", `{"cloud_environment_name": "China"}`)
	r := &Runner{CloudEnvironment: "USGovernment"}

	assert.Equal(t, map[string]string{"cloud_environment_name": "USGovernment"}, r.withCloudEnvironment(BuildRequest{TemplatePath: declares}).Vars)
	assert.Equal(t, "Public", r.withCloudEnvironment(BuildRequest{TemplatePath: declares, Vars: map[string]string{"cloud_environment_name": "Public"}}).Vars["cloud_environment_name"])
	assert.Empty(t, r.withCloudEnvironment(BuildRequest{TemplatePath: declares, VarFiles: []string{varFile}}).Vars)
	assert.Empty(t, r.withCloudEnvironment(BuildRequest{TemplatePath: plain}).Vars)
	assert.Empty(t, (&Runner{}).withCloudEnvironment(BuildRequest{TemplatePath: declares}).Vars)
}
