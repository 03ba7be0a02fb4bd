package azure

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"

	"github.com/imgflow/imgflow/cloud"
)

// The SDK's retry policy (azcore runtime/policy_retry.go) gives up on a
// 429 whose Retry-After exceeds MaxRetryDelay, and never retries a 409.
// Compute throttles per subscription and region for minutes at a time,
// and ARM answers 409 to a write while another one runs on the resource
// or its parent (capz creates eight definitions in one gallery at once).
// waitPolicy sits outside the SDK's retry policy (per call) and retries
// what it returned: Azure's Retry-After followed however long, bounded by
// the request's context (a step's timeout), and the 409s Azure documents
// as transient with backoff. Every other answer passes unchanged, so a
// non-transient 409 is reported with Azure's code.

// transientConflicts are the 409 error codes that mean "retry later".
// AnotherOperationInProgress: Microsoft Learn, "Troubleshoot common Azure
// deployment errors" (azure-resource-manager/troubleshooting/
// common-deployment-errors): "Wait for concurrent operation to complete."
var transientConflicts = map[string]bool{
	"anotheroperationinprogress": true,
}

// Limits of waitPolicy: how many times one call waits, and the backoff of
// a transient conflict (doubling from conflictDelay up to
// maxConflictDelay, ±20 %).
const (
	maxThrottleWaits = 10
	maxConflictWaits = 8
	conflictDelay    = 15 * time.Second
	maxConflictDelay = 2 * time.Minute
)

type waitPolicy struct {
	sleep func(context.Context, time.Duration) error
	log   func(format string, args ...any)
}

func (w waitPolicy) Do(req *policy.Request) (*http.Response, error) {
	ctx := req.Raw().Context()
	throttled, conflicts := 0, 0
	for {
		if err := req.RewindBody(); err != nil {
			return nil, err
		}
		resp, err := req.Clone(ctx).Next()
		if err != nil {
			return resp, err
		}
		var delay time.Duration
		var why string
		switch resp.StatusCode {
		case http.StatusTooManyRequests:
			delay = retryAfter(resp.Header)
			if delay <= 0 || throttled == maxThrottleWaits {
				return resp, nil
			}
			throttled++
			why = "throttled by Azure"
		case http.StatusConflict:
			code := errorCode(resp)
			if !transientConflicts[strings.ToLower(code)] || conflicts == maxConflictWaits {
				return resp, nil
			}
			delay = retryAfter(resp.Header)
			if delay <= 0 {
				delay = min(conflictDelay<<conflicts, maxConflictDelay)
				delay = time.Duration(float64(delay) * (0.8 + 0.4*rand.Float64()))
			}
			conflicts++
			why = "Azure answered 409 " + code
		default:
			return resp, nil
		}
		target := req.Raw().Method + " " + resourceOf(req.Raw().URL.Path)
		w.log("%s, retrying in %s (%s)", why, humanDuration(delay), target)
		if err := w.sleep(ctx, delay); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			w.log("%s for %s, longer than the step may still take: not retrying (%s)", why, humanDuration(delay), target)
			return resp, nil
		}
		runtime.Drain(resp)
	}
}

// SleepFor is the default Options.Sleep: cloud.Sleep, on the real clock.
func SleepFor(ctx context.Context, d time.Duration) error { return cloud.Sleep(ctx, d) }

// retryAfter reads ARM's retry headers: retry-after-ms, x-ms-retry-after-ms,
// then Retry-After in seconds or as an HTTP date.
func retryAfter(h http.Header) time.Duration {
	for _, k := range []string{"retry-after-ms", "x-ms-retry-after-ms"} {
		if v := h.Get(k); v != "" {
			if ms, err := strconv.Atoi(v); err == nil && ms > 0 {
				return time.Duration(ms) * time.Millisecond
			}
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return time.Until(t)
	}
	return 0
}

// errorCode is Azure's error code of an answer: the x-ms-error-code
// header, else error.code of the body.
func errorCode(resp *http.Response) string {
	if c := resp.Header.Get("x-ms-error-code"); c != "" {
		return c
	}
	body, err := runtime.Payload(resp)
	if err != nil {
		return ""
	}
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	return e.Error.Code
}

// resourceOf shortens a request path to the resource's type and name for
// a progress line ("galleries/g/images/d").
func resourceOf(path string) string {
	if i := strings.LastIndex(strings.ToLower(path), "/providers/"); i >= 0 {
		path = path[i+len("/providers/"):]
		if _, rest, ok := strings.Cut(path, "/"); ok {
			path = rest
		}
	}
	return strings.Trim(path, "/")
}

// humanDuration says a wait the way a person would: 4m, 2m30s, 45s.
func humanDuration(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	s := d.Round(time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
