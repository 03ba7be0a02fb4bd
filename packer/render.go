package packer

import (
	"fmt"
	"path/filepath"
	"strings"
	"text/template"
)

// Rendering is a template's builders rendered for one set of variable
// values and one environment: see Template.RenderBuilds.
type Rendering struct {
	// Names are the rendered build names in template order: what -only
	// selects and what packer's output lines carry.
	Names []string
	// Builders maps each rendered build name to the template's builder.
	Builders map[string]Builder
	// Configs maps each rendered build name to its rendered configuration.
	Configs map[string]map[string]any
	// UnsetEnv maps a rendered build name to the keys of its configuration
	// (paths relative to the builder, e.g. "location" or
	// "shared_image_gallery_destination.replication_regions[0]") whose value
	// was made, directly or through variables, from {{env}} names the
	// environment did not contain, to those names (sorted). It explains an
	// empty value: packer renders an unset environment variable as "".
	UnsetEnv map[string]map[string][]string
}

// Render returns each builder's configuration, keyed by rendered build
// name; see RenderBuilds.
func (t *Template) Render(values, env map[string]string) (map[string]any, error) {
	r, err := t.RenderBuilds(values, env)
	if err != nil {
		return nil, err
	}
	out := make(map[string]any, len(r.Configs))
	for name, cfg := range r.Configs {
		out[name] = cfg
	}
	return out, nil
}

// RenderBuilds renders the builders the way packer 1.9.5 does: values (var-
// files, then vars) override defaults; defaults and values may refer to other
// variables and to env (a name env lacks is ""); a {{user}} reference to a
// variable nobody sets is ""; {{template_dir}} is the template's directory;
// build names ("name": "sig-{{user `build_name`}}") are rendered too.
//
// Actions that need a running build ({{timestamp}}, {{isotime}}, {{uuid}},
// {{build_name}}, provisioner-only fields such as {{.Path}}, …) are left in
// place verbatim: the result is meant for reading configuration such as
// os_disk_size_gb or shared_image_gallery_destination, not for passing back
// to packer. An action mixing a reference with other functions is evaluated
// when it uses only lower, upper, split, replace or replace_all.
//
// RenderBuilds fails like CheckVariables, on a variable that refers to
// itself, and on two builders whose names render the same.
func (t *Template) RenderBuilds(values, env map[string]string) (*Rendering, error) {
	if t.hcl != nil {
		return t.renderHCL2Builds(values, env)
	}
	r, err := t.newRenderer(values, env)
	if err != nil {
		return nil, err
	}
	out := &Rendering{Builders: map[string]Builder{}, Configs: map[string]map[string]any{}, UnsetEnv: map[string]map[string][]string{}}
	for i, b := range t.Builders {
		base := fmt.Sprintf("builders[%d]", i)
		name, err := r.renderString(b.Name, base+".name", false)
		if err != nil {
			return nil, fmt.Errorf("render %s: build name: %w", t.displayName(), err)
		}
		if prev, dup := out.Builders[name]; dup {
			return nil, fmt.Errorf("render %s: builders %q and %q are both named %q once rendered; packer would silently build only one of them", t.displayName(), prev.Name, b.Name, name)
		}
		r.hints = map[string][]string{}
		v, err := r.renderValue(b.Config, base, false)
		if err != nil {
			return nil, fmt.Errorf("render %s: %w", t.displayName(), err)
		}
		cfg, _ := v.(map[string]any)
		out.Names = append(out.Names, name)
		out.Builders[name] = b
		out.Configs[name] = cfg
		if len(r.hints) > 0 {
			rel := map[string][]string{}
			for path, envs := range r.hints {
				rel[strings.TrimPrefix(path, base+".")] = envs
			}
			out.UnsetEnv[name] = rel
		}
	}
	return out, nil
}

// BuildNames returns the rendered build names in template order (see
// RenderBuilds): the names -only selects.
func (t *Template) BuildNames(values, env map[string]string) ([]string, error) {
	r, err := t.RenderBuilds(values, env)
	if err != nil {
		return nil, err
	}
	return r.Names, nil
}

// renderHCL2Builds is RenderBuilds for an HCL2 template: its build names
// are static (source type and name), so only the configurations render.
func (t *Template) renderHCL2Builds(values, env map[string]string) (*Rendering, error) {
	if err := t.CheckVariables(values); err != nil {
		return nil, err
	}
	configs, err := t.renderHCL2(values, env)
	if err != nil {
		return nil, err
	}
	out := &Rendering{Builders: map[string]Builder{}, Configs: map[string]map[string]any{}, UnsetEnv: map[string]map[string][]string{}}
	for _, b := range t.Builders {
		out.Names = append(out.Names, b.Name)
		out.Builders[b.Name] = b
		cfg, _ := configs[b.Name].(map[string]any)
		out.Configs[b.Name] = cfg
	}
	return out, nil
}

// newRenderer checks the variables and renders all of them, as packer
// does before any builder: a broken default fails even when nothing uses it.
func (t *Template) newRenderer(values, env map[string]string) (*renderer, error) {
	if err := t.CheckVariables(values); err != nil {
		return nil, err
	}
	names := boolSet(t.Variables)
	for name := range values {
		names[name] = true
	}
	r := &renderer{t: t, values: values, env: env, vars: make(map[string]resolvedVar, len(names)), unset: map[string]bool{}}
	for _, name := range sortedKeys(names) {
		if _, err := r.variable(name); err != nil {
			return nil, fmt.Errorf("render %s: %w", t.displayName(), err)
		}
	}
	return r, nil
}

type renderer struct {
	t      *Template
	values map[string]string
	env    map[string]string
	// vars are the variables resolved or being resolved: one map sized
	// for them all, not three grown one variable at a time.
	vars map[string]resolvedVar
	// unset collects, for the string being rendered, the env names it
	// was made from that env lacks.
	unset map[string]bool
	// hints maps a path of the builder being rendered to its unset env names.
	hints map[string][]string
}

// resolvedVar is a variable of a renderer: its state, and once done its
// value and the env names it was made from that env lacks.
type resolvedVar struct {
	state   int // varResolving or varDone
	value   string
	unsetOf map[string]bool
}

const (
	varResolving = 1
	varDone      = 2
)

// variable resolves a user variable, rendering its value or default. A
// variable nobody sets is "", as in packer.
func (r *renderer) variable(name string) (string, error) {
	switch r.vars[name].state {
	case varDone:
		return r.vars[name].value, nil
	case varResolving:
		return "", fmt.Errorf("variable %s refers to itself through other variables", name)
	}
	r.vars[name] = resolvedVar{state: varResolving}
	raw, given := r.values[name]
	if !given {
		d, ok := r.t.Variables[name]
		if ok && d.Required {
			// CheckVariables has reported this already; stay defensive.
			return "", fmt.Errorf("variable %s has no value", name)
		}
		raw = d.Default
	}
	v, unset, err := r.traced(func() (string, error) { return r.renderString(raw, "variables."+name, true) })
	if err != nil {
		return "", err
	}
	r.vars[name] = resolvedVar{state: varDone, value: v, unsetOf: unset}
	return v, nil
}

// traced runs render and returns, with its result, the unset env names it
// read; they are also added to the enclosing string's.
func (r *renderer) traced(render func() (string, error)) (string, map[string]bool, error) {
	outer := r.unset
	r.unset = map[string]bool{}
	v, err := render()
	got := r.unset
	for name := range got {
		outer[name] = true
	}
	r.unset = outer
	return v, got, err
}

func (r *renderer) renderValue(v any, path string, envOK bool) (any, error) {
	switch x := v.(type) {
	case string:
		s, unset, err := r.traced(func() (string, error) { return r.renderString(x, path, envOK) })
		if len(unset) > 0 && r.hints != nil {
			r.hints[path] = sortedKeys(unset)
		}
		return s, err
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			rv, err := r.renderValue(e, fmt.Sprintf("%s[%d]", path, i), envOK)
			if err != nil {
				return nil, err
			}
			out[i] = rv
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			rv, err := r.renderValue(e, joinPath(path, k), envOK)
			if err != nil {
				return nil, err
			}
			out[k] = rv
		}
		return out, nil
	default:
		return v, nil
	}
}

func (r *renderer) renderString(s, path string, envOK bool) (string, error) {
	var out strings.Builder
	last := 0
	for start, end := range actions(s) {
		v, err := r.renderAction(s[start:end], path, envOK)
		if err != nil {
			return s, err
		}
		out.WriteString(s[last:start])
		out.WriteString(v)
		last = end
	}
	if last == 0 {
		return s, nil
	}
	out.WriteString(s[last:])
	return out.String(), nil
}

// renderAction is the value of one {{…}} action: a user or env reference,
// template_dir, an expression of references, or the action itself for
// packer to render ({{timestamp}}, {{.Path}}, …).
func (r *renderer) renderAction(action, path string, envOK bool) (string, error) {
	body := actionBody(action[2 : len(action)-2])
	if idx := pureRefRE().FindStringSubmatchIndex(body); idx != nil {
		return r.lookup(body[idx[2]:idx[3]], refName(body, idx), path, envOK)
	}
	if body == "template_dir" && r.t.Path != "" {
		return filepath.Dir(r.t.Path), nil
	}
	if !refRE().MatchString(body) {
		return action, nil // left for packer: {{timestamp}}, {{.Path}}, …
	}
	return r.evaluate(action, path, envOK)
}

func (r *renderer) lookup(kind, name, path string, envOK bool) (string, error) {
	if kind == KindEnv {
		if !envOK {
			return "", fmt.Errorf("%s: {{env `%s`}} is only allowed in \"variables\" (packer fails with \"env vars are not allowed here\")", path, name)
		}
		v, ok := r.env[name]
		if !ok || v == "" {
			// Set to "" or not set: either explains an empty value.
			r.unset[name] = true
		}
		return v, nil
	}
	v, err := r.variable(name)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	for e := range r.vars[name].unsetOf {
		r.unset[e] = true
	}
	return v, nil
}

// evaluate runs an action that combines a reference with packer's pure
// string functions through text/template, as packer does.
func (r *renderer) evaluate(action, path string, envOK bool) (string, error) {
	var lookupErr error
	funcs := template.FuncMap{
		"user": func(name string) string {
			v, err := r.lookup(KindUser, name, path, envOK)
			if err != nil && lookupErr == nil {
				lookupErr = err
			}
			return v
		},
		"env": func(name string) string {
			v, err := r.lookup(KindEnv, name, path, envOK)
			if err != nil && lookupErr == nil {
				lookupErr = err
			}
			return v
		},
		"lower": strings.ToLower,
		"upper": strings.ToUpper,
		// Same signatures as packer's template/interpolate funcs.
		"split": func(s, sep string, i int) (string, error) {
			parts := strings.Split(s, sep)
			if i < 0 || i >= len(parts) {
				// Not the string itself: it may come from a secret.
				return "", fmt.Errorf("split: index %d out of range (%d parts)", i, len(parts))
			}
			return parts[i], nil
		},
		"replace": func(old, new string, n int, src string) string {
			return strings.Replace(src, old, new, n)
		},
		"replace_all": func(old, new, src string) string {
			return strings.ReplaceAll(src, old, new)
		},
	}
	tpl, err := template.New(path).Funcs(funcs).Option("missingkey=error").Parse(action)
	if err != nil {
		return "", fmt.Errorf("%s: cannot render %s: %w", path, action, err)
	}
	var b strings.Builder
	if err := tpl.Execute(&b, nil); err != nil {
		return "", fmt.Errorf("%s: cannot render %s: %w", path, action, err)
	}
	if lookupErr != nil {
		return "", lookupErr
	}
	return b.String(), nil
}
