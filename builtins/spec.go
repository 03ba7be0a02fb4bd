package builtins

import (
	"fmt"
	"sort"

	"go.starlark.net/starlark"
)

// Effect classifies what a builtin does, which decides where it may run
// and whether it is shown as a step.
type Effect int

const (
	// Pure builtins compute a value from their arguments (blob(), vhd()).
	Pure Effect = iota
	// Reads ask the cloud or the workspace but change nothing (regions()).
	Reads
	// Changes may change the cloud; they are steps: printed, recorded for
	// plan and journal, refused while a library module is loading.
	Changes
)

// Param describes one parameter of a builtin.
type Param struct {
	Name string
	Kind Kind
	// Default is the documented default; "" means the parameter is required.
	Default string
	Doc     string
}

// Required reports whether the caller must pass the parameter.
func (p Param) Required() bool { return p.Default == "" }

// Spec is everything imgflow knows about a builtin.
type Spec struct {
	Name   string
	Params []Param
	// Positional is how many leading parameters may be passed by position
	// (the first, obvious one at most); the rest are keyword-only.
	Positional int
	Returns    string
	Doc        string
	Example    string
	Effect     Effect
	// Group orders the reference ("Parameters and run facts", "Galleries and images", …).
	Group string
	// Removed maps parameters the builtin no longer takes to what to pass
	// instead, so an older workflow gets that fix rather than "unexpected
	// keyword argument".
	Removed map[string]string
	Impl    func(c *Call) (starlark.Value, error)
}

// Registry holds the builtins of one interpreter. It is built once by
// NewRegistry and read-only afterwards.
type Registry struct {
	specs        map[string]*Spec
	groups       []string
	cleanupKinds map[string]CleanupFunc
}

// NewRegistry registers every builtin group.
func NewRegistry() *Registry {
	r := &Registry{specs: map[string]*Spec{}, cleanupKinds: cleanupKinds()}
	registerCore(r)
	registerGallery(r)
	registerStorage(r)
	registerExport(r)
	registerControl(r)
	registerDelete(r)
	registerBuild(r)
	registerArtifacts(r)
	registerTestVM(r)
	registerMarketplace(r)
	return r
}

// add registers s; a duplicate name or a malformed spec is a programming
// error caught by the registry test.
func (r *Registry) add(group string, specs ...*Spec) {
	r.groups = append(r.groups, group)
	for _, s := range specs {
		if _, dup := r.specs[s.Name]; dup {
			panic(fmt.Sprintf("builtin %s registered twice", s.Name))
		}
		s.Group = group
		r.specs[s.Name] = s
	}
}

// Lookup returns the spec of a builtin.
func (r *Registry) Lookup(name string) (*Spec, bool) {
	s, ok := r.specs[name]
	return s, ok
}

// Groups lists the builtin groups in registration order.
func (r *Registry) Groups() []string { return r.groups }

// Specs returns the specs of a group (or all, for group ""), sorted by name.
func (r *Registry) Specs(group string) []*Spec {
	var out []*Spec
	for _, s := range r.specs {
		if group == "" || s.Group == group {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Predeclared returns the builtins as Starlark values for a workflow's
// predeclared environment.
func (r *Registry) Predeclared() starlark.StringDict {
	env := starlark.StringDict{}
	for name, s := range r.specs {
		env[name] = starlark.NewBuiltin(name, s.call)
	}
	return env
}
