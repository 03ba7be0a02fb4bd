package fakearm

import (
	"net/http"

	"github.com/imgflow/imgflow/cloud"

	azfake "github.com/Azure/azure-sdk-for-go/sdk/azcore/fake"
)

// The handlers (operations) share one shape: take the fake's lock, look
// the resource up or change it, and answer the result or ARM's error.
// answer, reply, start and list are that shape for a plain call, a plain
// call whose success status varies, a long operation and a listing; op
// runs under f.mu.

// answer runs op and answers 200 with its result, or its error.
func answer[T any](f *Fake, op func() (T, *Error)) (resp azfake.Responder[T], errResp azfake.ErrorResponder) {
	return reply(f, func() (T, int, *Error) {
		out, err := op()
		return out, http.StatusOK, err
	})
}

// reply runs op and answers the status op chose with its result (ARM's
// 201 for a PUT that created, 204 or 404 for a HEAD), or its error.
func reply[T any](f *Fake, op func() (T, int, *Error)) (resp azfake.Responder[T], errResp azfake.ErrorResponder) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out, status, err := op()
	if err != nil {
		errResp.SetError(err)
		return resp, errResp
	}
	resp.SetResponse(status, out, nil)
	return resp, errResp
}

// start runs op and accepts the long operation with status (201 for a
// create, 202 for a delete …), its result the terminal answer, or fails
// the call with op's error.
func start[T any](f *Fake, status int, op func() (T, *Error)) (resp azfake.PollerResponder[T], errResp azfake.ErrorResponder) {
	return startWith(f, func() (T, int, *Error) {
		out, err := op()
		return out, status, err
	})
}

// startDelete is start for a DELETE: ARM answers 204 No Content, at once
// and without an operation, for a resource that is not there
// (RPC-Delete-V1-01: a long DELETE answers 202 or 204); a missing resource
// group or parent still fails (404 ResourceGroupNotFound,
// ParentResourceNotFound).
func startDelete[T any](f *Fake, op func() (T, *Error)) (resp azfake.PollerResponder[T], errResp azfake.ErrorResponder) {
	return startWith(f, func() (T, int, *Error) {
		out, err := op()
		if err != nil && err.Code == cloud.CodeResourceNotFound {
			var none T
			return none, http.StatusNoContent, nil
		}
		return out, http.StatusAccepted, err
	})
}

// startWith is start where op chooses the status (ARM's 201 for a PUT that
// created, 200 for one that updated).
func startWith[T any](f *Fake, op func() (T, int, *Error)) (resp azfake.PollerResponder[T], errResp azfake.ErrorResponder) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out, status, err := op()
	if err != nil {
		errResp.SetError(err)
		return resp, errResp
	}
	return accept(f, status, out), errResp
}

// list runs op and answers its result as the one page of a listing, or
// makes the listing at path fail with op's error (failPage).
func list[T any](f *Fake, path string, op func() (T, *Error)) (resp azfake.PagerResponder[T]) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out, err := op()
	if err != nil {
		f.failPage(path, err)
		var empty T
		resp.AddPage(http.StatusOK, empty, nil)
		return resp
	}
	resp.AddPage(http.StatusOK, out, nil)
	return resp
}
