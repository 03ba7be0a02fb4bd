package cloud

import (
	"context"
	"time"
)

// The methods of intercepted are generated from the Provider interface
// (cloud/internal/genintercept); a method added to Provider breaks the
// build here until go generate ./cloud/ runs again.
//go:generate go run ./internal/genintercept/cmd/genintercept

// Hooks run around every Provider operation of an intercepted provider,
// named by method ("CreateImageVersion"). Before may fail the call (it then
// does not reach the target); After may fail a call that succeeded.
type Hooks struct {
	Before func(ctx context.Context, op string) error
	After  func(ctx context.Context, op string) error
}

// Intercept wraps p so that hooks run around each of its operations. Tests
// use it for injected faults and simulated latency on any target.
func Intercept(p Provider, h Hooks) Provider { return &intercepted{p: p, h: h} }

type intercepted struct {
	p Provider
	h Hooks
}

var _ Provider = (*intercepted)(nil)

func (x *intercepted) before(ctx context.Context, op string) error {
	if x.h.Before == nil {
		return nil
	}
	return x.h.Before(ctx, op)
}

func (x *intercepted) after(ctx context.Context, op string) error {
	if x.h.After == nil {
		return nil
	}
	return x.h.After(ctx, op)
}

// WithFaults wraps p so that the Provider methods named in f fail (or
// crash after running) as the faults say.
func WithFaults(p Provider, f *Faults) Provider {
	return Intercept(p, Hooks{
		Before: func(_ context.Context, op string) error { return f.Before(op) },
		After:  func(_ context.Context, op string) error { return f.After(op) },
	})
}

// PipelineLatencies are the cloud latencies the pipeline benchmarks
// simulate (bench/pipeline, the release benchmarks), by operation, with
// "packer" for a build (localsim's Builder.Slow): a packer build
// dominates, then replication and copies, as in the real pipelines
// (about 60 min packer, 10–45 min replication, 10 min copy), scaled down.
func PipelineLatencies() map[string]time.Duration {
	return map[string]time.Duration{
		"packer":                     2000 * time.Millisecond,
		"CreateImageVersion":         800 * time.Millisecond,
		"UpdateImageVersion":         800 * time.Millisecond,
		"CopyBlob":                   400 * time.Millisecond,
		"UploadPageBlob":             300 * time.Millisecond,
		"CreateDiskFromImageVersion": 200 * time.Millisecond,
		"CreateManagedImage":         200 * time.Millisecond,
		"CreateGallery":              50 * time.Millisecond,
		"CreateImageDefinition":      50 * time.Millisecond,
		"CreateResourceGroup":        50 * time.Millisecond,
		"CreateStorageAccount":       50 * time.Millisecond,
	}
}

// WithLatency wraps p so that each named operation takes at least the given
// time, as a real cloud's would (benchmarks of pipeline concurrency).
func WithLatency(p Provider, latency map[string]time.Duration) Provider {
	return Intercept(p, Hooks{Before: func(ctx context.Context, op string) error {
		d, ok := latency[op]
		if !ok || d <= 0 {
			return nil
		}
		return Sleep(ctx, d)
	}})
}
