package fakearm

import (
	"fmt"
	"html"
	"net/http"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/sas"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/service"

	"github.com/imgflow/imgflow/cloud/azure/fakeaad"
)

// StorageAudience is the token audience of Azure Storage.
const StorageAudience = "https://storage.azure.com"

// AuthGate fronts ARM (the fake's Transport) the way ARM's gateway checks
// a request's bearer token against a token issuer: a token that is not
// the issuer's, is for another audience or has expired gets 401 with
// WWW-Authenticate and the error code ARM sends
// (ExpiredAuthenticationToken, InvalidAuthenticationToken,
// InvalidAuthenticationTokenAudience); the others reach next.
func AuthGate(next policy.Transporter, issuer *fakeaad.Issuer, audience string) policy.Transporter {
	return authGate{next: next, issuer: issuer, audience: audience}
}

type authGate struct {
	next     policy.Transporter
	issuer   *fakeaad.Issuer
	audience string
}

func (g authGate) Do(req *http.Request) (*http.Response, error) {
	tok, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return (&Error{Status: http.StatusUnauthorized, Code: "AuthenticationFailed",
			Message: "Authentication failed. The 'Authorization' header is missing."}).response(req, armChallenge("")), nil
	}
	if terr := g.issuer.Check(tok, g.audience); terr != nil {
		return (&Error{Status: http.StatusUnauthorized, Code: terr.Code, Message: terr.Message}).response(req, armChallenge(terr.Message)), nil
	}
	return g.next.Do(req)
}

// armChallenge is the WWW-Authenticate of ARM's 401.
func armChallenge(desc string) http.Header {
	v := `Bearer authorization_uri="https://login.windows.net/", error="invalid_token"`
	if desc != "" {
		v += `, error_description="` + strings.ReplaceAll(desc, `"`, `'`) + `"`
	}
	return http.Header{"Www-Authenticate": {v}, "X-Ms-Failure-Cause": {"gateway"}}
}

// BlobAuthGate fronts a path-style blob service (the fake's BlobGate
// over Azurite) the way Azure Storage checks bearer tokens: an expired,
// unknown or misdirected token gets 401 InvalidAuthenticationInfo with
// WWW-Authenticate (Storage's answer); a good one is passed on with the
// account's SAS in its place, as plain Azurite takes no tokens. Shared
// key and SAS requests pass as they are.
func BlobAuthGate(next http.Handler, issuer *fakeaad.Issuer, key func(account string) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		if terr := issuer.Check(tok, StorageAudience); terr != nil {
			w.Header().Set("Www-Authenticate", "Bearer authorization_uri=https://login.microsoftonline.com/"+fakeaad.TenantID+"/oauth2/authorize resource_id="+StorageAudience)
			w.Header().Set("x-ms-error-code", "InvalidAuthenticationInfo")
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusUnauthorized)
			if r.Method != http.MethodHead {
				fmt.Fprintf(w, `<?xml version="1.0" encoding="utf-8"?><Error><Code>InvalidAuthenticationInfo</Code><Message>Server failed to authenticate the request. Please refer to the information in the www-authenticate header.</Message><AuthenticationErrorDetail>%s</AuthenticationErrorDetail></Error>`,
					html.EscapeString(terr.Message))
			}
			return
		}
		account, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		q, err := accountSAS(account, key(account))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		r = r.Clone(r.Context())
		r.Header.Del("Authorization")
		if r.URL.RawQuery != "" {
			q = r.URL.RawQuery + "&" + q
		}
		r.URL.RawQuery = q
		next.ServeHTTP(w, r)
	})
}

// accountSAS is an account SAS allowing everything on blobs for an hour.
func accountSAS(account, key string) (string, error) {
	cred, err := service.NewSharedKeyCredential(account, key)
	if err != nil {
		return "", err
	}
	perms := sas.AccountPermissions{Read: true, Write: true, Delete: true, List: true, Add: true, Create: true, Update: true, Process: true, Tag: true}
	types := sas.AccountResourceTypes{Service: true, Container: true, Object: true}
	qp, err := sas.AccountSignatureValues{Protocol: sas.ProtocolHTTPSandHTTP, ExpiryTime: time.Now().Add(time.Hour).UTC(),
		Permissions: perms.String(), ResourceTypes: types.String()}.SignWithSharedKey(cred)
	if err != nil {
		return "", err
	}
	return qp.Encode(), nil
}
