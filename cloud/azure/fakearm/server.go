package fakearm

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
)

// ClientOptions are ARM client options driving the SDK clients against
// this fake in process (with Credential()); retries wait a millisecond
// unless the fake sends Retry-After.
func (f *Fake) ClientOptions() *arm.ClientOptions {
	return &arm.ClientOptions{
		ClientOptions: azcore.ClientOptions{
			Transport: f.Transport(),
			Retry:     policy.RetryOptions{RetryDelay: time.Millisecond, MaxRetryDelay: 3 * time.Second},
		},
		DisableRPRegistration: true,
	}
}

// Handler serves the fake over HTTP: each request is mapped to its SDK
// operation by method and path (status polls of long operations to the
// operation in flight at that path) and answered by the same fake servers
// as Transport.
func (f *Fake) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := r.URL.Path
		api, _ := apiFor(r.Method, path)
		if api == "" && !isPreflightPath(r) && (r.Method != http.MethodGet || f.operationFor(path) == nil) {
			writeResp(w, (&Error{Status: http.StatusNotFound, Code: "InvalidResourceType",
				Message: "fakearm: no operation for " + r.Method + " " + path}).response(r, nil))
			return
		}
		req := r.Clone(r.Context())
		req.RequestURI = ""
		req.URL.Scheme = "http"
		if r.TLS != nil {
			req.URL.Scheme = "https"
		}
		req.URL.Host = r.Host
		resp, err := f.do(req)
		if err != nil {
			writeResp(w, (&Error{Status: http.StatusInternalServerError, Code: "InternalServerError", Message: err.Error()}).response(r, nil))
			return
		}
		writeResp(w, resp)
	})
}

func writeResp(w http.ResponseWriter, resp *http.Response) {
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// Server is a Fake served over HTTP.
type Server struct {
	*Fake
	// URL is the ARM endpoint, e.g. http://127.0.0.1:41234.
	URL string
}

// NewServer serves a new Fake over HTTP until the test ends. Point
// `imgflow run --target azure` at it with Env (IMGFLOW_AZURE_ARM_ENDPOINT
// and AZURE_SUBSCRIPTION_ID), or azure.New with an arm.ClientOptions whose
// cloud configuration has the ResourceManager endpoint URL,
// InsecureAllowCredentialWithHTTP and any token credential.
func NewServer(t testing.TB, opts Options) *Server {
	f := New(opts)
	srv := httptest.NewServer(f.Handler())
	t.Cleanup(srv.Close)
	return &Server{Fake: f, URL: srv.URL}
}

// Env is the environment that points imgflow's Azure target at this
// server (test only).
func (s *Server) Env() map[string]string {
	return map[string]string{
		"IMGFLOW_AZURE_ARM_ENDPOINT": s.URL,
		"AZURE_SUBSCRIPTION_ID":      s.SubscriptionID(),
	}
}
