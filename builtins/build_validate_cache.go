package builtins

import (
	"context"
	"fmt"
	"runtime"
	"strconv"

	"github.com/imgflow/imgflow/packer"
)

// PackerValidateCached validates with r through cache: a build validated
// before with the same inputs (by this or an earlier process) does not run
// packer again. At most runtime.NumCPU() packer processes run at once: a
// release plans its jobs side by side, and packer's start-up is CPU-bound.
// Wrap it in PackerValidateOnce so that a plan's repeated builds wait for
// the first.
func PackerValidateCached(r *packer.Runner, cache *packer.ValidateCache) PackerValidator {
	return &validateCached{r: r, cache: cache, slots: make(chan struct{}, runtime.NumCPU())}
}

type validateCached struct {
	r     *packer.Runner
	cache *packer.ValidateCache
	slots chan struct{}
}

// Validate looks the build's verdict up in the cache, running packer on a
// miss. The staged files' and downloads' directories, new at every build,
// count by their content.
func (v *validateCached) Validate(ctx context.Context, req packer.BuildRequest) error {
	digest := ""
	if dir, ok := req.Vars[packer.FilesDirVar]; ok {
		var err error
		if digest, err = treeDigest(dir); err != nil {
			return fmt.Errorf("packer validate: staged files: %w", err)
		}
	}
	return v.validateStaged(ctx, req, digest)
}

// validateStaged is Validate with the staged files' digest known.
func (v *validateCached) validateStaged(ctx context.Context, req packer.BuildRequest, digest string) error {
	stable := map[string]string{}
	if dir, ok := req.Vars[packer.FilesDirVar]; ok {
		stable[dir] = "(staged files " + digest + ")"
	}
	if dir, ok := req.Vars[packer.DownloadsDirVar]; ok {
		stable[dir] = "(downloads)"
	}
	select {
	case v.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-v.slots }()
	var volatile []string
	if p, ok := ctx.Value(runInfoKey{}).(planOf); ok {
		info := p.info
		volatile = []string{info.ID, strconv.FormatInt(info.Time.Unix(), 10), info.Time.UTC().Format("2006-01-02T15:04:05Z"), p.subscription}
	}
	_, err := v.cache.Validate(ctx, v.r, req, stable, volatile)
	return err
}

// runInfoKey carries, in a validation's context, the plan's planOf:
// values made of it (a captured version 1.<timestamp>.<n>) are new at
// every plan, and the cache takes them by their shape.
type runInfoKey struct{}

// planOf is what is new at every plan: its RunInfo and the target's
// subscription, which the local simulation draws anew for each plan of a
// state directory no run has written yet (a fresh checkout's). packer
// validate never calls Azure, so which subscription it is cannot change
// the verdict; it stays in the key as the place it appears.
type planOf struct {
	info         RunInfo
	subscription string
}
