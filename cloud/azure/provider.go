// Package azure is imgflow's Azure target: cloud.Provider implemented with
// the Azure SDK for Go (armcompute v7, armresources, armstorage,
// armsubscriptions, azblob, azidentity).
//
// Operations are primitives with Azure's own semantics; the idempotent
// ensure logic lives in package cloud. Long operations go through the SDK
// pollers, 429 and 5xx answers are retried by the SDK retry policy
// (honouring Retry-After), longer throttling and ARM's transient 409s by
// waitPolicy (retry.go), and every error is a *cloud.Error carrying
// Azure's status and error code, wrapped with the operation and resource.
// SAS query strings never reach an error or a log line.
package azure

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources/v3"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armsubscriptions"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/storage/armstorage/v2"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/cloud/azure/internal/armconv"
	"github.com/imgflow/imgflow/internal/redact"
	"github.com/imgflow/imgflow/progress"
)

// TargetName is the name of this target.
const TargetName = "azure"

// Retry defaults. Gallery APIs throttle with "try after 120 seconds", so
// the longest Retry-After honoured is a little above that.
const (
	DefaultMaxRetries    = 6
	DefaultRetryDelay    = 4 * time.Second
	DefaultMaxRetryDelay = 2*time.Minute + 10*time.Second
	// DefaultPollFrequency is how often long operations are polled when
	// the service sends no Retry-After.
	DefaultPollFrequency = 10 * time.Second
	// DefaultParallel is how many 4 MiB page transfers run at once.
	DefaultParallel = 8
)

// CopyMode selects how CopyBlob moves data.
type CopyMode string

const (
	// CopyAuto tries a server-side copy (StartCopyFromURL); where the
	// service does not support it, Put Page From URL by ranges; where the
	// service cannot read the source (CannotVerifyCopySource), or Put Page
	// From URL is not implemented, a streamed download/upload.
	CopyAuto CopyMode = ""
	// CopyServer only uses StartCopyFromURL with status polling.
	CopyServer CopyMode = "server"
	// CopyRanges copies the source's page ranges with Put Page From URL in
	// ≤4 MiB chunks, falling back to streaming when the service answers
	// 501 (Azurite).
	CopyRanges CopyMode = "ranges"
	// CopyStream downloads the source's page ranges and uploads them.
	CopyStream CopyMode = "stream"
)

// Options configure a Provider.
type Options struct {
	// SubscriptionID is the subscription every resource lives in (required).
	SubscriptionID string
	// Credential authenticates ARM calls, and blob calls unless StorageKey
	// is set (required).
	Credential azcore.TokenCredential
	// ARM are the options of every ARM client: cloud/endpoint override,
	// transport (fakes), retry. Zero retry settings get imgflow's defaults
	// (6 retries, Retry-After honoured up to two minutes).
	ARM *arm.ClientOptions
	// Blob are the options of every blob client.
	Blob *azblob.ClientOptions
	// BlobEndpoint maps a storage account to its blob service URL when a
	// BlobRef carries no endpoint. Default https://<account>.blob.core.windows.net;
	// Azurite: http://127.0.0.1:<port>/<account>.
	BlobEndpoint func(account string) string
	// Cloud is the Azure cloud (--cloud; default AzurePublic): the ARM
	// endpoint, token audience and authority unless ARM names a cloud,
	// and the default blob endpoints.
	Cloud Cloud
	// StorageKey returns an account's shared key (emulators, tests). When
	// set, blob calls use it unless StorageAuth is StorageAuthAAD.
	StorageKey func(account string) (string, error)
	// StorageAuth chooses between Credential and the key ListKeys returns
	// for blob calls when StorageKey is nil (default StorageAuthAuto).
	StorageAuth StorageAuth
	// PollFrequency is the polling interval of long operations and blob
	// copies (default 10 s; the SDK refuses less than 1 s outside tests).
	PollFrequency time.Duration
	// Progress, when set, sees long operations advance: op names the
	// operation and resource, pct is 0…100.
	Progress func(op string, pct int)
	// Transfers, when set, sees blob transfers (uploads, copies) advance
	// byte by byte: a progress.Printer on stderr draws a bar with rate
	// and ETA on a terminal, periodic lines in CI.
	Transfers progress.Reporter
	// Waits, when set, sees every long ARM operation from start to end
	// (a progress.Printer says every minute that one goes on).
	Waits progress.Waiter
	// ContentMD5 also stores the MD5 of the whole content as the blob's
	// Content-MD5 on uploads and streamed copies (off by default, like
	// azcopy's --put-md5). The sparse digest (blob metadata imgflowdigest)
	// identifies the content either way; the MD5 has to hash every byte,
	// holes included: about 1.3 s per GiB of the blob on one core, e.g.
	// 28 s of a 30 GiB upload with 1 GiB of data (BENCHMARKS.md).
	ContentMD5 bool
	// OnPoller, when set, receives the resume token of every long
	// operation once it started, so a caller can persist it and resume
	// the operation with the SDK (Begin…Options.ResumeToken).
	OnPoller func(op, token string)
	// Log, when set, receives notable events (copy fallbacks, cleanup
	// failures). Lines never contain a SAS.
	Log func(msg string)
	// CopyMode selects how CopyBlob moves data (default CopyAuto).
	CopyMode CopyMode
	// Parallel bounds concurrent page transfers (default 8).
	Parallel int
	// Sleep waits out a throttled (429 Retry-After) or transiently
	// conflicting (409) ARM answer before the retry, failing at once when
	// the context would end first (default SleepFor, real time; tests
	// pass a shortened clock, fakearm's Fake.Sleep).
	Sleep func(ctx context.Context, d time.Duration) error
}

// Provider is the Azure target. It is safe for concurrent use.
type Provider struct {
	opts Options
	sub  string
	cred azcore.TokenCredential

	groups    *armresources.ResourceGroupsClient
	accounts  *armstorage.AccountsClient
	subs      *armsubscriptions.Client
	galleries *armcompute.GalleriesClient
	sharing   *armcompute.GallerySharingProfileClient
	images    *armcompute.GalleryImagesClient
	vmImages  *armcompute.VirtualMachineImagesClient // marketplace images
	versions  *armcompute.GalleryImageVersionsClient
	managed   *armcompute.ImagesClient
	disks     *armcompute.DisksClient
	vms       *armcompute.VirtualMachinesClient
	runs      *armcompute.VirtualMachineRunCommandsClient
	generic   *armresources.Client // test_vm's virtual network (no armnetwork dependency)
	raw       rawARM               // ARM calls without an SDK client of ours (preflight.go)

	locMu     sync.Mutex
	locations []cloud.Location
	locIndex  map[string]string // folded name or display name → name

	blobMu        sync.Mutex
	blobCreds     map[string]*azblob.SharedKeyCredential
	accountGroups map[string]string // lower(account) → resource group

	// authMu serialises the choice of an account's blob credential;
	// accountAuth holds it (nil: the token credential).
	authMu      sync.Mutex
	accountAuth map[string]*azblob.SharedKeyCredential

	grantMu sync.Mutex
	grants  map[string]*diskGrant // disk SAS URL → its grant
}

var _ cloud.Provider = (*Provider)(nil)

// New builds a provider: one client of each kind, sharing the ARM options.
// It makes no request (ctx is for future use); FromEnvironment checks the
// credential and the subscription.
func New(_ context.Context, opts Options) (*Provider, error) {
	if opts.SubscriptionID == "" {
		return nil, errors.New("azure: no subscription id: pass --subscription or set AZURE_SUBSCRIPTION_ID")
	}
	if opts.Credential == nil {
		return nil, errors.New("azure: no credential")
	}
	if opts.PollFrequency <= 0 {
		opts.PollFrequency = DefaultPollFrequency
	}
	if opts.Parallel <= 0 {
		opts.Parallel = DefaultParallel
	}
	if opts.StorageAuth == "" {
		opts.StorageAuth = StorageAuthAuto
	}
	if _, err := ParseStorageAuth(string(opts.StorageAuth)); err != nil {
		return nil, fmt.Errorf("azure: %w", err)
	}
	if opts.Sleep == nil {
		opts.Sleep = SleepFor
	}
	armOpts := withRetryDefaults(withCloud(opts.ARM, opts.Cloud))
	armOpts.Transport = redactTransport{next: orDefault(armOpts.Transport)}
	blobOpts := azblob.ClientOptions{}
	if opts.Blob != nil {
		blobOpts = *opts.Blob
	}
	blobOpts.Transport = redactTransport{next: orDefault(blobOpts.Transport)}
	opts.Blob = &blobOpts
	p := &Provider{opts: opts, sub: opts.SubscriptionID, cred: opts.Credential, blobCreds: map[string]*azblob.SharedKeyCredential{},
		accountGroups: map[string]string{}, accountAuth: map[string]*azblob.SharedKeyCredential{}, grants: map[string]*diskGrant{}}
	armOpts.PerCallPolicies = append(slices.Clip(armOpts.PerCallPolicies), waitPolicy{sleep: opts.Sleep, log: p.logf})
	cf, err := armcompute.NewClientFactory(p.sub, p.cred, armOpts)
	if err != nil {
		return nil, fmt.Errorf("azure: compute clients: %w", err)
	}
	p.galleries = cf.NewGalleriesClient()
	p.sharing = cf.NewGallerySharingProfileClient()
	p.images = cf.NewGalleryImagesClient()
	p.vmImages = cf.NewVirtualMachineImagesClient()
	p.versions = cf.NewGalleryImageVersionsClient()
	p.managed = cf.NewImagesClient()
	p.disks = cf.NewDisksClient()
	p.vms = cf.NewVirtualMachinesClient()
	p.runs = cf.NewVirtualMachineRunCommandsClient()
	rf, err := armresources.NewClientFactory(p.sub, p.cred, armOpts)
	if err != nil {
		return nil, fmt.Errorf("azure: resource clients: %w", err)
	}
	p.groups = rf.NewResourceGroupsClient()
	p.generic = rf.NewClient()
	sf, err := armstorage.NewClientFactory(p.sub, p.cred, armOpts)
	if err != nil {
		return nil, fmt.Errorf("azure: storage clients: %w", err)
	}
	p.accounts = sf.NewAccountsClient()
	if p.raw.c, err = arm.NewClient("imgflow", "v1.0.0", p.cred, armOpts); err != nil {
		return nil, fmt.Errorf("azure: ARM client: %w", err)
	}
	if p.subs, err = armsubscriptions.NewClient(p.cred, armOpts); err != nil {
		return nil, fmt.Errorf("azure: subscription client: %w", err)
	}
	return p, nil
}

// withRetryDefaults copies the ARM options and fills imgflow's retry
// policy where the caller left zero values.
func withRetryDefaults(in *arm.ClientOptions) *arm.ClientOptions {
	var o arm.ClientOptions
	if in != nil {
		o = *in
	}
	r := &o.Retry
	if r.MaxRetries == 0 {
		r.MaxRetries = DefaultMaxRetries
	}
	if r.RetryDelay == 0 {
		r.RetryDelay = DefaultRetryDelay
	}
	if r.MaxRetryDelay == 0 {
		r.MaxRetryDelay = DefaultMaxRetryDelay
	}
	return &o
}

// redactTransport removes the query (a SAS) from the URL of transport
// errors before any policy logs or returns them: Go's *url.Error quotes
// the whole request URL.
type redactTransport struct{ next policy.Transporter }

func (t redactTransport) Do(req *http.Request) (*http.Response, error) {
	resp, err := t.next.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			ue.URL = redact.URL(ue.URL)
		}
	}
	return resp, err
}

func orDefault(t policy.Transporter) policy.Transporter {
	if t != nil {
		return t
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 32
	return &http.Client{Transport: tr}
}

// Target implements cloud.Provider.
func (p *Provider) Target() string { return TargetName }

// SubscriptionID implements cloud.Provider.
func (p *Provider) SubscriptionID() string { return p.sub }

func (p *Provider) logf(format string, args ...any) {
	if p.opts.Log != nil {
		p.opts.Log(redact.SAS(fmt.Sprintf(format, args...)))
	}
}

func (p *Provider) progress(op string, pct int) {
	if p.opts.Progress != nil {
		p.opts.Progress(redact.SAS(op), pct)
	}
}

// wait runs a started long operation to its end: it hands the resume
// token to OnPoller, reports progress and the wait (Options.Waits) and
// polls at PollFrequency (or the service's Retry-After).
func wait[T any](ctx context.Context, p *Provider, op string, poller *runtime.Poller[T]) (T, error) {
	handOff(p, op, poller)
	p.progress(op, 0)
	end := progress.WaitOf(p.opts.Waits).Wait(redact.SAS(op))
	res, err := poller.PollUntilDone(ctx, &runtime.PollUntilDoneOptions{Frequency: p.opts.PollFrequency})
	end()
	if err == nil {
		p.progress(op, 100)
	}
	return res, err
}

// waitDelete starts a delete with begin and waits for it to end. ARM
// answers a DELETE of a resource that is not there with 204 No Content at
// once, without an operation; waitDelete makes that the NotFound every
// target gives, so that callers can tell "already gone" from "deleted".
func waitDelete[T any](ctx context.Context, p *Provider, op, id string, begin func(context.Context) (*runtime.Poller[T], error)) error {
	var first *http.Response
	poller, err := begin(policy.WithCaptureResponse(ctx, &first))
	if err != nil {
		return err
	}
	if poller.Done() && first != nil && first.StatusCode == http.StatusNoContent {
		return azrules.DeletedNothing(id)
	}
	_, err = wait(ctx, p, op, poller)
	return err
}

// handOff gives a started operation's resume token to Options.OnPoller.
func handOff[T any](p *Provider, op string, poller *runtime.Poller[T]) {
	if p.opts.OnPoller != nil && !poller.Done() {
		if tok, err := poller.ResumeToken(); err == nil {
			p.opts.OnPoller(op, tok)
		}
	}
}

// The model helpers are armconv's, shared with the fake ARM.
func tagsIn(t cloud.Tags) map[string]*string { return armconv.Tags(t) }

func tagsOut(t map[string]*string) cloud.Tags { return armconv.TagsOf(t) }

func to[T any](v T) *T { return &v }

func deref[T any](p *T) T { return armconv.Deref(p) }

func strOf[T ~string](p *T) string { return armconv.StrOf(p) }

// optStr is nil for "" so the service applies its default.
func optStr[T ~string](s string) *T {
	if s == "" {
		return nil
	}
	v := T(s)
	return &v
}

func optInt32(n int) *int32 {
	if n <= 0 {
		return nil
	}
	v := int32(n)
	return &v
}

// rgFromID returns the resource group named in an ARM id ("" if none).
func rgFromID(id string) string {
	rid, err := cloud.ParseResourceID(id)
	if err != nil {
		return ""
	}
	return rid.ResourceGroup
}

// foldLocation folds a location name or display name as ARM compares them.
func foldLocation(s string) string { return armconv.FoldLocation(s) }
