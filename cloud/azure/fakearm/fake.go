// Package fakearm is a stateful fake of the Azure Resource Manager APIs
// imgflow's Azure target calls, for tests.
//
// It is built on the SDK's own fake servers (armcompute/v7/fake,
// armresources/v3/fake, armstorage/v2/fake, armsubscriptions/fake): their
// handlers (one per ARM operation, see operations.go) convert the SDK
// models to package cloud's values and call the one simulated Azure
// (cloud/azsim, sim.go), which holds the resources and applies Azure's
// rules as it does for the local target; the fake keeps no resource of
// its own. The transport answers on ARM's terms, as the REST spec examples do (see
// lro.go and testdata/azure/contract): long operations answer 201/200
// with provisioningState Creating/Updating and Azure-AsyncOperation, or
// 202 with Location, and report InProgress before their end; a version's
// PUT or PATCH ends only after its replication (ReplicationDelay);
// compute answers locations as display names ("West Europe"); paths
// match without case. Faults can be injected: any status with
// Retry-After answered before the request reaches the handler (429 then
// success after the client's retry, 409, 500…; a retry before the
// Retry-After passed on the fake's clock is throttled again, clock.go), a long operation failing on
// its last poll (with or without an error object), and a replication
// region ending Failed.
//
// Use Transport in arm.ClientOptions to drive the real SDK clients in
// process, or NewServer to serve the same fake over HTTP (for `imgflow run
// --target azure` with IMGFLOW_AZURE_ARM_ENDPOINT). With a BlobBackend
// (Azurite) VHD sources are checked for real and managed disks hold data
// that their access SAS can read.
package fakearm

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	azfake "github.com/Azure/azure-sdk-for-go/sdk/azcore/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	computefake "github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7/fake"
	resourcesfake "github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armresources/v3/fake"
	subsfake "github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/resources/armsubscriptions/fake"
	storagefake "github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/storage/armstorage/v2/fake"
	"github.com/google/uuid"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/cloud/azure/internal/armconv"
)

// DefaultSubscriptionID is the subscription of a Fake made without one.
const DefaultSubscriptionID = "00000000-0000-4000-8000-00000000f0a1"

// Options configure a Fake. The zero value is ready to use.
type Options struct {
	// SubscriptionID is the fake subscription (default DefaultSubscriptionID).
	SubscriptionID string
	// Locations are the subscription's locations (default:
	// azrules.DefaultLocations, the local target's too).
	Locations []cloud.Location
	// Rand is the source of GUIDs (public names, disk SAS ids); nil means
	// crypto/rand.
	Rand io.Reader
	// LROPolls is how many status polls of a long operation answer
	// InProgress after its accepted first answer (201 Creating, 202…); by
	// default none: the first poll sees the operation's end.
	LROPolls int
	// ReplicationPolls is how many reads of a version's replication
	// ($expand=ReplicationStatus, or a status poll of its operation) it
	// takes a newly added target region to reach Completed. 0 (and no
	// ReplicationDelay) completes at once, as the local target does.
	ReplicationPolls int
	// ReplicationDelay is how long replication to each newly added
	// target region takes; RegionDelays overrides it per region (by
	// name). A version's PUT or PATCH ends only when every region did, as
	// on Azure, where it takes hours. Keep these to milliseconds in tests.
	ReplicationDelay time.Duration
	RegionDelays     map[string]time.Duration
	// Blob, when set, is the blob service behind the fake's storage
	// accounts (Azurite): VHD sources are read and checked, and managed
	// disks get their data there.
	Blob *BlobBackend
	// Marketplace replaces the marketplace's images and their versions
	// (default cloud.SimulatedMarketplace), the same in every region.
	Marketplace map[cloud.MarketplaceImage][]string
	// PollRetryAfter, when set, is the Retry-After (on the fake's clock)
	// of a long operation's accepted answer and of its status answers
	// while in progress, as ARM sends (see clock.go).
	PollRetryAfter time.Duration
	// PageSize is how many items a page of a list holds (default
	// DefaultPageSize; see paging.go).
	PageSize int
	// Speedup makes the fake's clock run faster than real time (default
	// 1): a fault's Retry-After holds its throttle for RetryAfter/Speedup,
	// and Sleep waits d/Speedup (see clock.go).
	Speedup int
}

// Fake is the fake ARM. It is safe for concurrent use.
type Fake struct {
	opts Options
	sub  string
	rand io.Reader

	// accountNames mirrors the names of accounts (lower(name)), for the
	// blob gate, which must not wait for mu: Azurite reads a copy source
	// through it while the fake, holding mu, waits for the copy.
	accountNames sync.Map

	// sim holds every resource (the one simulation, sim.go); what the
	// fake keeps beside it is HTTP's: operations, faults, requests. data
	// is where the resources' data is (the blob backend; nil without one).
	sim  simulation
	data *blobData
	// featureOrder is, per image definition (lower(id)), its features'
	// names in the order its last PUT gave them, as ARM answers them.
	featureOrder map[string][]string

	mu sync.Mutex

	locations []cloud.Location
	regions   azrules.Regions

	faults      []*Fault
	lroFail     map[string]*lroFailure // lower(request path) → terminal failure
	ops         map[string]*operation  // operation id → long operation
	pending     map[string]*operation  // lower(resource id) → operation in progress
	pageFail    map[string]*Error      // lower(request path) → list failure
	failRegions map[string]string      // region → details
	requests    []Request
	pre         preflightState // preflight.go

	compute   *computefake.ServerFactoryTransport
	resources *resourcesfake.ServerFactoryTransport
	storage   *storagefake.ServerFactoryTransport
	subs      *subsfake.ServerFactoryTransport
}

// New returns an empty fake subscription.
func New(opts Options) *Fake {
	f := &Fake{
		opts:         opts,
		sub:          opts.SubscriptionID,
		rand:         opts.Rand,
		lroFail:      map[string]*lroFailure{},
		featureOrder: map[string][]string{},
		ops:          map[string]*operation{},
		pending:      map[string]*operation{},
		pageFail:     map[string]*Error{},
		failRegions:  map[string]string{},
	}
	if f.sub == "" {
		f.sub = DefaultSubscriptionID
	}
	if f.rand == nil {
		f.rand = rand.Reader
	}
	f.locations = opts.Locations
	if f.locations == nil {
		f.locations = azrules.DefaultLocations()
	}
	f.regions = azrules.NewRegions(f.locations)
	if opts.Blob != nil {
		f.data = newBlobData(opts.Blob)
	}
	f.sim = newSimulation(f)
	srv := newServers(f)
	f.compute = computefake.NewServerFactoryTransport(srv.compute)
	f.resources = resourcesfake.NewServerFactoryTransport(srv.resources)
	f.storage = storagefake.NewServerFactoryTransport(srv.storage)
	f.subs = subsfake.NewServerFactoryTransport(srv.subs)
	return f
}

// SubscriptionID is the fake subscription's id.
func (f *Fake) SubscriptionID() string { return f.sub }

// Credential is a credential the SDK clients accept with the fake.
func (f *Fake) Credential() *azfake.TokenCredential { return &azfake.TokenCredential{} }

// Error is an ARM error answer: an HTTP status with a JSON body
// {"error":{"code","message"}} and the x-ms-error-code header.
type Error struct {
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message) }

func (e *Error) response(req *http.Request, header http.Header) *http.Response {
	body, _ := json.Marshal(map[string]any{"error": map[string]string{"code": e.Code, "message": e.Message}})
	h := header.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("x-ms-error-code", e.Code)
	return respond(req, e.Status, h, body)
}

func newErr(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Fault is an injected failure. A request fault answers matching requests
// itself (before the handler), Times times; with LRO the operation is
// accepted, reports InProgress and fails on its last poll instead.
type Fault struct {
	// API is the SDK operation, e.g. "GalleryImageVersionsClient.BeginCreateOrUpdate"
	// or "GalleriesClient.Get"; "" matches any.
	API string
	// Method is the HTTP method; "" matches any.
	Method string
	// Path is a case-insensitive substring of the request path (a
	// resource name or id); "" matches any.
	Path string
	// Status and Code make the answer; Message defaults to a generic one.
	Status  int
	Code    string
	Message string
	// RetryAfter sets the Retry-After header (whole seconds, rounded up;
	// retry-after-ms as well under a second).
	RetryAfter time.Duration
	// Times is how many requests the fault answers (0 means 1, negative
	// means every matching request).
	Times int
	// Polls makes a request fault also answer LRO status polls.
	Polls bool
	// LRO makes the fault a long operation that fails on its last poll:
	// that poll answers 200 with status Failed and the error (Code,
	// Message) in its body, as Azure reports failed operations (a
	// Location poll answers the error with Status). An image version so
	// failed stays, in provisioningState Failed, as on Azure.
	LRO bool
	// NoError (with LRO) fails the operation without an error object:
	// the status is Failed and nothing says why.
	NoError bool
	// BodyPolling (with LRO) answers the PUT without Azure-AsyncOperation,
	// so clients poll the resource's provisioningState (ARM's third form).
	BodyPolling bool

	// until is the end of the Retry-After the fault last sent, on the
	// real clock: matching requests before it are throttled again.
	until time.Time
}

// Inject adds a fault. Faults are matched in the order they were added.
func (f *Fake) Inject(fl Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if fl.Times == 0 {
		fl.Times = 1
	}
	if fl.Message == "" {
		fl.Message = fmt.Sprintf("Injected fault: %s.", http.StatusText(fl.Status))
	}
	if fl.Code == "" {
		fl.Code = strings.ReplaceAll(http.StatusText(fl.Status), " ", "")
	}
	f.faults = append(f.faults, &fl)
}

// PendingFaults counts faults that have not answered all their requests.
func (f *Fake) PendingFaults() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, fl := range f.faults {
		if fl.Times != 0 {
			n++
		}
	}
	return n
}

// FailReplication makes replication to region (a name or display name)
// end Failed with details, for versions that add it from now on: at once,
// or after the region's replication delay. The version's operation then
// fails and the version stays in provisioningState Failed.
func (f *Fake) FailReplication(region, details string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failRegions[f.regions.Canonical(region)] = details
}

// SetReplicationDelay sets Options.ReplicationDelay for replication
// started from now on (e.g. after a test's setup ran at full speed).
func (f *Fake) SetReplicationDelay(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.opts.ReplicationDelay = d
}

// Request is one request the fake answered.
type Request struct {
	Method string
	Path   string
	API    string
	Status int
	Poll   bool
}

// Requests returns every request answered so far.
func (f *Fake) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

// matchFault finds and consumes a request fault for the request.
func (f *Fake) matchFault(api, method, path string, poll bool, lro bool) *Fault {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, fl := range f.faults {
		if fl.LRO != lro {
			continue
		}
		held := f.throttleHeld(fl)
		if fl.Times == 0 && held == nil {
			continue
		}
		if fl.API != "" && !strings.EqualFold(fl.API, api) {
			continue
		}
		if fl.Method != "" && !strings.EqualFold(fl.Method, method) {
			continue
		}
		if fl.Path != "" && !strings.Contains(strings.ToLower(path), strings.ToLower(fl.Path)) {
			continue
		}
		if poll && !fl.Polls && !lro {
			continue
		}
		if held != nil {
			return held
		}
		if fl.Times > 0 {
			fl.Times--
		}
		f.holdThrottle(fl)
		c := *fl
		return &c
	}
	return nil
}

// lroFault is called by handlers under f.mu: a matching LRO fault makes
// the operation fail on its last poll; the handler then changes nothing.
func (f *Fake) lroFault(ctx context.Context, method, path string) *Error {
	api, _ := ctx.Value(apiNameKey()).(string)
	for _, fl := range f.faults {
		if fl.Times == 0 || !fl.LRO {
			continue
		}
		if fl.API != "" && !strings.EqualFold(fl.API, api) {
			continue
		}
		if fl.Method != "" && !strings.EqualFold(fl.Method, method) {
			continue
		}
		if fl.Path != "" && !strings.Contains(strings.ToLower(path), strings.ToLower(fl.Path)) {
			continue
		}
		if fl.Times > 0 {
			fl.Times--
		}
		e := &Error{Status: fl.Status, Code: fl.Code, Message: fl.Message}
		fail := &lroFailure{err: e, noError: fl.NoError, bodyPolling: fl.BodyPolling}
		if fl.NoError {
			fail.err = nil
		}
		f.lroFail[strings.ToLower(path)] = fail
		return e
	}
	return nil
}

// Transport is the fake as a policy.Transporter: put it in
// arm.ClientOptions.Transport (with any credential, e.g. Credential()) and
// every armcompute, armresources, armstorage and armsubscriptions client
// made with those options talks to this fake.
func (f *Fake) Transport() policy.Transporter { return transport{f} }

type transport struct{ f *Fake }

func (t transport) Do(req *http.Request) (*http.Response, error) { return t.f.do(req) }

func (f *Fake) do(req *http.Request) (*http.Response, error) {
	record := func(api string, poll bool, resp *http.Response) {
		f.mu.Lock()
		f.requests = append(f.requests, Request{Method: req.Method, Path: req.URL.Path, API: api, Status: resp.StatusCode, Poll: poll})
		f.mu.Unlock()
	}
	if resp, ok := f.preflightAnswer(req); ok {
		record("", false, resp)
		return resp, nil
	}
	if req.Method == http.MethodGet {
		if op := f.operationFor(req.URL.Path); op != nil {
			resp := f.faultAnswer(req, op.api, op.resource, true)
			if resp == nil {
				resp = f.answerPoll(req, op)
			}
			record(op.api, true, resp)
			return resp, nil
		}
	}
	api, canonical := apiFor(req.Method, req.URL.Path)
	if named, _ := req.Context().Value(apiNameKey()).(string); named != "" {
		api = named
	}
	if api == "" {
		return nil, fmt.Errorf("fakearm: no operation for %s %s", req.Method, req.URL.Path)
	}
	// The SDK fake servers match paths in their own casing and dispatch
	// on the API name, which the final GET of an ARM poller lacks.
	req = req.WithContext(context.WithValue(req.Context(), apiNameKey(), api))
	if canonical != "" && canonical != req.URL.Path {
		req.URL.Path, req.URL.RawPath = canonical, ""
	}
	path := req.URL.Path
	if resp := f.faultAnswer(req, api, path, false); resp != nil {
		record(api, false, resp)
		return resp, nil
	}
	var inner policy.Transporter
	client, _, _ := strings.Cut(api, ".")
	switch client {
	case "ResourceGroupsClient":
		inner = f.resources
	case "AccountsClient":
		inner = f.storage
	case "Client":
		inner = f.subs
		if strings.HasSuffix(api, "ByID") {
			inner = f.resources // the generic resources client
		}
	default:
		inner = f.compute
	}
	var reqBody []byte
	if req.Body != nil && req.Body != http.NoBody {
		reqBody, _ = io.ReadAll(req.Body)
		_ = req.Body.Close()
		req.Body = io.NopCloser(bytes.NewReader(reqBody))
	}
	_, existed := f.simResource(path)
	// The SDK fakes panic ("send on closed channel") when the request's
	// context ends while a handler runs: handlers never block, so they
	// run to the end whatever the caller does.
	innerReq := req.WithContext(context.WithoutCancel(req.Context()))
	resp, err := inner.Do(innerReq)
	if err == nil && resp.Header.Get("Fake-Poller-Status") != "" {
		if resp, err = finishFake(inner, innerReq, resp); err == nil {
			if req.Method == http.MethodDelete && resp.StatusCode == http.StatusNoContent {
				_ = resp.Body.Close()
				resp = respond(req, http.StatusNoContent, nil, nil) // nothing to delete
			} else {
				resp = f.answerLRO(req, api, resp, existed, reqBody)
			}
		}
	}
	if err != nil {
		var ae *Error
		if !asError(err, &ae) {
			return nil, err
		}
		resp = ae.response(req, nil)
	}
	resp.Request = req
	if req.Method == http.MethodGet {
		f.mu.Lock()
		if fe := f.pageFail[strings.ToLower(path)]; fe != nil {
			delete(f.pageFail, strings.ToLower(path))
			resp = fe.response(req, nil)
		}
		f.mu.Unlock()
		resp = f.overlayState(req, resp)
	}
	if displaysLocation(client) && !strings.Contains(strings.ToLower(path), "/microsoft.network/") {
		resp = f.displayLocations(resp)
	}
	if req.Method == http.MethodGet {
		resp = f.page(req, api, resp)
	}
	record(api, false, resp)
	return resp, nil
}

// faultAnswer answers a request with a matching request fault, or
// returns nil.
func (f *Fake) faultAnswer(req *http.Request, api, path string, poll bool) *http.Response {
	fl := f.matchFault(api, req.Method, path, poll, false)
	if fl == nil {
		return nil
	}
	h := http.Header{}
	if fl.RetryAfter > 0 {
		secs := int((fl.RetryAfter + time.Second - 1) / time.Second)
		h.Set("Retry-After", fmt.Sprint(secs))
		if fl.RetryAfter < time.Second {
			h.Set("retry-after-ms", fmt.Sprint(fl.RetryAfter.Milliseconds()))
		}
	}
	return (&Error{Status: fl.Status, Code: fl.Code, Message: fl.Message}).response(req, h)
}

// failPage makes the list request at path fail with err. Pager handlers
// use it instead of PagerResponder.AddError, which would leave the SDK
// fake's pager state behind and break the next list of that path: they
// add an empty page and the transport answers err instead.
func (f *Fake) failPage(path string, err *Error) {
	f.pageFail[strings.ToLower(path)] = err
}

// pollCount is the number of InProgress polls of a long operation.
func (f *Fake) pollCount() int { return max(0, f.opts.LROPolls) }

// accept queues a long operation's answers for the SDK fake server:
// accepted, then result; the transport turns them into ARM's answers
// (see lro.go).
// A 204 (a DELETE of nothing) is the terminal answer at once.
func accept[T any](_ *Fake, initial int, result T) (resp azfake.PollerResponder[T]) {
	if initial == http.StatusNoContent {
		resp.SetTerminalResponse(http.StatusNoContent, result, nil)
		return resp
	}
	resp.AddNonTerminalResponse(initial, nil)
	resp.SetTerminalResponse(http.StatusOK, result, nil)
	return resp
}

// guid returns a random GUID from the fake's source.
func (f *Fake) guid() string {
	id, err := uuid.NewRandomFromReader(f.rand)
	if err != nil {
		panic(fmt.Sprintf("fakearm: GUID: %v", err))
	}
	return id.String()
}

func key(id string) string { return strings.ToLower(id) }

func to[T any](v T) *T { return &v }

func deref[T any](p *T) T { return armconv.Deref(p) }

func strOf[T ~string](p *T) string { return armconv.StrOf(p) }
