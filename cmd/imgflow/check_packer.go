package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/cloud/local"
	"github.com/imgflow/imgflow/cloud/overlay"
	"github.com/imgflow/imgflow/interp"
	"github.com/imgflow/imgflow/packer"
)

// packerCheck is what `imgflow check` learned of a workflow's packer
// builds from the real `packer validate`.
type packerCheck struct {
	// Rejected is packer's verdict at the packer_build call, when it
	// rejected a build.
	Rejected string
	// Notes are one-line remarks: builds packer accepted, builds checked by
	// imgflow's model only, or why no build was validated.
	Notes []string
}

// checkPackerBuilds plans the workflow rel with its params' defaults on an
// empty in-memory local target, nothing real involved, so that every
// packer_build the plan reaches is validated by v.
func checkPackerBuilds(ctx context.Context, ws *builtins.Workspace, rel string, v builtins.PackerValidator) (*packerCheck, error) {
	cloud, err := local.NewMemory(local.Options{})
	if err != nil {
		return nil, err
	}
	defer cloud.Close()
	seen := &seenValidator{v: v}
	res := interp.Plan(ctx, "//"+rel, interp.Config{
		Workspace: ws, Registry: builtins.NewRegistry(), Info: newPlanInfo(), PackerValidator: seen,
	}, overlay.New(cloud))
	out := &packerCheck{Notes: seen.notes}
	var ie *interp.Error
	switch {
	case res.Err == nil:
	case seen.rejected && errors.As(res.Err, &ie):
		out.Rejected = ie.Pos + ": " + ie.Msg
	case seen.rejected:
		out.Rejected = res.Err.Error()
	case !seen.reached && usesPackerBuild(ws, rel):
		where := firstLine(res.Err.Error())
		out.Notes = append(out.Notes, fmt.Sprintf("packer validate not run: planning with the params' defaults stops first (%s); `imgflow plan --var …` validates its packer builds", where))
	}
	return out, nil
}

// seenValidator passes requests to v and remembers what happened.
type seenValidator struct {
	v        builtins.PackerValidator
	mu       sync.Mutex
	reached  bool
	rejected bool
	notes    []string
}

func (s *seenValidator) Validate(ctx context.Context, req packer.BuildRequest) error {
	err := s.v.Validate(ctx, req)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reached = true
	var nv *packer.NotValidatedError
	var ve *packer.ValidateError
	switch {
	case errors.As(err, &nv):
		s.note(fmt.Sprintf("packer_build %s: checked by imgflow's model only (%s)", req.TemplatePath, nv.Reason))
	case errors.As(err, &ve):
		s.rejected = true
	case err == nil:
		s.note(fmt.Sprintf("packer_build %s: packer validate passed", req.TemplatePath))
	}
	return err
}

// note adds a note once; s.mu is held.
func (s *seenValidator) note(msg string) {
	if !slices.Contains(s.notes, msg) {
		s.notes = append(s.notes, msg)
	}
}

var loadRE = regexp.MustCompile(`(?m)^load\(\s*"([^"]+)"`)

// usesPackerBuild reports whether rel or a module it loads, transitively,
// calls packer_build (by its text: it only decides whether a note is
// worth printing).
func usesPackerBuild(ws *builtins.Workspace, rel string) bool {
	seen := map[string]bool{}
	var visit func(from, module string) bool
	visit = func(from, module string) bool {
		r, abs, err := ws.Resolve(from, module)
		if err != nil || seen[r] {
			return false
		}
		seen[r] = true
		src, err := os.ReadFile(abs)
		if err != nil {
			return false
		}
		if strings.Contains(string(src), "packer_build(") {
			return true
		}
		for _, m := range loadRE.FindAllStringSubmatch(string(src), -1) {
			if visit(r, m[1]) {
				return true
			}
		}
		return false
	}
	return visit("", "//"+rel)
}
