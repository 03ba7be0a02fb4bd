package fakearm

import (
	"net/http"

	azfake "github.com/Azure/azure-sdk-for-go/sdk/azcore/fake"
)

// The handlers (operations) share one shape: take the fake's lock, look
// the resource up or change it, and answer the result or ARM's error.
// answer, start and list are that shape for a plain call, a long
// operation and a listing; op runs under f.mu.

// answer runs op and answers 200 with its result, or its error.
func answer[T any](f *Fake, op func() (T, *Error)) (resp azfake.Responder[T], errResp azfake.ErrorResponder) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out, err := op()
	if err != nil {
		errResp.SetError(err)
		return resp, errResp
	}
	resp.SetResponse(http.StatusOK, out, nil)
	return resp, errResp
}

// start runs op and accepts the long operation with status (201 for a
// PUT that answers the resource, 202 otherwise) and op's result, or
// answers op's error.
func start[T any](f *Fake, status int, op func() (T, *Error)) (resp azfake.PollerResponder[T], errResp azfake.ErrorResponder) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out, err := op()
	if err != nil {
		errResp.SetError(err)
		return resp, errResp
	}
	return accept(f, status, out), errResp
}
