package fakearm_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud/azure/fakearm"
)

// TestSimulationRefusalsReachHTTP: the rules the fake leaves to the
// simulation answer over HTTP with their status, ARM code (body and
// x-ms-error-code) and message: a group cannot move, a gallery name is
// unique per subscription, a definition's identity cannot change.
func TestSimulationRefusalsReachHTTP(t *testing.T) {
	srv := fakearm.NewServer(t, fakearm.Options{})
	sub := srv.URL + "/subscriptions/" + srv.SubscriptionID()
	put := func(path, api, body string) (int, http.Header, string) {
		status, h, out := call(t, http.MethodPut, sub+path+"?api-version="+api, []byte(body))
		return status, h, string(out)
	}
	for _, rg := range []string{"a", "b"} {
		status, _, body := put("/resourcegroups/"+rg, "2022-09-01", `{"location":"westeurope"}`)
		require.Equal(t, http.StatusCreated, status, body)
	}
	status, h, body := put("/resourcegroups/a", "2022-09-01", `{"location":"eastus"}`)
	assert.Equal(t, http.StatusConflict, status)
	assert.Equal(t, "InvalidResourceGroupLocation", h.Get("x-ms-error-code"))
	assert.Contains(t, body, "The Resource group already exists in location 'westeurope'.")

	gallery := func(rg string) string { return "/resourceGroups/" + rg + "/providers/Microsoft.Compute/galleries/g" }
	status, _, body = put(gallery("a"), "2025-03-03", `{"location":"westeurope"}`)
	require.Equal(t, http.StatusCreated, status, body)
	status, h, body = put(gallery("b"), "2025-03-03", `{"location":"westeurope"}`)
	assert.Equal(t, http.StatusConflict, status)
	assert.Equal(t, "Conflict", h.Get("x-ms-error-code"))
	assert.Contains(t, body, "is not unique within the subscription")

	def := gallery("a") + "/images/d"
	props := func(sku string) string {
		return `{"location":"westeurope","properties":{"osType":"Linux","osState":"Generalized","identifier":{"publisher":"p","offer":"o","sku":"` + sku + `"}}}`
	}
	status, _, body = put(def, "2025-03-03", props("s"))
	require.Equal(t, http.StatusCreated, status, body)
	status, h, body = put(def, "2025-03-03", props("other"))
	assert.Equal(t, http.StatusConflict, status, body)
	assert.Equal(t, "PropertyChangeNotAllowed", h.Get("x-ms-error-code"))
}
