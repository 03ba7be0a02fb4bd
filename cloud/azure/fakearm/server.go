package fakearm

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
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

// route is an ARM operation: method and path pattern ("*" is any one
// segment; literal segments compare case-insensitively, as ARM's do, and
// are written in the casing the SDK fake server of the operation
// matches).
type route struct {
	method, pattern, api string
}

const (
	// The resource groups fake matches "resourcegroups", every other
	// server "resourceGroups" (as their REST specs spell them).
	rgPath      = "subscriptions/*/resourcegroups/*"
	inRGPath    = "subscriptions/*/resourceGroups/*"
	computePath = inRGPath + "/providers/Microsoft.Compute"
	galleryPath = computePath + "/galleries/*"
	defPath     = galleryPath + "/images/*"
	versionPath = defPath + "/versions/*"
	diskPath    = computePath + "/disks/*"
	imagePath   = computePath + "/images/*"
	accountPath = inRGPath + "/providers/Microsoft.Storage/storageAccounts/*"
	vmPath      = computePath + "/virtualMachines/*"
	vnetPath    = inRGPath + "/providers/Microsoft.Network/virtualNetworks/*"
)

var routes = []route{
	{"GET", "subscriptions/*", "Client.Get"},
	{"GET", "subscriptions/*/locations", "Client.NewListLocationsPager"},
	{"GET", rgPath, "ResourceGroupsClient.Get"},
	{"HEAD", rgPath, "ResourceGroupsClient.CheckExistence"},
	{"PUT", rgPath, "ResourceGroupsClient.CreateOrUpdate"},
	{"DELETE", rgPath, "ResourceGroupsClient.BeginDelete"},
	{"PUT", vnetPath, "Client.BeginCreateOrUpdateByID"},
	{"GET", vnetPath, "Client.GetByID"},
	{"GET", "subscriptions/*/providers/Microsoft.Compute/locations/*/publishers/*/artifacttypes/vmimage/offers/*/skus/*/versions", "VirtualMachineImagesClient.List"},
	{"GET", vmPath, "VirtualMachinesClient.Get"},
	{"PUT", vmPath, "VirtualMachinesClient.BeginCreateOrUpdate"},
	{"DELETE", vmPath, "VirtualMachinesClient.BeginDelete"},
	{"PUT", vmPath + "/runCommands/*", "VirtualMachineRunCommandsClient.BeginCreateOrUpdate"},
	{"GET", vmPath + "/runCommands/*", "VirtualMachineRunCommandsClient.GetByVirtualMachine"},
	{"DELETE", vmPath + "/runCommands/*", "VirtualMachineRunCommandsClient.BeginDelete"},
	{"GET", accountPath, "AccountsClient.GetProperties"},
	{"PUT", accountPath, "AccountsClient.BeginCreate"},
	{"POST", accountPath + "/listKeys", "AccountsClient.ListKeys"},
	{"GET", "subscriptions/*/providers/Microsoft.Storage/storageAccounts", "AccountsClient.NewListPager"},
	{"GET", "subscriptions/*/providers/Microsoft.Compute/galleries", "GalleriesClient.NewListPager"},
	{"GET", "subscriptions/*/providers/Microsoft.Compute/locations/*/communityGalleries/*", "CommunityGalleriesClient.Get"},
	{"GET", galleryPath, "GalleriesClient.Get"},
	{"PUT", galleryPath, "GalleriesClient.BeginCreateOrUpdate"},
	{"POST", galleryPath + "/share", "GallerySharingProfileClient.BeginUpdate"},
	{"GET", galleryPath + "/images", "GalleryImagesClient.NewListByGalleryPager"},
	{"GET", defPath, "GalleryImagesClient.Get"},
	{"PUT", defPath, "GalleryImagesClient.BeginCreateOrUpdate"},
	{"DELETE", defPath, "GalleryImagesClient.BeginDelete"},
	{"GET", defPath + "/versions", "GalleryImageVersionsClient.NewListByGalleryImagePager"},
	{"GET", versionPath, "GalleryImageVersionsClient.Get"},
	{"PUT", versionPath, "GalleryImageVersionsClient.BeginCreateOrUpdate"},
	{"PATCH", versionPath, "GalleryImageVersionsClient.BeginUpdate"},
	{"DELETE", versionPath, "GalleryImageVersionsClient.BeginDelete"},
	{"GET", imagePath, "ImagesClient.Get"},
	{"PUT", imagePath, "ImagesClient.BeginCreateOrUpdate"},
	{"PATCH", imagePath, "ImagesClient.BeginUpdate"},
	{"DELETE", imagePath, "ImagesClient.BeginDelete"},
	{"GET", diskPath, "DisksClient.Get"},
	{"PUT", diskPath, "DisksClient.BeginCreateOrUpdate"},
	{"DELETE", diskPath, "DisksClient.BeginDelete"},
	{"POST", diskPath + "/beginGetAccess", "DisksClient.BeginGrantAccess"},
	{"POST", diskPath + "/endGetAccess", "DisksClient.BeginRevokeAccess"},
}

// apiFor finds the SDK operation of a request and its path with the
// literal segments in the route's casing.
func apiFor(method, path string) (api, canonical string) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for _, r := range routes {
		if r.method != method {
			continue
		}
		pat := strings.Split(r.pattern, "/")
		if len(pat) != len(segs) {
			continue
		}
		ok := true
		for i, p := range pat {
			if p != "*" && !strings.EqualFold(p, segs[i]) {
				ok = false
				break
			}
		}
		if ok {
			out := make([]string, len(segs))
			for i, p := range pat {
				out[i] = segs[i]
				if p != "*" {
					out[i] = p
				}
			}
			return r.api, "/" + strings.Join(out, "/")
		}
	}
	return "", ""
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
