package packer

import (
	"fmt"
	"strconv"
	"strings"
)

// BundledAzurePlugin is the packer-plugin-azure packer 1.9.5 bundles, used
// unless `packer init` installed another (a template's required_plugins).
const BundledAzurePlugin = "1.4.0"

// AzureAuth is how a rendered azure-arm builder authenticates, read from
// its configuration as packer-plugin-azure does (builder/azure/common/
// client/config.go), and whether packer can get new tokens for as long as
// a build lasts.
type AzureAuth struct {
	// Method is cli, client_jwt, oidc_request_url, client_cert,
	// client_secret or managed_identity (no client id and secret: the
	// machine's identity, or a device login when there is none).
	Method string
	// Refreshes is false where packer cannot get a token once the login
	// it was given ends.
	Refreshes bool
	// Limit says, when Refreshes is false, what a long build meets and
	// what refreshes instead.
	Limit string
}

// AzureAuthOf reads the authentication of a rendered azure-arm builder
// configuration.
func AzureAuthOf(cfg map[string]any) AzureAuth {
	set := func(k string) bool {
		switch v := cfg[k].(type) {
		case string:
			return v != ""
		case nil:
			return false
		}
		return true
	}
	truthy := func(k string) bool {
		switch v := cfg[k].(type) {
		case bool:
			return v
		case string:
			b, _ := strconv.ParseBool(strings.TrimSpace(v))
			return b
		}
		return false
	}
	switch {
	case truthy("use_azure_cli_auth"):
		return AzureAuth{Method: "cli", Limit: "packer authenticates with the Azure CLI (use_azure_cli_auth), which gets new tokens only while its login lasts: " +
			"a CI login with the job's federated token (azure/login, AzureCLI@2) ends when that token expires (about 10 minutes on GitHub), " +
			"and a build or replication that needs a token after that fails (AADSTS700024). " + refreshingPackerAuth}
	case set("client_jwt"):
		return AzureAuth{Method: "client_jwt", Limit: "packer authenticates with a fixed client_jwt, which it cannot renew: the build fails once the JWT expires. " + refreshingPackerAuth}
	case set("oidc_request_url") && set("oidc_request_token"):
		return AzureAuth{Method: "oidc_request_url", Refreshes: true}
	case set("client_cert_path"):
		return AzureAuth{Method: "client_cert", Refreshes: true}
	case set("client_secret"):
		return AzureAuth{Method: "client_secret", Refreshes: true}
	}
	return AzureAuth{Method: "managed_identity", Refreshes: true}
}

// refreshingPackerAuth is what refreshes instead.
var refreshingPackerAuth = fmt.Sprintf("What refreshes: client_cert_path or client_secret with client_id, a managed identity on the build agent, "+
	"or (packer-plugin-azure 2.1.5 and later, through the template's required_plugins; packer 1.9.5 bundles %s, which lacks it) "+
	"oidc_request_url/oidc_request_token from the GitHub job's ACTIONS_ID_TOKEN_REQUEST_URL/_TOKEN", BundledAzurePlugin)
