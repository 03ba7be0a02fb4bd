package builtins

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/imgflow/imgflow/packer"
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
// Requests differing only in the name of their staged-files directory are
// the same request when the files are.
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

// Validate validates req unless a request with the same inputs was.
func (o *validateOnce) Validate(ctx context.Context, req packer.BuildRequest) error {
	key, staged, err := requestKey(req)
	if err != nil {
		return err
	}
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
	if sv, ok := o.v.(stagedValidator); ok {
		r.err = sv.validateStaged(ctx, req, staged)
	} else {
		r.err = o.v.Validate(ctx, req)
	}
	if ctx.Err() != nil {
		// A cancelled validation says nothing about the request.
		o.mu.Lock()
		delete(o.done, key)
		o.mu.Unlock()
	}
	close(r.ready)
	return r.err
}

// stagedValidator is a validator that can use the staged files' digest
// requestKey computed, instead of hashing them again.
type stagedValidator interface {
	validateStaged(ctx context.Context, req packer.BuildRequest, stagedDigest string) error
}

// requestKey identifies what packer validate sees of req, and returns
// the digest of its staged files ("" without). The staged files'
// directory has a new name at every staging: its content counts.
func requestKey(req packer.BuildRequest) (string, string, error) {
	vars := make(map[string]string, len(req.Vars))
	for k, v := range req.Vars {
		vars[k] = v
	}
	staged := ""
	if dir, ok := vars[packer.FilesDirVar]; ok {
		digest, err := treeDigest(dir)
		if err != nil {
			return "", "", fmt.Errorf("packer validate: staged files: %w", err)
		}
		vars[packer.FilesDirVar] = digest
		staged = digest
	}
	if _, ok := vars[packer.DownloadsDirVar]; ok {
		vars[packer.DownloadsDirVar] = "(downloads)" // the build's own directory, new at every build
	}
	// A build's own working directory is new at every build: what it
	// mirrors counts.
	workDir, template := req.WorkDir, packer.ResolvePath(req.WorkDir, req.TemplatePath)
	if req.Mirrors != "" {
		if rel, err := filepath.Rel(req.WorkDir, template); err == nil && !strings.HasPrefix(rel, "..") {
			template = filepath.Join(req.Mirrors, rel)
		}
		workDir = req.Mirrors
	}
	data, err := json.Marshal(struct {
		Template, WorkDir string
		Vars              map[string]string
		VarFiles, Only    []string
	}{template, workDir, vars, req.VarFiles, req.Only})
	return string(data), staged, err
}

// treeDigest hashes the paths, modes and contents of the files under dir,
// streamed through one buffer: a plan is a short process that pays for
// every fresh page, and the staged build tools are megabytes.
func treeDigest(dir string) (string, error) {
	h := sha256.New()
	buf := make([]byte, 64<<10)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		target, err := f.Stat() // a link's target, as reading it gives
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %o %d\n", filepath.ToSlash(rel), info.Mode().Perm(), target.Size())
		// Only the Reader: an *os.File's WriteTo would not use buf.
		n, err := io.CopyBuffer(h, struct{ io.Reader }{f}, buf)
		if err == nil && n != target.Size() {
			err = fmt.Errorf("%s changed while it was read", path)
		}
		return err
	})
	return hex.EncodeToString(h.Sum(nil)), err
}

// validatePacker runs the plan's PackerValidator on req. It returns nil outside a plan, and reports a template
// packer cannot validate here (needs plugins `packer init` downloads) as a
// note instead of failing.
func (c *Call) validatePacker(ctx context.Context, req packer.BuildRequest) error {
	v := c.Run.PackerValidator
	if v == nil || !c.Run.dryRun() {
		return nil
	}
	err := v.Validate(context.WithValue(ctx, runInfoKey{}, planOf{info: c.Run.Info, subscription: c.Run.Provider.SubscriptionID()}), req)
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
