package azure

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
)

// CredentialKind is how the Azure target authenticates (--credential).
//
// A run lasts hours (a packer build, a replication of up to 6 h) and an
// Azure token one hour: the credential must get new tokens for as long
// as the run lasts. In CI that means a federated credential that asks the
// CI engine for a fresh assertion each time: the Azure CLI, logged in
// once with the job's assertion (azure/login, AzureCLI@2), cannot refresh
// once that assertion expired (about 10 minutes on GitHub; AADSTS700024).
type CredentialKind string

const (
	// CredentialAuto picks github-oidc or azure-pipelines when the job's
	// environment has what they need, workload-identity when
	// AZURE_FEDERATED_TOKEN_FILE is set, else default.
	CredentialAuto CredentialKind = "auto"
	// CredentialGitHubOIDC trades the GitHub Actions job's OIDC token
	// (ACTIONS_ID_TOKEN_REQUEST_URL/_TOKEN, `id-token: write`), fetched
	// anew whenever a token is needed, for AZURE_CLIENT_ID in
	// AZURE_TENANT_ID.
	CredentialGitHubOIDC CredentialKind = "github-oidc"
	// CredentialAzurePipelines trades the Azure Pipelines service
	// connection's OIDC token (SYSTEM_OIDCREQUESTURI, SYSTEM_ACCESSTOKEN,
	// the connection's id), fetched anew whenever a token is needed.
	CredentialAzurePipelines CredentialKind = "azure-pipelines"
	// CredentialWorkloadIdentity reads AZURE_FEDERATED_TOKEN_FILE, which
	// Kubernetes rotates (AKS workload identity).
	CredentialWorkloadIdentity CredentialKind = "workload-identity"
	// CredentialManagedIdentity is the machine's managed identity
	// (AZURE_CLIENT_ID chooses a user-assigned one).
	CredentialManagedIdentity CredentialKind = "managed-identity"
	// CredentialCLI is the Azure CLI's login (`az login`).
	CredentialCLI CredentialKind = "cli"
	// CredentialDefault is azidentity's DefaultAzureCredential: the
	// environment (secret, certificate), workload identity, managed
	// identity, then the Azure CLI and Azure Developer CLI.
	CredentialDefault CredentialKind = "default"
)

// CredentialKinds are the values --credential takes.
var CredentialKinds = []CredentialKind{CredentialAuto, CredentialGitHubOIDC, CredentialAzurePipelines,
	CredentialWorkloadIdentity, CredentialManagedIdentity, CredentialCLI, CredentialDefault}

// ParseCredentialKind parses a --credential value ("" is auto).
func ParseCredentialKind(s string) (CredentialKind, error) {
	k := CredentialKind(strings.ToLower(strings.TrimSpace(s)))
	if k == "" {
		return CredentialAuto, nil
	}
	for _, c := range CredentialKinds {
		if k == c {
			return k, nil
		}
	}
	names := make([]string, len(CredentialKinds))
	for i, c := range CredentialKinds {
		names[i] = string(c)
	}
	return "", fmt.Errorf("credential %q: use %s", s, strings.Join(names, ", "))
}

// githubExchangeAudience is the audience Entra ID accepts GitHub's OIDC
// tokens for.
const githubExchangeAudience = "api://AzureADTokenExchange"

// CredentialOptions configure NewCredential.
type CredentialOptions struct {
	// Kind is the credential to make (default auto).
	Kind CredentialKind
	// Getenv reads the environment (default os.Getenv).
	Getenv func(string) string
	// Client are the options of the credential's own requests: the
	// cloud (its authority host) and the transport.
	Client azcore.ClientOptions
	// DisableInstanceDiscovery skips Entra ID's instance metadata request
	// (private authorities).
	DisableInstanceDiscovery bool
}

// Credential is the token credential of a run and what it is.
type Credential struct {
	azcore.TokenCredential
	Kind CredentialKind
	// Refreshes is true when the credential gets new tokens for as long
	// as the run lasts, without a person or the CLI.
	Refreshes bool
	// Note says why auto chose Kind and, when the credential may not
	// refresh, what a long run meets ("" when there is nothing to say).
	Note string
}

// NewCredential makes the credential o.Kind names; auto looks at the
// environment.
func NewCredential(o CredentialOptions) (*Credential, error) {
	env := o.Getenv
	if env == nil {
		env = os.Getenv
	}
	kind := o.Kind
	if kind == "" {
		kind = CredentialAuto
	}
	c := &Credential{Kind: kind}
	if kind == CredentialAuto {
		c.Kind, c.Note = chooseCredential(env)
	}
	var err error
	switch c.Kind {
	case CredentialGitHubOIDC:
		c.TokenCredential, err = githubCredential(env, o)
		c.Refreshes = true
	case CredentialAzurePipelines:
		c.TokenCredential, err = pipelinesCredential(env, o)
		c.Refreshes = true
	case CredentialWorkloadIdentity:
		c.TokenCredential, err = azidentity.NewWorkloadIdentityCredential(&azidentity.WorkloadIdentityCredentialOptions{
			ClientID: env("AZURE_CLIENT_ID"), TenantID: env("AZURE_TENANT_ID"), TokenFilePath: env("AZURE_FEDERATED_TOKEN_FILE"),
			ClientOptions: o.Client, DisableInstanceDiscovery: o.DisableInstanceDiscovery})
		c.Refreshes = true
	case CredentialManagedIdentity:
		mo := &azidentity.ManagedIdentityCredentialOptions{ClientOptions: o.Client}
		if id := env("AZURE_CLIENT_ID"); id != "" {
			mo.ID = azidentity.ClientID(id)
		}
		c.TokenCredential, err = azidentity.NewManagedIdentityCredential(mo)
		c.Refreshes = true
	case CredentialCLI:
		c.TokenCredential, err = azidentity.NewAzureCLICredential(nil)
		c.Note = joinNote(c.Note, cliNote)
	case CredentialDefault:
		c.TokenCredential, err = azidentity.NewDefaultAzureCredential(&azidentity.DefaultAzureCredentialOptions{
			ClientOptions: o.Client, DisableInstanceDiscovery: o.DisableInstanceDiscovery})
		if env("AZURE_CLIENT_SECRET") == "" && env("AZURE_CLIENT_CERTIFICATE_PATH") == "" {
			c.Note = joinNote(c.Note, "DefaultAzureCredential may end on the Azure CLI; "+cliNote)
		} else {
			c.Refreshes = true
		}
	default:
		return nil, fmt.Errorf("credential %q: use one of %v", c.Kind, CredentialKinds)
	}
	if err != nil {
		return nil, fmt.Errorf("credential %s: %w", c.Kind, err)
	}
	return c, nil
}

// cliNote is what a long run meets with the Azure CLI's login.
const cliNote = "the Azure CLI gets new tokens only while its own login lasts: a CI login with a federated token (azure/login, AzureCLI@2) ends when that token expires (about 10 minutes on GitHub) and a longer run then fails with AADSTS700024; in CI use --credential github-oidc or azure-pipelines"

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// chooseCredential is auto's choice from the environment, and why.
func chooseCredential(env func(string) string) (CredentialKind, string) {
	gh := missing(env, "ACTIONS_ID_TOKEN_REQUEST_URL", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "AZURE_CLIENT_ID", "AZURE_TENANT_ID")
	if len(gh) == 0 {
		return CredentialGitHubOIDC, ""
	}
	ado := missing(env, "SYSTEM_OIDCREQUESTURI", "SYSTEM_ACCESSTOKEN")
	for _, alt := range [][2]string{{"AZURESUBSCRIPTION_CLIENT_ID", "AZURE_CLIENT_ID"}, {"AZURESUBSCRIPTION_TENANT_ID", "AZURE_TENANT_ID"},
		{"AZURESUBSCRIPTION_SERVICE_CONNECTION_ID", "AZURE_SERVICE_CONNECTION_ID"}} {
		if firstEnv(env, alt[0], alt[1]) == "" {
			ado = append(ado, alt[0])
		}
	}
	if len(ado) == 0 {
		return CredentialAzurePipelines, ""
	}
	if env("AZURE_FEDERATED_TOKEN_FILE") != "" && env("AZURE_CLIENT_ID") != "" && env("AZURE_TENANT_ID") != "" {
		return CredentialWorkloadIdentity, ""
	}
	switch {
	case strings.EqualFold(env("GITHUB_ACTIONS"), "true"):
		return CredentialDefault, "on GitHub Actions without " + strings.Join(gh, ", ") +
			" (the job needs `permissions: id-token: write` and AZURE_CLIENT_ID/AZURE_TENANT_ID in its env; `imgflow ci github` writes both)"
	case strings.EqualFold(env("TF_BUILD"), "true"):
		return CredentialDefault, "on Azure Pipelines without " + strings.Join(ado, ", ") +
			" (an AzureCLI@2 step with a workload identity federation service connection sets the AZURESUBSCRIPTION_ ids; map SYSTEM_ACCESSTOKEN: $(System.AccessToken); `imgflow ci azure` writes both)"
	}
	return CredentialDefault, ""
}

func missing(env func(string) string, names ...string) []string {
	var out []string
	for _, n := range names {
		if env(n) == "" {
			out = append(out, n)
		}
	}
	return out
}

func firstEnv(env func(string) string, names ...string) string {
	for _, n := range names {
		if v := env(n); v != "" {
			return v
		}
	}
	return ""
}

// githubCredential asks GitHub for a new OIDC token each time Entra ID
// is asked for an access token.
func githubCredential(env func(string) string, o CredentialOptions) (azcore.TokenCredential, error) {
	if m := missing(env, "ACTIONS_ID_TOKEN_REQUEST_URL", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "AZURE_CLIENT_ID", "AZURE_TENANT_ID"); len(m) > 0 {
		return nil, fmt.Errorf("%s not set: the job needs `permissions: id-token: write` and AZURE_CLIENT_ID, AZURE_TENANT_ID in its env", strings.Join(m, ", "))
	}
	do := o.Client.Transport
	if do == nil {
		do = http.DefaultClient
	}
	reqURL, reqToken := env("ACTIONS_ID_TOKEN_REQUEST_URL"), env("ACTIONS_ID_TOKEN_REQUEST_TOKEN")
	assertion := func(ctx context.Context) (string, error) { return githubAssertion(ctx, do, reqURL, reqToken) }
	return azidentity.NewClientAssertionCredential(env("AZURE_TENANT_ID"), env("AZURE_CLIENT_ID"), assertion,
		&azidentity.ClientAssertionCredentialOptions{ClientOptions: o.Client, DisableInstanceDiscovery: o.DisableInstanceDiscovery})
}

// githubAssertion fetches the job's OIDC token for Entra ID's audience.
// Neither the request token nor the answer reaches an error.
func githubAssertion(ctx context.Context, do policy.Transporter, reqURL, reqToken string) (string, error) {
	u, err := url.Parse(reqURL)
	if err != nil {
		return "", errors.New("ACTIONS_ID_TOKEN_REQUEST_URL is not a URL")
	}
	q := u.Query()
	q.Set("audience", githubExchangeAudience)
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "bearer "+reqToken)
	req.Header.Set("Accept", "application/json")
	resp, err := do.Do(req)
	if err != nil {
		return "", fmt.Errorf("GitHub OIDC token request to %s: %w", u.Host, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", fmt.Errorf("GitHub OIDC token request to %s: %w", u.Host, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GitHub OIDC token request to %s: %s (does the job have `permissions: id-token: write`?)", u.Host, resp.Status)
	}
	var r struct {
		Value string `json:"value"`
	}
	if err := json.Unmarshal(body, &r); err != nil || r.Value == "" {
		return "", fmt.Errorf("GitHub OIDC token request to %s: no token in the answer", u.Host)
	}
	return r.Value, nil
}

// pipelinesCredential is azidentity's AzurePipelinesCredential with the
// ids AzureCLI@2 sets (AZURESUBSCRIPTION_*) or AZURE_*.
func pipelinesCredential(env func(string) string, o CredentialOptions) (azcore.TokenCredential, error) {
	client := firstEnv(env, "AZURESUBSCRIPTION_CLIENT_ID", "AZURE_CLIENT_ID")
	tenant := firstEnv(env, "AZURESUBSCRIPTION_TENANT_ID", "AZURE_TENANT_ID")
	conn := firstEnv(env, "AZURESUBSCRIPTION_SERVICE_CONNECTION_ID", "AZURE_SERVICE_CONNECTION_ID")
	var m []string
	for _, v := range [][2]string{{client, "AZURESUBSCRIPTION_CLIENT_ID"}, {tenant, "AZURESUBSCRIPTION_TENANT_ID"},
		{conn, "AZURESUBSCRIPTION_SERVICE_CONNECTION_ID"}, {env("SYSTEM_ACCESSTOKEN"), "SYSTEM_ACCESSTOKEN"}, {env("SYSTEM_OIDCREQUESTURI"), "SYSTEM_OIDCREQUESTURI"}} {
		if v[0] == "" {
			m = append(m, v[1])
		}
	}
	if len(m) > 0 {
		return nil, fmt.Errorf("%s not set: run imgflow in an AzureCLI@2 step with a workload identity federation service connection, with SYSTEM_ACCESSTOKEN: $(System.AccessToken) in its env", strings.Join(m, ", "))
	}
	return azidentity.NewAzurePipelinesCredential(tenant, client, conn, env("SYSTEM_ACCESSTOKEN"),
		&azidentity.AzurePipelinesCredentialOptions{ClientOptions: o.Client, DisableInstanceDiscovery: o.DisableInstanceDiscovery})
}
