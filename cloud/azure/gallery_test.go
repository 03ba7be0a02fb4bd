package azure_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azure"
	"github.com/imgflow/imgflow/cloud/azure/fakearm"
	"github.com/imgflow/imgflow/cloud/cloudtest"
	"github.com/imgflow/imgflow/cloud/ensure"
)

// armRequest is one ARM request as it went on the wire.
type armRequest struct {
	method, path string
	body         map[string]any
}

// bodyRecorder records the method, path and JSON body of every ARM request.
type bodyRecorder struct {
	mu   sync.Mutex
	reqs []armRequest
}

func (r *bodyRecorder) Do(req *policy.Request) (*http.Response, error) {
	rec := armRequest{method: req.Raw().Method, path: req.Raw().URL.Path}
	if b := req.Body(); b != nil {
		data, err := io.ReadAll(b)
		if err != nil {
			return nil, err
		}
		if err := req.RewindBody(); err != nil {
			return nil, err
		}
		_ = json.Unmarshal(data, &rec.body)
	}
	r.mu.Lock()
	r.reqs = append(r.reqs, rec)
	r.mu.Unlock()
	return req.Next()
}

// to returns the recorded requests to path (a suffix) with method.
func (r *bodyRecorder) to(method, suffix string) []armRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []armRequest
	for _, q := range r.reqs {
		if q.method == method && strings.HasSuffix(strings.ToLower(q.path), strings.ToLower(suffix)) {
			out = append(out, q)
		}
	}
	return out
}

// TestCommunityGalleryWireShape checks the requests against the REST spec
// examples: the gallery's first PUT carries the community sharing profile
// (CommunityGallery_Create.json), sharing is a POST /share with
// EnableCommunity (Gallery_EnableCommunityGallery.json) and no further PUT.
func TestCommunityGalleryWireShape(t *testing.T) {
	rec := &bodyRecorder{}
	w := newWorld(t, fakearm.Options{}, func(o *azure.Options) {
		o.ARM.PerCallPolicies = append(o.ARM.PerCallPolicies, rec)
	})
	_, _, err := ensure.EnsureResourceGroup(w.ctx, w.p, cloud.ResourceGroup{Name: "rg", Location: loc})
	require.NoError(t, err)
	info := cloud.CommunityInfo{PublicNamePrefix: "flatcar", PublisherURI: "https://www.flatcar.org/",
		PublisherContact: "infra@flatcar-linux.org", EULA: "https://kinvolk.io/legal/open-source/"}
	_, outcome, err := ensure.EnsureGallery(w.ctx, w.p, cloud.Gallery{Name: "flatcar", ResourceGroup: "rg", Location: loc, Community: &info})
	require.NoError(t, err)
	assert.Equal(t, cloud.Created, outcome)

	puts := rec.to(http.MethodPut, "/galleries/flatcar")
	require.Len(t, puts, 1)
	assert.Equal(t, map[string]any{
		"permissions": "Community",
		"communityGalleryInfo": map[string]any{
			"publicNamePrefix": "flatcar", "publisherUri": "https://www.flatcar.org/",
			"publisherContact": "infra@flatcar-linux.org", "eula": "https://kinvolk.io/legal/open-source/",
		},
	}, puts[0].body["properties"].(map[string]any)["sharingProfile"])

	g, outcome, err := ensure.EnsureCommunity(w.ctx, w.p, "rg", "flatcar")
	require.NoError(t, err)
	assert.Equal(t, cloud.Created, outcome)
	assert.Regexp(t, `^flatcar-[0-9a-f-]{36}$`, g.PublicName())
	// Read back as ARM answers it (publicNames, no prefix), the gallery is
	// the same community gallery.
	require.NotNil(t, g.Community, "a public community gallery read back as private")
	assert.Equal(t, info, *g.Community)
	shares := rec.to(http.MethodPost, "/galleries/flatcar/share")
	require.Len(t, shares, 1)
	assert.Equal(t, map[string]any{"operationType": "EnableCommunity"}, shares[0].body)
	assert.Len(t, rec.to(http.MethodPut, "/galleries/flatcar"), 1, "sharing writes no profile")

	// A rerun sends nothing but reads.
	_, outcome, err = ensure.EnsureGallery(w.ctx, w.p, cloud.Gallery{Name: "flatcar", ResourceGroup: "rg", Location: loc, Community: &info})
	require.NoError(t, err)
	assert.Equal(t, cloud.Exists, outcome)
	_, outcome, err = ensure.EnsureCommunity(w.ctx, w.p, "rg", "flatcar")
	require.NoError(t, err)
	assert.Equal(t, cloud.Exists, outcome)
	assert.Len(t, rec.to(http.MethodPut, "/galleries/flatcar"), 1)
	assert.Len(t, rec.to(http.MethodPost, "/galleries/flatcar/share"), 1)
}

// TestPrivateGalleryIsNotConverted: the ensure refuses before any write,
// and ARM (the fake) refuses the PUT itself, leaving the gallery private.
func TestPrivateGalleryIsNotConverted(t *testing.T) {
	rec := &bodyRecorder{}
	w := newWorld(t, fakearm.Options{}, func(o *azure.Options) {
		o.ARM.PerCallPolicies = append(o.ARM.PerCallPolicies, rec)
	})
	_, _, err := ensure.EnsureResourceGroup(w.ctx, w.p, cloud.ResourceGroup{Name: "rg", Location: loc})
	require.NoError(t, err)
	_, _, err = ensure.EnsureGallery(w.ctx, w.p, cloud.Gallery{Name: "private", ResourceGroup: "rg", Location: loc})
	require.NoError(t, err)
	info := cloud.CommunityInfo{PublicNamePrefix: "flatcar", PublisherURI: "https://www.flatcar.org/",
		PublisherContact: "infra@flatcar-linux.org", EULA: "https://kinvolk.io/legal/open-source/"}

	_, _, err = ensure.EnsureGallery(w.ctx, w.p, cloud.Gallery{Name: "private", ResourceGroup: "rg", Location: loc, Community: &info})
	require.ErrorContains(t, err, "Azure cannot convert a private gallery to a community gallery")
	_, _, err = ensure.EnsureCommunity(w.ctx, w.p, "rg", "private")
	require.ErrorContains(t, err, "Azure cannot convert a private gallery to a community gallery")
	assert.Len(t, rec.to(http.MethodPut, "/galleries/private"), 1, "only the creation was sent")
	assert.Empty(t, rec.to(http.MethodPost, "/galleries/private/share"))

	_, err = w.p.CreateGallery(w.ctx, cloud.Gallery{Name: "private", ResourceGroup: "rg", Location: loc, Community: &info})
	cloudtest.RequireError(t, err, http.StatusConflict, cloud.CodePropertyChangeNotAllowed, "sharingProfile.permissions")
	_, err = w.p.ShareCommunity(w.ctx, "rg", "private")
	cloudtest.RequireError(t, err, http.StatusBadRequest, cloud.CodeInvalidParameter)

	g, err := w.p.GetGallery(w.ctx, "rg", "private")
	require.NoError(t, err)
	assert.Nil(t, g.Community)
	assert.False(t, g.CommunityEnabled)
}
