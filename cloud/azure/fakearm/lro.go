package fakearm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
)

// Long operations on ARM's terms.
//
// The handlers are the SDK fake servers' (azfake.PollerResponder), which
// speak the SDK's private fake protocol (Fake-Poller-Status and a
// /get/fake/status URL). This layer drives such an answer to its end at
// once (the state change is made by then) and answers the client the way
// ARM does, as the REST spec examples show:
//
//   - PUT: 201 (create) or 200 (update) with the resource body in
//     provisioningState Creating/Updating and an Azure-AsyncOperation
//     header; disks answer 202 with provisioningState Updating
//     (Disk_Create_FromAnAzureComputeGalleryImage.json); storage accounts
//     answer 202 with a Location header and no body.
//   - PATCH: 200 with the body in Updating and Azure-AsyncOperation.
//   - DELETE: 202 with Location and Azure-AsyncOperation.
//   - POST (…/share, …/beginGetAccess, …/endGetAccess): 202 with Location
//     (Gallery_EnableCommunityGallery.json, whose 202 also carries the
//     sharing update; Disk_BeginGetAccess.json).
//
// An Azure-AsyncOperation URL answers {name, status, startTime, endTime,
// error}; a Location URL answers 202 while in progress, then the final
// body (e.g. {accessSAS}) with 200, or 204 for a DELETE. A GET of a
// resource whose operation is in progress shows its provisioningState.
// An image version's operation ends when its replication does.

// operation is a long operation the fake accepted.
type operation struct {
	id       string
	api      string
	method   string
	resource string // the request path: a resource id, or …/beginGetAccess
	state    string // provisioningState while in progress
	started  time.Time
	// polls is how many status polls still answer InProgress (Options.LROPolls).
	polls int
	// version is the key of the image version whose replication decides
	// the end ("" for other resources).
	version string
	// result is the final body of a Location-polled operation.
	result []byte
	// failure is the terminal error; noError fails without an error
	// object, as some services report a failed provisioning.
	failure *Error
	noError bool
	// status is the terminal status once reached.
	status string
	ended  time.Time
}

// Operation statuses (Azure-AsyncOperation status and provisioningState).
const (
	statusInProgress = "InProgress"
	statusSucceeded  = "Succeeded"
	statusFailed     = "Failed"
)

const (
	headerAsync    = "Azure-AsyncOperation"
	headerLocation = "Location"
	monitorParam   = "monitor"
)

// lroForm is how ARM answers one operation.
type lroForm struct {
	status   int    // initial status code
	state    string // provisioningState of the initial body ("" = no body)
	async    bool   // Azure-AsyncOperation header
	location bool   // Location header
	echo     bool   // the first answer carries the final body already
}

// formOf returns ARM's answer form for a long operation.
func formOf(api, method string, existed bool) lroForm {
	client, _, _ := strings.Cut(api, ".")
	switch {
	case client == "AccountsClient":
		return lroForm{status: http.StatusAccepted, location: true}
	case method == http.MethodPut && client == "DisksClient":
		if existed {
			return lroForm{status: http.StatusOK, state: "Updating", async: true}
		}
		return lroForm{status: http.StatusAccepted, state: "Updating", async: true}
	case method == http.MethodPut && existed, method == http.MethodPatch:
		return lroForm{status: http.StatusOK, state: "Updating", async: true}
	case method == http.MethodPut:
		return lroForm{status: http.StatusCreated, state: "Creating", async: true}
	case method == http.MethodDelete:
		return lroForm{status: http.StatusAccepted, async: true, location: true}
	case client == "GallerySharingProfileClient":
		// Gallery_EnableCommunityGallery.json: 202 with the SharingUpdate.
		return lroForm{status: http.StatusAccepted, location: true, echo: true}
	}
	return lroForm{status: http.StatusAccepted, location: true}
}

// lroFailure is an injected failure of one operation, registered by a
// handler (lroFault) and read when the operation is answered.
type lroFailure struct {
	err         *Error
	noError     bool
	bodyPolling bool
}

// finishFake drives an SDK fake poller answer to its terminal answer: the
// handler made its change when it answered first; the remaining answers
// only replay the queued responses.
func finishFake(inner policy.Transporter, req *http.Request, resp *http.Response) (*http.Response, error) {
	for i := 0; resp.Header.Get("Fake-Poller-Status") == statusInProgress; i++ {
		if i > 100 {
			return nil, fmt.Errorf("fakearm: the fake poller of %s never ended", req.URL.Path)
		}
		_ = resp.Body.Close()
		var err error
		if resp, err = inner.Do(req.Clone(req.Context())); err != nil {
			return nil, err
		}
	}
	return resp, nil
}

// answerLRO turns the terminal fake answer of a long operation into ARM's
// first answer and records the operation. reqBody is the request's body
// (the initial answer of a failed create echoes it, as ARM shows the
// resource it accepted).
func (f *Fake) answerLRO(req *http.Request, api string, final *http.Response, existed bool, reqBody []byte) *http.Response {
	body, _ := io.ReadAll(final.Body)
	_ = final.Body.Close()
	path := req.URL.Path
	k := strings.ToLower(path)
	form := formOf(api, req.Method, existed)

	f.mu.Lock()
	defer f.mu.Unlock()
	op := &operation{id: f.guid(), api: api, method: req.Method, resource: path, state: form.state,
		started: time.Now().UTC(), polls: f.pollCount()}
	var bodyPolling bool
	if fl := f.lroFail[k]; fl != nil {
		delete(f.lroFail, k)
		op.failure, op.noError, bodyPolling = fl.err, fl.noError, fl.bodyPolling
	}
	if strings.HasPrefix(api, "GalleryImageVersionsClient.") && (req.Method == http.MethodPut || req.Method == http.MethodPatch) {
		if _, ok := f.simResource(k); ok {
			op.version = k
			op.failure = nil // the version carries its own failure
		}
	}
	if form.state == "" {
		op.result = body
	}
	f.ops[op.id] = op
	if form.state != "" && op.version == "" {
		f.pending[k] = op
	}

	h := http.Header{}
	opURL := f.operationURL(req, op)
	if form.async && !bodyPolling {
		h.Set(headerAsync, opURL)
	}
	if form.location {
		h.Set(headerLocation, opURL+"&"+monitorParam+"=true")
	}
	f.setPollRetryAfter(h)
	var out []byte
	if form.echo {
		out = body
		h.Set("Content-Type", "application/json; charset=utf-8")
	}
	if form.state != "" {
		if !json.Valid(body) || !bytes.Contains(body, []byte(`"id"`)) {
			body = reqBody
		}
		out = withProvisioningState(body, form.state, path)
		h.Set("Content-Type", "application/json; charset=utf-8")
	}
	return respond(req, form.status, h, out)
}

// operationURL is the operation's status URL on the request's host:
// /subscriptions/{sub}/providers/{RP}/locations/{region}/operations/{id}.
func (f *Fake) operationURL(req *http.Request, op *operation) string {
	rp, kind := "Microsoft.Compute", "operations"
	if strings.HasPrefix(op.api, "AccountsClient.") {
		rp, kind = "Microsoft.Storage", "asyncoperations"
	}
	u := url.URL{Scheme: req.URL.Scheme, Host: req.URL.Host,
		Path:     fmt.Sprintf("/subscriptions/%s/providers/%s/locations/%s/%s/%s", f.sub, rp, f.operationRegion(op.resource), kind, op.id),
		RawQuery: "api-version=" + url.QueryEscape(req.URL.Query().Get("api-version"))}
	if u.Scheme == "" {
		u.Scheme = "https"
	}
	return u.String()
}

// operationRegion is the region of the resource an operation works on.
func (f *Fake) operationRegion(path string) string {
	k := strings.ToLower(path)
	for _, p := range []string{"/beginGetAccess", "/endGetAccess", "/share"} {
		k = strings.TrimSuffix(k, strings.ToLower(p))
	}
	if loc, ok := f.simResource(k); ok {
		return loc
	}
	return "global"
}

// operationFor returns the operation a status URL names, or nil.
func (f *Fake) operationFor(path string) *operation {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	n := len(segs)
	if n != 8 || !strings.EqualFold(segs[0], "subscriptions") || !strings.EqualFold(segs[4], "locations") ||
		(!strings.EqualFold(segs[6], "operations") && !strings.EqualFold(segs[6], "asyncoperations")) {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ops[segs[7]]
}

// progress returns an operation's status, and its error when it failed.
// poll marks a status poll, which consumes one of the InProgress polls
// and counts as a read of a replicating version. Called under f.mu.
func (f *Fake) progress(op *operation, poll bool) (string, *Error) {
	if op.status != "" {
		return op.status, op.failure
	}
	if op.polls > 0 {
		if poll {
			op.polls--
		}
		return statusInProgress, nil
	}
	status := statusSucceeded
	if op.version != "" {
		switch status, op.failure = f.versionStatus(op.version, poll); status {
		case statusInProgress:
			return status, nil
		case statusFailed:
			op.noError = op.failure == nil
		}
	} else if op.failure != nil || op.noError {
		status = statusFailed
	}
	op.status, op.ended = status, time.Now().UTC()
	delete(f.pending, strings.ToLower(op.resource))
	return status, op.failure
}

// answerPoll answers a status poll of op: the Azure-AsyncOperation form,
// or the Location form (…&monitor=true).
func (f *Fake) answerPoll(req *http.Request, op *operation) *http.Response {
	f.mu.Lock()
	status, failure := f.progress(op, true)
	opCopy := *op
	f.mu.Unlock()
	h := http.Header{"Content-Type": {"application/json; charset=utf-8"}}
	if strings.EqualFold(req.URL.Query().Get(monitorParam), "true") {
		switch {
		case status == statusInProgress:
			h = http.Header{headerLocation: {req.URL.String()}}
			f.setPollRetryAfter(h)
			return respond(req, http.StatusAccepted, h, nil)
		case status == statusFailed && failure != nil:
			e := *failure
			if retried(e.Status) || e.Status < 400 {
				// A Location poll reports a failure with its status code;
				// one the SDK would retry would hide it.
				e.Status = http.StatusBadRequest
			}
			return e.response(req, nil)
		case status == statusFailed:
			body, _ := json.Marshal(map[string]any{"properties": map[string]string{"provisioningState": statusFailed}})
			return respond(req, http.StatusOK, h, body)
		case op.method == http.MethodDelete:
			return respond(req, http.StatusNoContent, nil, nil)
		}
		return respond(req, http.StatusOK, h, opCopy.result)
	}
	doc := map[string]any{"name": op.id, "status": status, "startTime": opCopy.started.Format(time.RFC3339Nano)}
	if status == statusInProgress {
		f.setPollRetryAfter(h)
	} else {
		doc["endTime"] = opCopy.ended.Format(time.RFC3339Nano)
	}
	if failure != nil {
		doc["error"] = map[string]string{"code": failure.Code, "message": failure.Message}
	}
	body, _ := json.Marshal(doc)
	return respond(req, http.StatusOK, h, body)
}

// overlayState shows the provisioningState of a resource whose operation
// is in progress on a GET of it.
func (f *Fake) overlayState(req *http.Request, resp *http.Response) *http.Response {
	if req.Method != http.MethodGet || resp.StatusCode != http.StatusOK {
		return resp
	}
	f.mu.Lock()
	op := f.pending[strings.ToLower(req.URL.Path)]
	status := ""
	if op != nil {
		status, _ = f.progress(op, false)
	}
	f.mu.Unlock()
	if status != statusInProgress {
		return resp
	}
	return editBody(resp, func(doc map[string]any) bool {
		setProvisioningState(doc, op.state, req.URL.Path)
		return true
	})
}

// withProvisioningState sets properties.provisioningState (and the id,
// when the body has none) in a resource body.
func withProvisioningState(body []byte, state, id string) []byte {
	doc, _ := decodeJSON(body)
	setProvisioningState(doc, state, id)
	if out, err := json.Marshal(doc); err == nil {
		return out
	}
	return body
}

func setProvisioningState(doc map[string]any, state, id string) {
	if _, ok := doc["id"]; !ok {
		doc["id"] = id
		doc["name"] = id[strings.LastIndexByte(id, '/')+1:]
	}
	props, _ := doc["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	props["provisioningState"] = state
	doc["properties"] = props
}

// decodeJSON decodes a JSON object, its numbers as written.
func decodeJSON(body []byte) (map[string]any, error) {
	doc := map[string]any{}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	return doc, dec.Decode(&doc)
}

// editBody lets edit change the JSON object of resp's body and answers
// the edited body when edit reports a change (the body as it was when
// it is not an object).
func editBody(resp *http.Response, edit func(doc map[string]any) bool) *http.Response {
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if doc, derr := decodeJSON(body); err == nil && derr == nil && edit(doc) {
		if out, err := json.Marshal(doc); err == nil {
			body = out
		}
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Del("Content-Length")
	return resp
}

// retried reports whether the SDK's retry policy retries a status.
func retried(status int) bool {
	switch status {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

func respond(req *http.Request, status int, h http.Header, body []byte) *http.Response {
	if h == nil {
		h = http.Header{}
	}
	return &http.Response{
		StatusCode:    status,
		Status:        fmt.Sprintf("%d %s", status, http.StatusText(status)),
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}
}
