// Package fakeaad is a loopback Microsoft Entra ID for tests: a token
// endpoint that trades a federated client assertion for an access token,
// and the OIDC endpoints of GitHub Actions and Azure Pipelines that hand
// out those assertions. Tokens and assertions expire in seconds, so a
// test run outlives several of them, as a build of hours outlives the
// hour of an Azure token and the minutes of a CI job's OIDC token.
//
// It is served over TLS (MSAL refuses an authority that is not https);
// Transport trusts its certificate. Check tells the fake ARM and blob
// gates (fakearm.AuthGate) whether a bearer token is still good.
package fakeaad

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
)

// Identities of the issuer's one federated application.
const (
	TenantID = "72f988bf-0000-4000-8000-00000000cafe"
	ClientID = "0b0e6f2a-0000-4000-8000-00000000f00d"
	// GitHubRequestToken is the job's ACTIONS_ID_TOKEN_REQUEST_TOKEN.
	GitHubRequestToken = "github-request-token"
	// SystemAccessToken is the pipeline's System.AccessToken.
	SystemAccessToken = "system-access-token"
	// ServiceConnectionID is the Azure Pipelines service connection.
	ServiceConnectionID = "5c1d3b3e-0000-4000-8000-0000000000ad"
	// ExchangeAudience is the audience Entra ID accepts federated
	// assertions for.
	ExchangeAudience = "api://AzureADTokenExchange"
)

// Options set the lifetimes.
type Options struct {
	// TokenLifetime is an access token's expires_in (whole seconds,
	// at least one; default 1 s).
	TokenLifetime time.Duration
	// Grace is how long after its advertised expiry Check still accepts
	// a token: the time a request takes to reach the service, which Azure
	// covers with the five minutes clients refresh early (default 1 s).
	Grace time.Duration
	// AssertionLifetime is how long an OIDC assertion may be traded
	// (default 2 s).
	AssertionLifetime time.Duration
}

// Issuer is the loopback Entra ID.
type Issuer struct {
	// URL is the authority host, https://127.0.0.1:<port>.
	URL  string
	opts Options
	srv  *httptest.Server

	mu         sync.Mutex
	n          int
	tokens     map[string]token
	assertions map[string]time.Time // assertion → expiry
	issued     int
	refused    int
}

type token struct {
	audience string
	expires  time.Time // advertised expiry
}

// New serves an issuer until the test ends.
func New(t testing.TB, opts Options) *Issuer {
	if opts.TokenLifetime < time.Second {
		opts.TokenLifetime = time.Second
	}
	if opts.Grace <= 0 {
		opts.Grace = time.Second
	}
	if opts.AssertionLifetime <= 0 {
		opts.AssertionLifetime = 2 * time.Second
	}
	i := &Issuer{opts: opts, tokens: map[string]token{}, assertions: map[string]time.Time{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{tenant}/v2.0/.well-known/openid-configuration", i.discovery)
	mux.HandleFunc("POST /{tenant}/oauth2/v2.0/token", i.token)
	mux.HandleFunc("GET /github/idtoken", i.github)
	mux.HandleFunc("POST /ado/oidctoken", i.pipelines)
	i.srv = httptest.NewTLSServer(mux)
	t.Cleanup(i.srv.Close)
	i.URL = i.srv.URL
	return i
}

// Transport reaches the issuer (it trusts the issuer's certificate).
func (i *Issuer) Transport() policy.Transporter { return i.srv.Client() }

// Cloud is base with this issuer as its authority host.
func (i *Issuer) Cloud(base cloud.Configuration) cloud.Configuration {
	base.ActiveDirectoryAuthorityHost = i.URL + "/"
	return base
}

// GitHubEnv is what a GitHub Actions job with `id-token: write` and the
// application's ids in its env has.
func (i *Issuer) GitHubEnv() map[string]string {
	return map[string]string{
		"GITHUB_ACTIONS":                 "true",
		"ACTIONS_ID_TOKEN_REQUEST_URL":   i.URL + "/github/idtoken?api-version=2.0",
		"ACTIONS_ID_TOKEN_REQUEST_TOKEN": GitHubRequestToken,
		"AZURE_CLIENT_ID":                ClientID,
		"AZURE_TENANT_ID":                TenantID,
	}
}

// PipelinesEnv is what an AzureCLI@2 step of Azure Pipelines with a
// workload identity federation service connection and SYSTEM_ACCESSTOKEN
// mapped has.
func (i *Issuer) PipelinesEnv() map[string]string {
	return map[string]string{
		"TF_BUILD":                                "True",
		"SYSTEM_OIDCREQUESTURI":                   i.URL + "/ado/oidctoken",
		"SYSTEM_ACCESSTOKEN":                      SystemAccessToken,
		"AZURESUBSCRIPTION_CLIENT_ID":             ClientID,
		"AZURESUBSCRIPTION_TENANT_ID":             TenantID,
		"AZURESUBSCRIPTION_SERVICE_CONNECTION_ID": ServiceConnectionID,
	}
}

// Assertion mints an assertion now, as a CI engine does when a job asks
// (azure/login asks once and hands it to `az login`).
func (i *Issuer) Assertion() string {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.n++
	a := fmt.Sprintf("assertion-%d", i.n)
	i.assertions[a] = time.Now().Add(i.opts.AssertionLifetime)
	return a
}

// Counts are the access tokens issued and the token requests refused.
func (i *Issuer) Counts() (issued, refused int) {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.issued, i.refused
}

// TokenError is why Check refuses a token, with the code ARM answers.
type TokenError struct {
	// Code is ExpiredAuthenticationToken, InvalidAuthenticationToken or
	// InvalidAuthenticationTokenAudience.
	Code    string
	Message string
}

func (e *TokenError) Error() string { return e.Code + ": " + e.Message }

// Check says whether token is a live token of this issuer for audience
// (a resource URI, with or without its trailing slash).
func (i *Issuer) Check(tok, audience string) *TokenError {
	i.mu.Lock()
	t, ok := i.tokens[tok]
	i.mu.Unlock()
	switch {
	case !ok:
		return &TokenError{Code: "InvalidAuthenticationToken", Message: "The access token is invalid."}
	case !strings.EqualFold(strings.TrimRight(t.audience, "/"), strings.TrimRight(audience, "/")):
		return &TokenError{Code: "InvalidAuthenticationTokenAudience", Message: fmt.Sprintf("The access token has been obtained for wrong audience or resource '%s'. It should exactly match with one of the allowed audiences '%s'.", t.audience, audience)}
	}
	if now := time.Now().UTC(); now.After(t.expires.Add(i.opts.Grace)) {
		return &TokenError{Code: "ExpiredAuthenticationToken", Message: fmt.Sprintf("The access token expiry UTC time '%s' is earlier than current UTC time '%s'.",
			t.expires.UTC().Format("1/2/2006 3:04:05 PM"), now.Format("1/2/2006 3:04:05 PM"))}
	}
	return nil
}

func (i *Issuer) discovery(w http.ResponseWriter, r *http.Request) {
	base := i.URL + "/" + r.PathValue("tenant")
	writeJSON(w, http.StatusOK, map[string]any{
		"token_endpoint":         base + "/oauth2/v2.0/token",
		"authorization_endpoint": base + "/oauth2/v2.0/authorize",
		"issuer":                 base + "/v2.0",
	})
}

// token trades a client assertion for an access token (client
// credentials grant), refusing an expired assertion as Entra ID does.
func (i *Issuer) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_request", "error_description": err.Error()})
		return
	}
	refuse := func(code int, desc string) {
		i.mu.Lock()
		i.refused++
		i.mu.Unlock()
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_client", "error_description": desc, "error_codes": []int{code}})
	}
	if r.PathValue("tenant") != TenantID || r.Form.Get("client_id") != ClientID {
		refuse(700016, "AADSTS700016: Application with identifier '"+r.Form.Get("client_id")+"' was not found in the directory.")
		return
	}
	i.mu.Lock()
	exp, ok := i.assertions[r.Form.Get("client_assertion")]
	i.mu.Unlock()
	switch {
	case !ok:
		refuse(700211, "AADSTS700211: No matching federated identity record found for presented assertion issuer.")
		return
	case time.Now().After(exp):
		refuse(700024, "AADSTS700024: Client assertion is not within its valid time range.")
		return
	}
	audience := strings.TrimSuffix(strings.Fields(r.Form.Get("scope") + " x")[0], "/.default")
	i.mu.Lock()
	i.n++
	i.issued++
	tok := fmt.Sprintf("access-token-%d", i.n)
	life := i.opts.TokenLifetime.Truncate(time.Second)
	i.tokens[tok] = token{audience: audience, expires: time.Now().Add(life)}
	i.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"token_type": "Bearer", "access_token": tok,
		"expires_in": int(life.Seconds()), "ext_expires_in": int(life.Seconds())})
}

// github is GitHub Actions' ID token endpoint.
func (i *Issuer) github(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "bearer "+GitHubRequestToken && r.Header.Get("Authorization") != "Bearer "+GitHubRequestToken {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"message": "bad request token"})
		return
	}
	if aud := r.URL.Query().Get("audience"); aud != ExchangeAudience {
		writeJSON(w, http.StatusBadRequest, map[string]any{"message": "audience " + aud + " is not " + ExchangeAudience})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"count": 1, "value": i.Assertion()})
}

// pipelines is Azure Pipelines' OIDC token endpoint.
func (i *Issuer) pipelines(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+SystemAccessToken {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"message": "bad system access token"})
		return
	}
	if id := r.URL.Query().Get("serviceConnectionId"); id != ServiceConnectionID {
		writeJSON(w, http.StatusNotFound, map[string]any{"message": "no service connection " + id})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"oidcToken": i.Assertion()})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
