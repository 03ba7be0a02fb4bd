package azure

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/internal/redact"
)

// Error codes the Azure target makes up for failures the services report
// without one; Azure's own codes are in package cloud.
const (
	// CodeCopyFailed: a server-side copy that ended failed or aborted.
	CodeCopyFailed = "CopyFailed"
	// CodeMD5Mismatch: a copy whose content MD5 differs from the source's.
	CodeMD5Mismatch = "Md5Mismatch"
	// CodeOperationFailed: a long operation that ended Failed (or
	// Canceled) without an error code. ARM defines none for that case.
	CodeOperationFailed = "OperationFailed"
)

// maxBodyInError bounds the answer quoted in an error.
const maxBodyInError = 2048

// operationState reads the final state of a failed long operation from
// its last answer (status of an operation-status body, or
// properties.provisioningState of a resource) and the answer itself,
// shortened, for the error message.
func operationState(resp *http.Response) (state, body string) {
	if resp == nil {
		return "Failed", ""
	}
	data, err := runtime.Payload(resp)
	if err != nil {
		return "Failed", ""
	}
	var doc struct {
		Status     string `json:"status"`
		Properties struct {
			ProvisioningState string `json:"provisioningState"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(data, &doc)
	state = doc.Status
	if state == "" {
		state = doc.Properties.ProvisioningState
	}
	if state == "" {
		state = "Failed"
	}
	body = strings.TrimSpace(string(data))
	if len(body) > maxBodyInError {
		body = body[:maxBodyInError] + "…"
	}
	if body == "" {
		body = "(empty body)"
	}
	return "in " + state, body
}

// opError wraps err (already converted by azErr) with the operation, the
// way every provider method reports failures: "create image version
// gal/def/1.0.0: Conflict: … (id)".
func opError(op, what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s %s: %w", op, redact.SAS(what), err)
}

// azErr converts an SDK error into a *cloud.Error carrying the service's
// status, error code and message, and naming resource; other errors
// (network, context) come back with any SAS removed from their text.
func azErr(err error, resource string) error {
	if err == nil {
		return nil
	}
	var ce *cloud.Error
	if errors.As(err, &ce) {
		return err
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		out := &cloud.Error{StatusCode: re.StatusCode, Code: re.ErrorCode, Resource: redact.SAS(resource)}
		code, msg := responseDetails(re.RawResponse)
		if out.Code == "" {
			out.Code = code
		}
		if out.StatusCode < 400 {
			// A long operation that failed: its status poll (or the
			// resource) answered 2xx with the failure in the body, which
			// may hold no error object at all.
			out.StatusCode = http.StatusInternalServerError
			state, body := operationState(re.RawResponse)
			if out.Code == "" {
				out.Code = CodeOperationFailed
			}
			if msg == "" {
				msg = fmt.Sprintf("the operation ended %s without an error object; the service answered %d: %s", state, re.StatusCode, body)
			}
		}
		if out.Code == "" {
			out.Code = strings.ReplaceAll(http.StatusText(re.StatusCode), " ", "")
		}
		out.Message = redact.SAS(msg)
		return out
	}
	return redact.Error(err)
}

// responseDetails reads the error code and message from an ARM (JSON) or
// storage (XML) error body.
func responseDetails(resp *http.Response) (code, msg string) {
	if resp == nil {
		return "", ""
	}
	body, err := runtime.Payload(resp)
	if err != nil || len(body) == 0 {
		return "", ""
	}
	trimmed := strings.TrimSpace(string(body))
	if strings.HasPrefix(trimmed, "{") {
		type detail struct {
			Code    string   `json:"code"`
			Message string   `json:"message"`
			Details []detail `json:"details"`
		}
		var env struct {
			Error *detail `json:"error"`
			detail
		}
		if json.Unmarshal(body, &env) != nil {
			return "", ""
		}
		d := env.detail
		if env.Error != nil {
			d = *env.Error
		}
		msgs := []string{d.Message}
		for _, sub := range d.Details {
			if sub.Message != "" && sub.Message != d.Message {
				msgs = append(msgs, sub.Message)
			}
		}
		return d.Code, strings.TrimSpace(strings.Join(msgs, " "))
	}
	if strings.HasPrefix(trimmed, "<") {
		var x struct {
			Code    string `xml:"Code"`
			Message string `xml:"Message"`
		}
		if xml.Unmarshal(body, &x) == nil {
			// Storage messages end with "RequestId:… Time:…" lines.
			m, _, _ := strings.Cut(x.Message, "\n")
			return x.Code, strings.TrimSpace(m)
		}
	}
	return "", ""
}

func isStatus(err error, codes ...int) bool {
	var ce *cloud.Error
	if !errors.As(err, &ce) {
		var re *azcore.ResponseError
		if !errors.As(err, &re) {
			return false
		}
		ce = &cloud.Error{StatusCode: re.StatusCode}
	}
	for _, c := range codes {
		if ce.StatusCode == c {
			return true
		}
	}
	return false
}
