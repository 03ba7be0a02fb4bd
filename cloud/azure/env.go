package azure

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	azcloud "github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armsubscriptions"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/internal/redact"
)

// Environment variables.
const (
	// EnvSubscription names the subscription when --subscription is not given.
	EnvSubscription = "AZURE_SUBSCRIPTION_ID"

	// EnvARMEndpoint is a TEST-ONLY hook: when set (to a fake ARM served
	// over plain HTTP, e.g. fakearm.NewServer), ARM calls go there with a
	// static fake token instead of real credentials. Never set it for a
	// real subscription.
	EnvARMEndpoint = "IMGFLOW_AZURE_ARM_ENDPOINT"
	// EnvBlobEndpoint is a TEST-ONLY hook used with EnvARMEndpoint: the
	// blob endpoint of every account, "{account}" standing for the account
	// name (Azurite: http://127.0.0.1:<port>/{account}).
	EnvBlobEndpoint = "IMGFLOW_AZURE_BLOB_ENDPOINT"
	// EnvStorageKey is a TEST-ONLY hook used with EnvBlobEndpoint: the
	// shared key of every account (Azurite's well-known development key).
	EnvStorageKey = "IMGFLOW_AZURE_STORAGE_KEY"
)

// credentialCheckTimeout bounds the token and subscription checks made
// before a workflow runs.
const credentialCheckTimeout = 30 * time.Second

// Login says how FromEnvironment authenticates.
type Login struct {
	// Credential is --credential (default auto).
	Credential CredentialKind
	// Cloud is --cloud (default AzurePublic); Options.Cloud wins when
	// set.
	Cloud Cloud
}

// FromEnvironment builds the provider of a run against a real
// subscription with the credential auto chooses; see Connect.
func FromEnvironment(ctx context.Context, subscription string, opts *Options) (*Provider, error) {
	return Connect(ctx, subscription, Login{}, opts)
}

// Connect builds the provider of a run against a real subscription: the
// subscription is the argument or AZURE_SUBSCRIPTION_ID, the credential
// the one login names (NewCredential; auto: a federated credential that
// refreshes in GitHub Actions and Azure Pipelines, else
// DefaultAzureCredential). It says on Options.Log which credential it
// uses and, when that one may not outlive a long run, why. It checks,
// before any workflow step, that the credential gets a token and that
// the subscription exists and is enabled, and fails with what to do
// otherwise. opts may carry Progress, Log, OnPoller and tuning; its
// SubscriptionID and Credential are filled here.
//
// When IMGFLOW_AZURE_ARM_ENDPOINT is set (tests only) the provider talks
// to that fake ARM endpoint over HTTP with a static token; see
// EnvARMEndpoint, EnvBlobEndpoint and EnvStorageKey.
func Connect(ctx context.Context, subscription string, login Login, opts *Options) (*Provider, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	sub := strings.TrimSpace(subscription)
	if sub == "" {
		sub = strings.TrimSpace(os.Getenv(EnvSubscription))
	}
	if sub == "" {
		return nil, errors.New("azure: no subscription: pass --subscription <id> or set " + EnvSubscription)
	}
	o.SubscriptionID = sub
	if o.Cloud.Name == "" {
		o.Cloud = login.Cloud
	}
	if ep := os.Getenv(EnvARMEndpoint); ep != "" {
		applyTestEndpoint(&o, ep)
	} else {
		client := azcore.ClientOptions{Cloud: withCloud(o.ARM, o.Cloud).Cloud}
		cred, err := NewCredential(CredentialOptions{Kind: login.Credential, Client: client})
		if err != nil {
			return nil, fmt.Errorf("azure: no credential: %w\nlog in with `az login`, or set AZURE_CLIENT_ID/AZURE_TENANT_ID with a secret, certificate or workload identity, or run where a managed identity is available (--credential chooses; see README, The Azure target)", err)
		}
		o.Credential = cred
		if o.Log != nil {
			o.Log(credentialLine(cred))
		}
	}
	if err := checkToken(ctx, o.Credential, withCloud(o.ARM, o.Cloud)); err != nil {
		return nil, err
	}
	p, err := New(ctx, o)
	if err != nil {
		return nil, err
	}
	if err := p.checkSubscription(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// credentialLine says which credential a run uses.
func credentialLine(c *Credential) string {
	line := "azure: credential " + string(c.Kind)
	if c.Refreshes {
		line += " (gets a new token whenever one expires)"
	}
	if c.Note != "" {
		line += ": " + c.Note
	}
	return line
}

// applyTestEndpoint points the options at a fake ARM (and optionally
// Azurite) for tests.
func applyTestEndpoint(o *Options, ep string) {
	ep = strings.TrimRight(ep, "/")
	var armOpts arm.ClientOptions
	if o.ARM != nil {
		armOpts = *o.ARM
	}
	armOpts.Cloud = azcloud.Configuration{
		ActiveDirectoryAuthorityHost: ep + "/aad/",
		Services: map[azcloud.ServiceName]azcloud.ServiceConfiguration{
			azcloud.ResourceManager: {Endpoint: ep, Audience: ep},
		},
	}
	armOpts.InsecureAllowCredentialWithHTTP = true
	armOpts.DisableRPRegistration = true
	if armOpts.Retry.RetryDelay == 0 {
		armOpts.Retry.RetryDelay = 50 * time.Millisecond
	}
	o.ARM = &armOpts
	o.Credential = StaticToken("imgflow-test-token")
	if o.PollFrequency == 0 {
		o.PollFrequency = time.Second // the SDK's floor outside `go test`
		if flag.Lookup("test.v") != nil {
			o.PollFrequency = 5 * time.Millisecond
		}
	}
	if tmpl := os.Getenv(EnvBlobEndpoint); tmpl != "" && o.BlobEndpoint == nil {
		o.BlobEndpoint = func(account string) string { return strings.ReplaceAll(tmpl, "{account}", account) }
	}
	if key := os.Getenv(EnvStorageKey); key != "" && o.StorageKey == nil {
		o.StorageKey = func(string) (string, error) { return key, nil }
	}
	var blobOpts azblob.ClientOptions
	if o.Blob != nil {
		blobOpts = *o.Blob
	}
	blobOpts.InsecureAllowCredentialWithHTTP = true
	o.Blob = &blobOpts
}

// StaticToken is a credential returning a fixed token: for fake ARM
// endpoints in tests only.
type StaticToken string

// GetToken implements azcore.TokenCredential.
func (t StaticToken) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: string(t), ExpiresOn: time.Now().Add(time.Hour)}, nil
}

// checkToken makes sure the credential can get an ARM token.
func checkToken(ctx context.Context, cred azcore.TokenCredential, armOpts *arm.ClientOptions) error {
	audience := azcloud.AzurePublic.Services[azcloud.ResourceManager].Audience
	if armOpts != nil {
		if s, ok := armOpts.Cloud.Services[azcloud.ResourceManager]; ok && s.Audience != "" {
			audience = s.Audience
		}
	}
	ctx, cancel := context.WithTimeout(ctx, credentialCheckTimeout)
	defer cancel()
	if _, err := cred.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{strings.TrimRight(audience, "/") + "/.default"}}); err != nil {
		return fmt.Errorf("azure: no usable credential: %w\nlog in with `az login` (or `az login --identity`), or set AZURE_CLIENT_ID/AZURE_TENANT_ID with AZURE_CLIENT_SECRET, a certificate or AZURE_FEDERATED_TOKEN_FILE", redact.Error(err))
	}
	return nil
}

// checkSubscription makes sure the subscription exists for the credential
// and is enabled.
func (p *Provider) checkSubscription(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, credentialCheckTimeout)
	defer cancel()
	res, err := p.subs.Get(ctx, p.sub, nil)
	if err != nil {
		err = azErr(err, "/subscriptions/"+p.sub)
		if cloud.IsNotFound(err) || isStatus(err, 401, 403) {
			return fmt.Errorf("azure: subscription %s not found or not accessible with this credential (%w): check the id (`az account list`) and your role assignments", p.sub, err)
		}
		return fmt.Errorf("azure: check subscription %s: %w", p.sub, err)
	}
	if st := res.State; st != nil && *st != armsubscriptions.SubscriptionStateEnabled {
		return fmt.Errorf("azure: subscription %s is %s, not Enabled", p.sub, *st)
	}
	return nil
}
