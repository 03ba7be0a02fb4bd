package packer

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestAzureAuthOf reads the login of rendered azure-arm configurations in
// packer-plugin-azure's order: the CLI and a fixed JWT cannot be renewed
// by packer, the others can.
func TestAzureAuthOf(t *testing.T) {
	for _, tc := range []struct {
		cfg       map[string]any
		method    string
		refreshes bool
	}{
		{map[string]any{"use_azure_cli_auth": "True", "client_secret": ""}, "cli", false},
		{map[string]any{"use_azure_cli_auth": true}, "cli", false},
		{map[string]any{"use_azure_cli_auth": "", "client_id": "c", "client_jwt": "eyJ.x.y"}, "client_jwt", false},
		{map[string]any{"client_id": "c", "oidc_request_url": "https://gh/x", "oidc_request_token": "t"}, "oidc_request_url", true},
		{map[string]any{"client_id": "c", "client_cert_path": "/c.pem"}, "client_cert", true},
		{map[string]any{"use_azure_cli_auth": "false", "client_id": "c", "client_secret": "s"}, "client_secret", true},
		{map[string]any{"subscription_id": "s"}, "managed_identity", true},
	} {
		a := AzureAuthOf(tc.cfg)
		assert.Equal(t, tc.method, a.Method, "%v", tc.cfg)
		assert.Equal(t, tc.refreshes, a.Refreshes, "%v", tc.cfg)
		if !tc.refreshes {
			assert.Contains(t, a.Limit, "oidc_request_url/oidc_request_token")
			assert.Contains(t, a.Limit, "1.4.0")
		}
	}
}
