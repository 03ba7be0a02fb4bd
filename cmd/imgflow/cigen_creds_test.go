package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/imgflow/imgflow/cloud/azure"
)

// TestGitHubJobsUseTheRefreshingCredential: every job of a generated
// GitHub workflow may ask for its OIDC token and has the application's
// ids, and imgflow is told to use github-oidc; with what the runner adds
// (the OIDC request URL and token), that credential is made.
func TestGitHubJobsUseTheRefreshingCredential(t *testing.T) {
	for _, rel := range shippedReleases(t) {
		t.Run(filepath.Base(rel), func(t *testing.T) {
			var w map[string]any
			require.NoError(t, yaml.Unmarshal([]byte(generated(t, "github", rel)), &w))
			assert.Equal(t, "write", asMap(w["permissions"])["id-token"])
			env := asMap(w["env"])
			assert.Equal(t, "${{ vars.AZURE_CLIENT_ID }}", env["AZURE_CLIENT_ID"])
			assert.Equal(t, "${{ vars.AZURE_TENANT_ID }}", env["AZURE_TENANT_ID"])
			assert.Equal(t, "github-oidc", env[envCredential])

			job := map[string]string{"ACTIONS_ID_TOKEN_REQUEST_URL": "https://token.actions.example/x", "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "t"}
			for k, v := range env {
				job[k] = strings.NewReplacer("${{ vars.AZURE_CLIENT_ID }}", "client", "${{ vars.AZURE_TENANT_ID }}", "72f988bf-0000-4000-8000-00000000cafe").Replace(v.(string))
			}
			kind, err := azure.ParseCredentialKind(job[envCredential])
			require.NoError(t, err)
			cred, err := azure.NewCredential(azure.CredentialOptions{Kind: kind, Getenv: func(k string) string { return job[k] }})
			require.NoError(t, err)
			assert.Equal(t, azure.CredentialGitHubOIDC, cred.Kind)
			assert.True(t, cred.Refreshes)
		})
	}
}

// TestAzurePipelineStepsUseTheRefreshingCredential: every AzureCLI@2
// step of a generated pipeline maps System.AccessToken (scripts see it
// only when mapped) and tells imgflow to use azure-pipelines.
func TestAzurePipelineStepsUseTheRefreshingCredential(t *testing.T) {
	for _, rel := range shippedReleases(t) {
		t.Run(filepath.Base(rel), func(t *testing.T) {
			var p map[string]any
			require.NoError(t, yaml.Unmarshal([]byte(generated(t, "azure-pipelines", rel)), &p))
			n := 0
			for _, st := range asList(p["stages"]) {
				for _, j := range asList(asMap(st)["jobs"]) {
					for _, s := range asList(asMap(j)["steps"]) {
						if asMap(s)["task"] != "AzureCLI@2" {
							continue
						}
						n++
						env := asMap(asMap(s)["env"])
						assert.Equal(t, "$(System.AccessToken)", env["SYSTEM_ACCESSTOKEN"], asMap(s)["displayName"])
						assert.Equal(t, "azure-pipelines", env[envCredential], asMap(s)["displayName"])
					}
				}
			}
			assert.Equal(t, 3, n, "plan, build and summary")
		})
	}
}
