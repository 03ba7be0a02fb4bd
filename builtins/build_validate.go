package builtins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/imgflow/imgflow/packer"
	"github.com/imgflow/imgflow/packer/localsim"
)

// PackerValidator checks a packer build with the real packer without
// running it: packer.Runner.Validate. A plan runs it for every
// packer_build before simulating the build.
type PackerValidator interface {
	Validate(ctx context.Context, req packer.BuildRequest) error
}

// PackerValidateOnce wraps v so that each distinct request is validated
// once: a workflow that builds the same template with the same inputs
// several times (or a plan of several workflows) pays for one packer run.
// Requests differing only in their staged-files directory are the same
// request when the uploads are.
func PackerValidateOnce(v PackerValidator) PackerValidator {
	return &validateOnce{v: v, done: map[string]*validateResult{}}
}

type validateOnce struct {
	v    PackerValidator
	mu   sync.Mutex
	done map[string]*validateResult
}

type validateResult struct {
	ready chan struct{}
	err   error
}

func (o *validateOnce) Validate(ctx context.Context, req packer.BuildRequest) error {
	return o.validate(ctx, req, req.Vars[localsim.FilesDirVar])
}

// validate validates req once per key: filesKey stands for the staged
// files' directory, whose name changes with every staging.
func (o *validateOnce) validate(ctx context.Context, req packer.BuildRequest, filesKey string) error {
	key := requestKey(req, filesKey)
	o.mu.Lock()
	r, seen := o.done[key]
	if !seen {
		r = &validateResult{ready: make(chan struct{})}
		o.done[key] = r
	}
	o.mu.Unlock()
	if seen {
		select {
		case <-r.ready:
			return r.err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	r.err = o.v.Validate(ctx, req)
	if ctx.Err() != nil {
		// A cancelled validation says nothing about the request.
		o.mu.Lock()
		delete(o.done, key)
		o.mu.Unlock()
	}
	close(r.ready)
	return r.err
}

// requestKey identifies what packer validate sees of req.
func requestKey(req packer.BuildRequest, filesKey string) string {
	vars := make(map[string]string, len(req.Vars))
	for k, v := range req.Vars {
		vars[k] = v
	}
	if _, ok := vars[localsim.FilesDirVar]; ok {
		vars[localsim.FilesDirVar] = filesKey
	}
	data, _ := json.Marshal(struct {
		Template, WorkDir string
		Vars              map[string]string
		VarFiles, Only    []string
	}{packer.ResolvePath(req.WorkDir, req.TemplatePath), req.WorkDir, vars, req.VarFiles, req.Only})
	return string(data)
}

// validatePacker runs the plan's PackerValidator on req, whose staged
// files are uploads. It returns nil outside a plan, and reports a template
// packer cannot validate here (needs plugins `packer init` downloads) as a
// note instead of failing.
func (c *Call) validatePacker(ctx context.Context, req packer.BuildRequest, uploads []upload) error {
	v := c.Run.PackerValidator
	if v == nil || !c.Run.dryRun() {
		return nil
	}
	var err error
	if once, ok := v.(*validateOnce); ok {
		err = once.validate(ctx, req, uploadsKey(uploads))
	} else {
		err = v.Validate(ctx, req)
	}
	var nv *packer.NotValidatedError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &nv):
		if c.Run.Reporter != nil {
			c.Run.Reporter.Print(c.Pos(), fmt.Sprintf("packer_build %s: %s", req.TemplatePath, strings.TrimPrefix(nv.Error(), "packer validate "+nv.Template+": ")))
		}
		return nil
	}
	var ve *packer.ValidateError
	if errors.As(err, &ve) {
		return fmt.Errorf("%w\nthe real packer rejects this build: change the template, or the vars, var_files or only of this packer_build, so that `packer validate` passes (imgflow plan --no-packer-validate skips this check)", err)
	}
	return fmt.Errorf("packer validate: %w", err)
}

// uploadsKey describes the staged files by source and destination.
func uploadsKey(uploads []upload) string {
	parts := make([]string, len(uploads))
	for i, u := range uploads {
		parts[i] = u.abs + ":" + u.dest
	}
	return strings.Join(parts, "\n")
}
