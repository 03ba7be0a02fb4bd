package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/cloud/local"
	"github.com/imgflow/imgflow/cloud/overlay"
	"github.com/imgflow/imgflow/interp"
	"github.com/imgflow/imgflow/packer"
)

// cellPlan is what planning one cell of a workflow found.
type cellPlan struct {
	// Err is why the plan failed (a packer validate rejection included),
	// the whole message.
	Err error
	// NeedsVars: the plan stopped at a required param the cell does not
	// give (the default cell of a workflow without defaults for all).
	NeedsVars bool
}

// planCell plans the workflow rel with the cell's vars on an empty
// in-memory local target, nothing real involved, so that every
// packer_build the plan reaches goes through v.
func planCell(ctx context.Context, ws *builtins.Workspace, rel string, cell checkCell, v *seenValidator) (*cellPlan, error) {
	cloud, err := local.NewMemory(local.Options{})
	if err != nil {
		return nil, err
	}
	defer cloud.Close()
	info := newPlanInfo()
	tmp, removeTmp, err := planTempDir(info)
	if err != nil {
		return nil, err
	}
	defer removeTmp()
	res := interp.Plan(ctx, "//"+rel, interp.Config{
		Workspace: ws, Registry: builtins.NewRegistry(), Info: info, PackerValidator: v, Vars: cell.vars, TempDir: tmp,
	}, overlay.New(cloud))
	if res.Err == nil {
		return &cellPlan{}, nil
	}
	// A required param the cell does not give: the message param() writes.
	needsVars := cell.name == "default" && strings.Contains(res.Err.Error(), " is required: pass --var ")
	return &cellPlan{Err: res.Err, NeedsVars: needsVars}, nil
}

// seenValidator passes requests to v, or when v is nil says why packer
// validate did not run (skipped), and remembers one note per outcome.
// Each template is validated once per workflow (with the vars of the
// first cell reaching it): packer validate takes seconds, and the other
// cells' vars still go through imgflow's model of the template, which
// refuses missing and unknown variables as packer would.
type seenValidator struct {
	v       builtins.PackerValidator
	skipped string
	mu      sync.Mutex
	notes   []string
	// cell is the cell being planned; validated maps a template to the
	// cell whose plan validated it.
	cell      string
	validated map[string]string
}

// startCell starts the check of a cell; a new workflow forgets which
// templates were validated.
func (s *seenValidator) startCell(cell string, newWorkflow bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cell = cell
	if newWorkflow || s.validated == nil {
		s.validated = map[string]string{}
	}
}

func (s *seenValidator) Validate(ctx context.Context, req packer.BuildRequest) error {
	s.mu.Lock()
	first, done := s.validated[req.TemplatePath]
	if !done {
		s.validated[req.TemplatePath] = s.cell
	}
	s.mu.Unlock()
	if done {
		s.note(fmt.Sprintf("packer_build %s: packer validate not repeated (ran for [%s])", req.TemplatePath, first))
		return nil
	}
	if s.v == nil {
		s.note(fmt.Sprintf("packer_build %s: packer validate skipped: %s", req.TemplatePath, s.skipped))
		return nil
	}
	err := s.v.Validate(ctx, req)
	var nv *packer.NotValidatedError
	var ve *packer.ValidateError
	switch {
	case errors.As(err, &nv):
		s.note(fmt.Sprintf("packer_build %s: packer validate skipped: %s; checked by imgflow's model only", req.TemplatePath, nv.Reason))
	case errors.As(err, &ve):
		s.note(fmt.Sprintf("packer_build %s: packer validate failed", req.TemplatePath))
	case err == nil:
		s.note(fmt.Sprintf("packer_build %s: packer validate passed", req.TemplatePath))
	}
	return err
}

// note adds a note once.
func (s *seenValidator) note(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.Contains(s.notes, msg) {
		s.notes = append(s.notes, msg)
	}
}

// takeNotes returns the notes so far and forgets them.
func (s *seenValidator) takeNotes() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.notes
	s.notes = nil
	return n
}
