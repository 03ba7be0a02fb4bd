package localsim

import (
	"context"
	"time"

	"github.com/imgflow/imgflow/packer"
)

// SlowBuilder simulates builds that each take a while, as a real build's
// VM boot and provisioning do: benchmarks of pipeline and release
// concurrency use it.
type SlowBuilder struct {
	b *Builder
	d time.Duration
}

// Slow returns b with every build taking at least d.
func (b *Builder) Slow(d time.Duration) *SlowBuilder { return &SlowBuilder{b: b, d: d} }

// Build waits d (or until ctx is done), then simulates the build.
func (s *SlowBuilder) Build(ctx context.Context, req packer.BuildRequest) (*packer.Result, error) {
	t := time.NewTimer(s.d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.b.Build(ctx, req)
}
