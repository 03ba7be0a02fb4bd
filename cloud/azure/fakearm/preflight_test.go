package fakearm_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azure/fakearm"
)

func preflightCall(t *testing.T, f *fakearm.Fake, method, path, body string) map[string]any {
	t.Helper()
	req := httptest.NewRequest(method, "http://fake"+path, strings.NewReader(body))
	w := httptest.NewRecorder()
	f.Handler().ServeHTTP(w, req)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	data, _ := io.ReadAll(w.Body)
	var out map[string]any
	require.NoError(t, json.Unmarshal(data, &out))
	return out
}

// checkNameAvailability answers as Storage does: available, taken
// elsewhere (AlreadyExists) or invalid (AccountNameInvalid).
func TestCheckNameAvailabilityAnswersAsStorage(t *testing.T) {
	f := fakearm.New(fakearm.Options{})
	f.TakeStorageAccountName("someonesname")
	path := "/subscriptions/" + f.SubscriptionID() + "/providers/Microsoft.Storage/checkNameAvailability?api-version=2025-01-01"
	check := func(name string) map[string]any {
		return preflightCall(t, f, http.MethodPost, path, `{"name":"`+name+`","type":"Microsoft.Storage/storageAccounts"}`)
	}
	assert.Equal(t, map[string]any{"nameAvailable": true}, check("freename"))
	taken := check("someonesname")
	assert.Equal(t, false, taken["nameAvailable"])
	assert.Equal(t, "AlreadyExists", taken["reason"])
	assert.Equal(t, "The storage account named someonesname is already taken.", taken["message"])
	bad := check("Bad-Name")
	assert.Equal(t, "AccountNameInvalid", bad["reason"])
}

// An emulator whose Azurite serves a fixed list refuses other names in
// checkNameAvailability, naming the flag, so the validation pass stops
// the run before any change.
func TestCheckNameAvailabilityRefusesAnAccountTheBlobBackendLacks(t *testing.T) {
	f := fakearm.New(fakearm.Options{})
	f.ServeOnlyAccounts("served1", "served2")
	path := "/subscriptions/" + f.SubscriptionID() + "/providers/Microsoft.Storage/checkNameAvailability?api-version=2025-01-01"
	check := func(name string) map[string]any {
		return preflightCall(t, f, http.MethodPost, path, `{"name":"`+name+`","type":"Microsoft.Storage/storageAccounts"}`)
	}
	assert.Equal(t, map[string]any{"nameAvailable": true}, check("served2"))
	other := check("elsewhere")
	assert.Equal(t, false, other["nameAvailable"])
	assert.Equal(t, "The emulator's Azurite serves no storage account named elsewhere: restart imgflow-emulator with --accounts served1,served2,elsewhere, or use one of those.", other["message"])
}

// Permissions are everything by default, else what the test set; the
// Compute provider lists gallery versions where they are not withheld.
func TestPermissionsAndVersionRegions(t *testing.T) {
	f := fakearm.New(fakearm.Options{})
	scope := "/subscriptions/" + f.SubscriptionID() + "/resourceGroups/rg/providers/Microsoft.Authorization/permissions?api-version=2022-04-01"
	all := preflightCall(t, f, http.MethodGet, scope, "")
	assert.Equal(t, []any{map[string]any{"actions": []any{"*"}, "notActions": []any{}, "dataActions": []any{"*"}, "notDataActions": []any{}}}, all["value"])
	f.SetPermissions(cloud.Permission{Actions: []string{"*"}, NotActions: []string{"Microsoft.Compute/galleries/share/action"}})
	some := preflightCall(t, f, http.MethodGet, scope, "")
	assert.Equal(t, []any{"Microsoft.Compute/galleries/share/action"}, some["value"].([]any)[0].(map[string]any)["notActions"])

	f.WithholdImageVersions("jioindiawest")
	prov := preflightCall(t, f, http.MethodGet, "/subscriptions/"+f.SubscriptionID()+"/providers/Microsoft.Compute?api-version=2021-04-01", "")
	var versions, galleries []any
	for _, rt := range prov["resourceTypes"].([]any) {
		m := rt.(map[string]any)
		switch m["resourceType"] {
		case "galleries/images/versions":
			versions = m["locations"].([]any)
		case "galleries":
			galleries = m["locations"].([]any)
		}
	}
	assert.Contains(t, galleries, "Jio India West")
	assert.NotContains(t, versions, "Jio India West")
	assert.Contains(t, versions, "West Europe")
}
