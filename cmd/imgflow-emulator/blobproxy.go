package main

import (
	"net/http"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
)

// accountGate fronts Azurite's path-style endpoint (/{account}/…): an
// account that does not exist in the fake ARM gets 404 ResourceNotFound,
// as a request to a storage account that was never created fails on
// Azure. Azurite serves every account it was started with, so without
// the gate a workflow's plan would see each of them as taken by someone
// else. always are accounts served regardless (the fake's managed disk
// data). Requests carrying internalHeader (the fake's own, made while it
// holds its lock) pass without asking exists.
func accountGate(azurite string, exists func(account string) bool, always ...string) (http.Handler, error) {
	target, err := url.Parse(azurite)
	if err != nil {
		return nil, err
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	// Accounts seen to exist: Azurite reads a copy source through the
	// gate while the fake, holding its lock, waits for the copy; the
	// source's account was used (and so seen) before. Accounts are never
	// deleted, so a positive answer stays true.
	var known sync.Map
	exists = func(ask func(string) bool) func(string) bool {
		return func(account string) bool {
			k := strings.ToLower(account)
			if _, ok := known.Load(k); ok {
				return true
			}
			if ask(account) {
				known.Store(k, true)
				return true
			}
			return false
		}
	}(exists)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		account, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		if r.Header.Get(internalHeader) != "" {
			r.Header.Del(internalHeader)
			proxy.ServeHTTP(w, r)
			return
		}
		for _, a := range always {
			if strings.EqualFold(a, account) {
				proxy.ServeHTTP(w, r)
				return
			}
		}
		if account == "" || !exists(account) {
			w.Header().Set("x-ms-error-code", "ResourceNotFound")
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusNotFound)
			if r.Method != http.MethodHead {
				_, _ = w.Write([]byte(`<?xml version="1.0" encoding="utf-8"?><Error><Code>ResourceNotFound</Code><Message>The specified resource does not exist.</Message></Error>`))
			}
			return
		}
		proxy.ServeHTTP(w, r)
	}), nil
}

// internalHeader marks the fake ARM's own blob requests (not an x-ms-
// header, so no signature covers it).
const internalHeader = "Imgflow-Emulator-Internal"

// markInternal is the blob client policy adding internalHeader.
type markInternal struct{}

func (markInternal) Do(req *policy.Request) (*http.Response, error) {
	req.Raw().Header.Set(internalHeader, "1")
	return req.Next()
}
