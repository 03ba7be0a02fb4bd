package fakearm

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/imgflow/imgflow/cloud"
)

// preflightState is what the validation pass's questions read: storage
// account names taken outside the fake's subscription, and the caller's
// permissions (nil: everything allowed).
type preflightState struct {
	taken map[string]bool // lower(name)
	perms []cloud.Permission
	// noVersions are regions (canonical names) the Microsoft.Compute
	// provider does not list for galleries/images/versions.
	noVersions map[string]bool
	// served are the accounts the blob backend has (lower(name)); nil:
	// any. Not Azure's rule but the emulator's: Azurite serves a fixed
	// list, so another name would be created and then unreachable.
	served map[string]bool
}

// ServeOnlyAccounts says the blob backend serves only these accounts (the
// emulator's Azurite --accounts): checkNameAvailability answers any other
// name unavailable and a PUT of it fails, both naming the flag to restart
// with, so a run is refused by its validation pass before any change.
func (f *Fake) ServeOnlyAccounts(names ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pre.served = map[string]bool{}
	for _, n := range names {
		f.pre.served[strings.ToLower(n)] = true
	}
}

// unservedMessage says why the emulator cannot hold an account, "" when
// it can. f.mu is held.
func (f *Fake) unservedMessage(name string) string {
	if f.pre.served == nil || f.pre.served[strings.ToLower(name)] {
		return ""
	}
	names := make([]string, 0, len(f.pre.served))
	for n := range f.pre.served {
		names = append(names, n)
	}
	sort.Strings(names)
	return fmt.Sprintf("The emulator's Azurite serves no storage account named %s: restart imgflow-emulator with --accounts %s,%s, or use one of those.", name, strings.Join(names, ","), name)
}

// WithholdImageVersions makes the subscription unable to create gallery
// image versions in regions (names or display names), as restricted
// regions are until the subscription is enabled for them: the provider's
// resource-type locations leave them out.
func (f *Fake) WithholdImageVersions(regions ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pre.noVersions == nil {
		f.pre.noVersions = map[string]bool{}
	}
	for _, r := range regions {
		f.pre.noVersions[f.regions.Canonical(r)] = true
	}
}

// TakeStorageAccountName makes name someone else's: checkNameAvailability
// answers AlreadyExists and a PUT of it StorageAccountAlreadyTaken.
func (f *Fake) TakeStorageAccountName(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pre.taken == nil {
		f.pre.taken = map[string]bool{}
	}
	f.pre.taken[strings.ToLower(name)] = true
}

// SetPermissions sets what the caller may do, at every scope, as
// Microsoft.Authorization permissions lists it; no argument restores the
// default, everything allowed ("*" actions and data actions).
func (f *Fake) SetPermissions(perms ...cloud.Permission) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pre.perms = perms
}

func (f *Fake) nameTaken(name string) bool { return f.pre.taken[strings.ToLower(name)] }

// preflightAnswer answers the requests of the validation pass that no SDK
// client of the Azure target makes: Storage checkNameAvailability and
// Microsoft.Authorization permissions. ok is false for other requests.
func (f *Fake) preflightAnswer(req *http.Request) (resp *http.Response, ok bool) {
	path := strings.ToLower(req.URL.Path)
	switch {
	case req.Method == http.MethodPost && path == strings.ToLower("/subscriptions/"+f.sub+"/providers/Microsoft.Storage/checkNameAvailability"):
		var in struct{ Name, Type string }
		data, _ := io.ReadAll(req.Body)
		if err := json.Unmarshal(data, &in); err != nil {
			return newErr(http.StatusBadRequest, "InvalidRequestContent", "The request content was invalid and could not be deserialized.").response(req, nil), true
		}
		return jsonResponse(req, f.checkName(in.Name)), true
	case req.Method == http.MethodGet && strings.HasSuffix(path, "/providers/microsoft.authorization/permissions"):
		return jsonResponse(req, f.permissions()), true
	case req.Method == http.MethodGet && path == strings.ToLower("/subscriptions/"+f.sub+"/providers/Microsoft.Compute"):
		return jsonResponse(req, f.computeProvider()), true
	}
	return nil, false
}

// checkName answers as Storage does (StorageAccountCheckNameAvailability,
// api-version 2025-01-01, storage.json's CheckNameAvailabilityResult):
// nameAvailable, and for a name that is not, reason AlreadyExists or
// AccountNameInvalid with a message.
func (f *Fake) checkName(name string) map[string]any {
	if cloud.ValidateStorageAccountName(name) != nil {
		return map[string]any{"nameAvailable": false, "reason": "AccountNameInvalid",
			"message": name + " is not a valid storage account name. Storage account name must be between 3 and 24 characters in length and use numbers and lower-case letters only."}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if msg := f.unservedMessage(name); msg != "" && f.findAccount(name) == nil {
		return map[string]any{"nameAvailable": false, "reason": "AccountNameInvalid", "message": msg}
	}
	if f.nameTaken(name) || f.findAccount(name) != nil {
		return map[string]any{"nameAvailable": false, "reason": "AlreadyExists",
			"message": "The storage account named " + name + " is already taken."}
	}
	return map[string]any{"nameAvailable": true}
}

// permissions answers Permissions_ListForResourceGroup and its
// subscription and resource forms (GetPermissions.json, api-version
// 2022-04-01): {"value": [{actions, notActions, dataActions,
// notDataActions}]}, one entry per role, the same at every scope here.
func (f *Fake) permissions() map[string]any {
	f.mu.Lock()
	perms := f.pre.perms
	f.mu.Unlock()
	if perms == nil {
		perms = []cloud.Permission{{Actions: []string{"*"}, DataActions: []string{"*"}}}
	}
	orEmpty := func(s []string) []string { return append([]string{}, s...) }
	value := make([]map[string][]string, 0, len(perms))
	for _, p := range perms {
		value = append(value, map[string][]string{"actions": orEmpty(p.Actions), "notActions": orEmpty(p.NotActions),
			"dataActions": orEmpty(p.DataActions), "notDataActions": orEmpty(p.NotDataActions)})
	}
	return map[string]any{"value": value}
}

// computeProvider answers Providers_Get for Microsoft.Compute as the
// specs' example does (Microsoft.Resources GetProvider.json, api-version
// 2021-04-01): namespace, registrationState and resourceTypes, each with
// its locations as display names. Only the gallery types are listed.
func (f *Fake) computeProvider() map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	var all, versions []string
	for _, l := range f.locations {
		if l.RegionType != cloud.RegionTypePhysical {
			continue
		}
		name := l.DisplayName
		if name == "" {
			name = l.Name
		}
		all = append(all, name)
		if !f.pre.noVersions[l.Name] {
			versions = append(versions, name)
		}
	}
	typ := func(name string, locs []string) map[string]any {
		return map[string]any{"resourceType": name, "locations": locs, "apiVersions": []string{"2025-03-03"}}
	}
	types := []map[string]any{typ("galleries", all), typ("galleries/images", all), typ("galleries/images/versions", versions)}
	return map[string]any{"id": "/subscriptions/" + f.sub + "/providers/Microsoft.Compute", "namespace": "Microsoft.Compute",
		"registrationState": "Registered", "resourceTypes": types}
}

func jsonResponse(req *http.Request, v any) *http.Response {
	body, _ := json.Marshal(v)
	h := http.Header{}
	h.Set("Content-Type", "application/json; charset=utf-8")
	return respond(req, http.StatusOK, h, body)
}

// isPreflightPath reports whether preflightAnswer serves the request.
func isPreflightPath(r *http.Request) bool {
	path := strings.ToLower(r.URL.Path)
	return strings.HasSuffix(path, "/providers/microsoft.storage/checknameavailability") ||
		strings.HasSuffix(path, "/providers/microsoft.authorization/permissions") ||
		(r.Method == http.MethodGet && strings.HasSuffix(path, "/providers/microsoft.compute"))
}
