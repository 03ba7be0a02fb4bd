package azure

import (
	"context"
	"net/http"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"

	"github.com/imgflow/imgflow/cloud"
)

// The Azure target answers the validation pass's questions (overlay's
// Preflight) with plain ARM calls.
var _ cloud.Preflighter = (*Provider)(nil)

// API versions of the preflight calls, as the REST specs' examples use
// them: Storage StorageAccountCheckNameAvailability.json (2025-01-01),
// Authorization GetPermissions.json (2022-04-01).
const (
	storageAPIVersion     = "2025-01-01"
	permissionsAPIVersion = "2022-04-01"
)

// StorageAccountNameAvailability implements cloud.Preflighter:
// POST /subscriptions/{id}/providers/Microsoft.Storage/checkNameAvailability.
func (p *Provider) StorageAccountNameAvailability(ctx context.Context, name string) (cloud.NameAvailability, error) {
	var out struct {
		NameAvailable *bool  `json:"nameAvailable"`
		Reason        string `json:"reason"`
		Message       string `json:"message"`
	}
	path := "/subscriptions/" + p.sub + "/providers/Microsoft.Storage/checkNameAvailability"
	body := map[string]string{"name": name, "type": "Microsoft.Storage/storageAccounts"}
	if err := p.armCall(ctx, http.MethodPost, path, storageAPIVersion, body, &out); err != nil {
		return cloud.NameAvailability{}, opError("check storage account name", name, azErr(err, path))
	}
	return cloud.NameAvailability{Available: out.NameAvailable != nil && *out.NameAvailable, Reason: out.Reason, Message: out.Message}, nil
}

// Permissions implements cloud.Preflighter: GET
// {scope}/providers/Microsoft.Authorization/permissions, every page.
func (p *Provider) Permissions(ctx context.Context, scope string) ([]cloud.Permission, error) {
	type page struct {
		Value []struct {
			Actions        []string `json:"actions"`
			NotActions     []string `json:"notActions"`
			DataActions    []string `json:"dataActions"`
			NotDataActions []string `json:"notDataActions"`
		} `json:"value"`
		NextLink string `json:"nextLink"`
	}
	var out []cloud.Permission
	next := strings.TrimRight(scope, "/") + "/providers/Microsoft.Authorization/permissions"
	version := permissionsAPIVersion
	for next != "" {
		var pg page
		if err := p.armCall(ctx, http.MethodGet, next, version, nil, &pg); err != nil {
			return nil, opError("read permissions at", scope, azErr(err, scope))
		}
		for _, v := range pg.Value {
			out = append(out, cloud.Permission{Actions: v.Actions, NotActions: v.NotActions, DataActions: v.DataActions, NotDataActions: v.NotDataActions})
		}
		next, version = pg.NextLink, "" // a nextLink carries its query
	}
	return out, nil
}

// BlobAuth implements cloud.Preflighter from Options.StorageKey and
// Options.StorageAuth.
func (p *Provider) BlobAuth(string) cloud.BlobAuthMode {
	switch {
	case p.opts.StorageAuth == StorageAuthAAD:
		return cloud.BlobAuthToken
	case p.opts.StorageKey != nil:
		return cloud.BlobAuthGiven
	case p.opts.StorageAuth == StorageAuthKey:
		return cloud.BlobAuthKeys
	}
	return cloud.BlobAuthEither
}

// rawARM is the ARM pipeline (credential, retry, redaction) for the
// calls no SDK client of the target makes: the fake ARM serves them apart
// from its SDK operations (fakearm's preflight.go).
type rawARM struct{ c *arm.Client }

// armCall sends one request through the ARM pipeline (credential, retry,
// redaction) and decodes the 200 answer into out. pathOrURL is a path on
// the ARM endpoint or a whole nextLink.
func (p *Provider) armCall(ctx context.Context, method, pathOrURL, apiVersion string, body, out any) error {
	url := pathOrURL
	if !strings.HasPrefix(url, "http") {
		url = runtime.JoinPaths(p.raw.c.Endpoint(), pathOrURL)
	}
	req, err := runtime.NewRequest(ctx, method, url)
	if err != nil {
		return err
	}
	if apiVersion != "" {
		q := req.Raw().URL.Query()
		q.Set("api-version", apiVersion)
		req.Raw().URL.RawQuery = q.Encode()
	}
	req.Raw().Header.Set("Accept", "application/json")
	if body != nil {
		if err := runtime.MarshalAsJSON(req, body); err != nil {
			return err
		}
	}
	resp, err := p.raw.c.Pipeline().Do(req)
	if err != nil {
		return err
	}
	if !runtime.HasStatusCode(resp, http.StatusOK) {
		return runtime.NewResponseError(resp)
	}
	return runtime.UnmarshalAsJSON(resp, out)
}

// resourcesAPIVersion is the Providers_Get API version of the REST specs'
// example (Microsoft.Resources GetProvider.json, 2021-04-01).
const resourcesAPIVersion = "2021-04-01"

// markVersionRegions sets NoImageVersions on the physical locations the
// Microsoft.Compute provider does not list for galleries/images/versions
// (GET /subscriptions/{id}/providers/Microsoft.Compute; its locations are
// display names).
func (p *Provider) markVersionRegions(ctx context.Context, locs []cloud.Location) error {
	var prov struct {
		ResourceTypes []struct {
			ResourceType string   `json:"resourceType"`
			Locations    []string `json:"locations"`
		} `json:"resourceTypes"`
	}
	path := "/subscriptions/" + p.sub + "/providers/Microsoft.Compute"
	if err := p.armCall(ctx, http.MethodGet, path, resourcesAPIVersion, nil, &prov); err != nil {
		return opError("read the regions of gallery image versions in subscription", p.sub, azErr(err, path))
	}
	for _, rt := range prov.ResourceTypes {
		if !strings.EqualFold(rt.ResourceType, "galleries/images/versions") {
			continue
		}
		offered := map[string]bool{}
		for _, l := range rt.Locations {
			offered[foldLocation(l)] = true
		}
		for i := range locs {
			l := &locs[i]
			l.NoImageVersions = l.RegionType == cloud.RegionTypePhysical && !offered[foldLocation(l.Name)] && !offered[foldLocation(l.DisplayName)]
		}
	}
	return nil
}
