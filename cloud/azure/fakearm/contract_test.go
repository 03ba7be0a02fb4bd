package fakearm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud/azure/fakearm"
)

// contractCase is one fixture of testdata/azure/contract (see its README).
type contractCase struct {
	Follows string `json:"follows"`
	Request struct {
		Method     string          `json:"method"`
		Path       string          `json:"path"`
		APIVersion string          `json:"apiVersion"`
		Query      string          `json:"query"`
		Body       json.RawMessage `json:"body"`
	} `json:"request"`
	// Inject are faults the fake answers this request with (a 429 with
	// Retry-After, a 409); Retry is the answer to the same request sent
	// again once the Retry-After passed on the fake's clock.
	Inject []struct {
		API               string `json:"api"`
		Method            string `json:"method"`
		Status            int    `json:"status"`
		Code              string `json:"code"`
		Message           string `json:"message"`
		RetryAfterSeconds int    `json:"retryAfterSeconds"`
	} `json:"inject"`
	Retry      *expectation `json:"retry"`
	Response   expectation  `json:"response"`
	InProgress *expectation `json:"inProgress"`
	Final      *expectation `json:"final"`
	Gone       bool         `json:"gone"`
}

type expectation struct {
	Status    int      `json:"status"`
	Headers   []string `json:"headers"`
	NoHeaders []string `json:"noHeaders"`
	Query     string   `json:"query"`
	Body      any      `json:"body"`
	// NonEmpty and Absent are dotted paths into the body
	// ("properties.instanceView.exitCode").
	NonEmpty []string `json:"nonEmpty"`
	Absent   []string `json:"absent"`
}

const contractDir = "../../../testdata/azure/contract"

// TestContract sends the fixtures' requests, shaped as the REST spec
// examples, to the fake over HTTP in order and checks ARM's answers: the
// status, the long-operation headers, the first body, the operation's
// status answers until it ends, and the final body.
func TestContract(t *testing.T) {
	srv := fakearm.NewServer(t, fakearm.Options{ReplicationDelay: 300 * time.Millisecond, Speedup: 100000})
	runContractDir(t, srv, contractDir)
	// ARM matches path segments without case.
	gallery := "/subscriptions/" + srv.SubscriptionID() + "/resourceGroups/myResourceGroup/providers/Microsoft.Compute/galleries/myGalleryName"
	for _, p := range []string{gallery, strings.ToLower(gallery), strings.ToUpper(gallery[:40]) + gallery[40:]} {
		status, _, body := call(t, http.MethodGet, srv.URL+p+"?api-version=2025-03-03", nil)
		assert.Equal(t, http.StatusOK, status, "%s: %s", p, body)
	}
}

// runContractDir runs the fixtures of dir in file order against srv,
// stopping at the first that fails (later cases build on it).
func runContractDir(t *testing.T, srv *fakearm.Server, dir string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	sort.Strings(files)
	for _, file := range files {
		var c contractCase
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		data = bytes.ReplaceAll(data, []byte("{subscriptionId}"), []byte(srv.SubscriptionID()))
		require.NoError(t, json.Unmarshal(data, &c), file)
		require.NotEmpty(t, c.Follows, "%s names the example it follows", file)
		ok := t.Run(strings.TrimSuffix(filepath.Base(file), ".json"), func(t *testing.T) {
			runContract(t, srv, c)
		})
		if !ok {
			return
		}
	}
}

func runContract(t *testing.T, srv *fakearm.Server, c contractCase) {
	path := strings.ReplaceAll(c.Request.Path, "{subscriptionId}", srv.SubscriptionID())
	resURL := srv.URL + path + "?api-version=" + c.Request.APIVersion
	reqBody := bytes.ReplaceAll(c.Request.Body, []byte("{subscriptionId}"), []byte(srv.SubscriptionID()))
	reqURL := resURL
	if c.Request.Query != "" {
		reqURL += "&" + c.Request.Query
	}
	var wait time.Duration
	for _, fl := range c.Inject {
		d := time.Duration(fl.RetryAfterSeconds) * time.Second
		srv.Inject(fakearm.Fault{API: fl.API, Method: fl.Method, Status: fl.Status, Code: fl.Code, Message: fl.Message, RetryAfter: d})
		wait = max(wait, d)
	}
	status, h, body := call(t, c.Request.Method, reqURL, reqBody)
	check(t, "first answer", c.Response, status, h, body)
	if c.Retry != nil {
		require.NoError(t, srv.Sleep(context.Background(), wait))
		status, h, body = call(t, c.Request.Method, reqURL, reqBody)
		check(t, "answer to the retry", *c.Retry, status, h, body)
	}
	async, loc := h.Get("Azure-AsyncOperation"), h.Get("Location")
	if c.InProgress != nil {
		status, h, body = call(t, http.MethodGet, resURL+"&"+c.InProgress.Query, nil)
		check(t, "while in progress", *c.InProgress, status, h, body)
	}
	if async != "" {
		final := pollAsync(t, async)
		assert.Equal(t, "Succeeded", final["status"], "%v", final)
		assert.NotEmpty(t, final["endTime"])
	}
	if c.Final == nil {
		return
	}
	switch {
	case c.Request.Method == http.MethodPut || c.Request.Method == http.MethodPatch:
		if async == "" && loc != "" {
			status, h, body = pollLocation(t, loc)
			break
		}
		u := resURL
		if c.Final.Query != "" {
			u += "&" + c.Final.Query
		}
		status, h, body = call(t, http.MethodGet, u, nil)
	default:
		require.NotEmpty(t, loc, "a POST or DELETE without Azure-AsyncOperation answers Location")
		status, h, body = pollLocation(t, loc)
	}
	check(t, "final answer", *c.Final, status, h, body)
	if c.Gone {
		status, _, _ = call(t, http.MethodGet, resURL, nil)
		assert.Equal(t, http.StatusNotFound, status, "deleted")
	}
}

func call(t *testing.T, method, url string, body []byte) (int, http.Header, []byte) {
	t.Helper()
	var r io.Reader
	if len(body) > 0 {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	require.NoError(t, err)
	if r != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, out
}

// pollAsync reads an Azure-AsyncOperation URL until its status ends,
// checking the operation-status shape on the way.
func pollAsync(t *testing.T, url string) map[string]any {
	t.Helper()
	require.Contains(t, url, "/operations/", "an operation-status URL")
	for range 200 {
		status, _, body := call(t, http.MethodGet, url, nil)
		require.Equal(t, http.StatusOK, status, "%s", body)
		var doc map[string]any
		require.NoError(t, json.Unmarshal(body, &doc), "%s", body)
		require.NotEmpty(t, doc["name"])
		require.NotEmpty(t, doc["startTime"])
		if doc["status"] != "InProgress" {
			return doc
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("operation %s never ended", url)
	return nil
}

// pollLocation reads a Location URL until it stops answering 202.
func pollLocation(t *testing.T, url string) (int, http.Header, []byte) {
	t.Helper()
	for range 200 {
		status, h, body := call(t, http.MethodGet, url, nil)
		if status != http.StatusAccepted {
			return status, h, body
		}
		if next := h.Get("Location"); next != "" {
			url = next
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("operation %s never ended", url)
	return 0, nil, nil
}

func check(t *testing.T, what string, want expectation, status int, h http.Header, body []byte) {
	t.Helper()
	assert.Equal(t, want.Status, status, "%s: %s", what, body)
	for _, k := range want.Headers {
		assert.NotEmpty(t, h.Get(k), "%s: header %s", what, k)
	}
	for _, k := range want.NoHeaders {
		assert.Empty(t, h.Get(k), "%s: no header %s", what, k)
	}
	if want.Body == nil && len(want.NonEmpty) == 0 && len(want.Absent) == 0 {
		return
	}
	var got map[string]any
	if bytes.HasPrefix(bytes.TrimSpace(body), []byte("[")) {
		// A JSON array answer (VirtualMachineImages_List) is checked as
		// {"value": […]}.
		body = append(append([]byte(`{"value":`), body...), '}')
	}
	require.NoError(t, json.Unmarshal(body, &got), "%s: %s", what, body)
	if want.Body != nil {
		if diff := subset(want.Body, any(got), "$"); diff != "" {
			t.Errorf("%s: %s\nbody: %s", what, diff, body)
		}
	}
	for _, k := range want.NonEmpty {
		assert.NotEmpty(t, at(got, k), "%s: %s", what, k)
	}
	for _, k := range want.Absent {
		assert.Nil(t, at(got, k), "%s: %s is not answered", what, k)
	}
}

// at is the value at a dotted path of a JSON object, or nil; a number
// indexes an array ("value.0.name").
func at(doc map[string]any, path string) any {
	var v any = doc
	for _, k := range strings.Split(path, ".") {
		switch c := v.(type) {
		case map[string]any:
			v = c[k]
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			v = c[i]
		default:
			return nil
		}
	}
	return v
}

// subset reports where got lacks a field of want or differs from it
// (lists element by element, as prefixes).
func subset(want, got any, at string) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: want an object, got %v", at, got)
		}
		for k, v := range w {
			if d := subset(v, g[k], at+"."+k); d != "" {
				return d
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) < len(w) {
			return fmt.Sprintf("%s: want %d elements, got %v", at, len(w), got)
		}
		for i := range w {
			if d := subset(w[i], g[i], fmt.Sprintf("%s[%d]", at, i)); d != "" {
				return d
			}
		}
	default:
		if !reflect.DeepEqual(want, got) {
			return fmt.Sprintf("%s: want %v, got %v", at, want, got)
		}
	}
	return ""
}
