package packer

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/template"
)

// Reference kinds reported by UsedVariables.
const (
	KindUser = "user" // {{user `x`}}: a template variable
	KindEnv  = "env"  // {{env `X`}}: an environment variable
)

// VarRef is one variable a template refers to, with every place it does.
type VarRef struct {
	// Kind is KindUser or KindEnv.
	Kind string
	Name string
	// Paths are JSON paths of the strings that contain the reference, e.g.
	// "builders[0].managed_image_name" or "variables.location", sorted.
	Paths []string
}

// Template actions: packer 1.6.6 renders strings with Go's text/template,
// so a reference is `user` or `env` followed by a back-quoted or
// double-quoted name anywhere inside {{ … }}, with any spacing and the
// optional trim markers ({{- … -}}).
var (
	actionRE  = regexp.MustCompile(`(?s)\{\{(.*?)\}\}`)
	refRE     = regexp.MustCompile("(?:^|[\\s(|])(user|env)\\s+(?:`([^`]*)`|\"((?:[^\"\\\\]|\\\\.)*)\")")
	pureRefRE = regexp.MustCompile("^(user|env)\\s+(?:`([^`]*)`|\"((?:[^\"\\\\]|\\\\.)*)\")$")
	identRE   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)
)

// actionBody strips the trim markers and spaces around an action's body.
func actionBody(inner string) string {
	s := strings.TrimSpace(inner)
	if strings.HasPrefix(s, "- ") || s == "-" {
		s = s[1:]
	}
	if strings.HasSuffix(s, " -") {
		s = s[:len(s)-1]
	}
	return strings.TrimSpace(s)
}

// refsIn returns the (kind, name) pairs referenced in s, in order.
func refsIn(s string) [][2]string {
	var out [][2]string
	for _, m := range actionRE.FindAllStringSubmatch(s, -1) {
		body := actionBody(m[1])
		for _, idx := range refRE.FindAllStringSubmatchIndex(body, -1) {
			out = append(out, [2]string{body[idx[2]:idx[3]], refName(body, idx)})
		}
	}
	return out
}

// refName returns the name of a reference matched by refRE or pureRefRE
// (submatch indexes idx into s): back-quoted names are raw, double-quoted
// ones are Go string literals.
func refName(s string, idx []int) string {
	if idx[4] >= 0 {
		return s[idx[4]:idx[5]]
	}
	quoted := s[idx[6]:idx[7]]
	if v, err := strconv.Unquote(`"` + quoted + `"`); err == nil {
		return v
	}
	return quoted
}

// walkStrings calls fn for every string value in v, with its JSON path.
// Map keys are visited in sorted order so results are deterministic.
func walkStrings(v any, path string, fn func(path, s string)) {
	switch x := v.(type) {
	case string:
		fn(path, x)
	case []any:
		for i, e := range x {
			walkStrings(e, fmt.Sprintf("%s[%d]", path, i), fn)
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			walkStrings(x[k], joinPath(path, k), fn)
		}
	}
}

func joinPath(base, key string) string {
	if identRE.MatchString(key) {
		if base == "" {
			return key
		}
		return base + "." + key
	}
	return base + "[" + strconv.Quote(key) + "]"
}

// occurrence is one reference at one place.
type occurrence struct {
	kind, name, path string
	// owner is the variable whose default holds an HCL2 reference.
	owner string
}

func (t *Template) occurrences() []occurrence {
	if t.hcl != nil {
		return t.hcl.occurrences()
	}
	var out []occurrence
	walkStrings(t.raw, "", func(path, s string) {
		for _, r := range refsIn(s) {
			out = append(out, occurrence{kind: r[0], name: r[1], path: path})
		}
	})
	return out
}

// UsedVariables lists every {{user}} and {{env}} reference found in any
// string of the template (variables, builders, provisioners,
// post-processors, …), one VarRef per kind and name, sorted by name then
// kind, each with the sorted, de-duplicated paths where it occurs. For
// HCL2 a var.NAME reference is KindUser and an env("NAME") call KindEnv;
// paths look like "source.azure-arm.sig.location (sig.pkr.hcl:12)".
func (t *Template) UsedVariables() []VarRef {
	byKey := map[[2]string]map[string]bool{}
	for _, o := range t.occurrences() {
		k := [2]string{o.kind, o.name}
		if byKey[k] == nil {
			byKey[k] = map[string]bool{}
		}
		byKey[k][o.path] = true
	}
	out := make([]VarRef, 0, len(byKey))
	for k, paths := range byKey {
		ref := VarRef{Kind: k[0], Name: k[1]}
		for p := range paths {
			ref.Paths = append(ref.Paths, p)
		}
		sort.Strings(ref.Paths)
		out = append(out, ref)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Kind < out[j].Kind
	})
	return out
}

// VariableProblem is one reason a template cannot be built with the values
// given.
type VariableProblem struct {
	// Kind is KindUser, or KindEnv for an {{env}} used where packer forbids it.
	Kind string
	Name string
	// Paths where the variable is used; empty for a declared-required
	// variable that nothing references.
	Paths []string
	// Declared reports whether the variable is in "variables".
	Declared bool
	// Required reports a "name": null declaration (HCL2: no default).
	Required bool
	// Undeclared reports a value passed for a variable an HCL2 template
	// does not declare (see Template.CheckUndeclared).
	Undeclared bool
	// HCL2 reports a problem of an HCL2 template.
	HCL2 bool
}

// String describes the problem and how to fix it, in one line.
func (p VariableProblem) String() string {
	if p.HCL2 {
		return p.hcl2String()
	}
	if p.Kind == KindEnv {
		return fmt.Sprintf("env %s: used at %s, but packer 1.6.6 allows {{env}} only in \"variables\" defaults (it fails with \"env vars are not allowed here\"); declare a variable with default \"{{env `%s`}}\" and use {{user `…`}} instead",
			p.Name, strings.Join(p.Paths, ", "), p.Name)
	}
	var b strings.Builder
	b.WriteString(p.Name)
	b.WriteString(": ")
	switch {
	case p.Required && len(p.Paths) > 0:
		fmt.Fprintf(&b, "declared required (%q: null) and used at %s", p.Name, strings.Join(p.Paths, ", "))
	case p.Required:
		fmt.Fprintf(&b, "declared required (%q: null); packer refuses to build without it", p.Name)
	case !p.Declared:
		fmt.Fprintf(&b, "used at %s but not declared in \"variables\" (packer would silently render it as \"\")", strings.Join(p.Paths, ", "))
	default:
		fmt.Fprintf(&b, "used at %s", strings.Join(p.Paths, ", "))
	}
	fmt.Fprintf(&b, "; pass it with vars={%q: …} in the workflow", p.Name)
	return b.String()
}

// MissingVariablesError lists, in one error, every variable a template
// needs and does not get.
type MissingVariablesError struct {
	Template string
	Problems []VariableProblem
}

// Error lists every problem, one per line.
func (e *MissingVariablesError) Error() string {
	var b strings.Builder
	n := len(e.Problems)
	noun := "variables have"
	if n == 1 {
		noun = "variable has"
	}
	what := "no value"
	for _, p := range e.Problems {
		if p.Undeclared {
			noun, what = "variables are", "not declared or have no value"
			if n == 1 {
				noun, what = "variable is", "not declared"
			}
			break
		}
	}
	fmt.Fprintf(&b, "packer template %s: %d %s %s:", e.Template, n, noun, what)
	for _, p := range e.Problems {
		b.WriteString("\n  - ")
		b.WriteString(p.String())
	}
	return b.String()
}

// Names returns the names of the missing variables, in the error's order.
func (e *MissingVariablesError) Names() []string {
	out := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		out[i] = p.Name
	}
	return out
}

// CheckVariables fails, with one *MissingVariablesError naming all of them,
// when any {{user}} reference has no value (not in values and no non-null
// default), when a required ("name": null) variable is not in values, or
// when {{env}} is used outside "variables" (packer 1.6.6 rejects that).
//
// A value for an undeclared variable is fine: packer 1.6.6 accepts
// undeclared var-file keys and {{user}} sees them (measured). References
// inside the default of a variable that values overrides are ignored, as
// packer never renders that default. {{env}} in defaults follows packer's
// rule: an unset environment variable is "".
//
// For an HCL2 template the rules are packer 1.9.5's: see checkHCL2Variables.
func (t *Template) CheckVariables(values map[string]string) error {
	if t.hcl != nil {
		return t.checkHCL2Variables(values)
	}
	// name → set of paths where it is used without a value
	users := map[string]map[string]bool{}
	envs := map[string]map[string]bool{}
	add := func(m map[string]map[string]bool, name, path string) {
		if m[name] == nil {
			m[name] = map[string]bool{}
		}
		m[name][path] = true
	}
	for _, o := range t.occurrences() {
		if owner, ok := variableOwner(o.path); ok {
			if _, given := values[owner]; given {
				continue
			}
			if o.kind == KindEnv {
				continue // allowed in defaults
			}
		}
		if o.kind == KindEnv {
			add(envs, o.name, o.path)
			continue
		}
		if _, given := values[o.name]; given {
			continue
		}
		if d, ok := t.Variables[o.name]; ok && !d.Required {
			continue
		}
		add(users, o.name, o.path)
	}
	// Packer renders passed values too, so a reference inside one counts.
	for name, v := range values {
		for _, r := range refsIn(v) {
			if r[0] != KindUser {
				continue
			}
			if _, given := values[r[1]]; given {
				continue
			}
			if d, ok := t.Variables[r[1]]; ok && !d.Required {
				continue
			}
			add(users, r[1], joinPath("vars", name))
		}
	}
	for name, d := range t.Variables {
		if _, given := values[name]; d.Required && !given && users[name] == nil {
			users[name] = map[string]bool{}
		}
	}

	var problems []VariableProblem
	for name, paths := range users {
		d, declared := t.Variables[name]
		problems = append(problems, VariableProblem{Kind: KindUser, Name: name, Paths: sortedKeys(paths), Declared: declared, Required: d.Required})
	}
	for name, paths := range envs {
		problems = append(problems, VariableProblem{Kind: KindEnv, Name: name, Paths: sortedKeys(paths)})
	}
	if len(problems) == 0 {
		return nil
	}
	sort.Slice(problems, func(i, j int) bool {
		if problems[i].Kind != problems[j].Kind {
			return problems[i].Kind == KindUser
		}
		return problems[i].Name < problems[j].Name
	})
	return &MissingVariablesError{Template: t.displayName(), Problems: problems}
}

// variableOwner reports which variable's default a path lies in.
func variableOwner(path string) (string, bool) {
	rest, ok := strings.CutPrefix(path, "variables")
	if !ok {
		return "", false
	}
	if name, ok := strings.CutPrefix(rest, "."); ok {
		return name, true
	}
	if strings.HasPrefix(rest, "[") && strings.HasSuffix(rest, "]") {
		if name, err := strconv.Unquote(rest[1 : len(rest)-1]); err == nil {
			return name, true
		}
	}
	return "", false
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Render returns each builder's configuration, keyed by build name, with
// {{user}} and {{env}} references substituted the way packer 1.6.6 would:
// values override defaults, defaults and passed values may themselves refer
// to other variables and to the environment (env; a missing key is "", as
// in packer), and {{template_dir}} is the template's directory.
//
// Actions that need a running build ({{timestamp}}, {{isotime}}, {{uuid}},
// {{build_name}}, provisioner-only fields such as {{.Path}}, …) are left in
// place verbatim: the result is meant for reading configuration such as
// os_disk_size_gb or shared_image_gallery_destination, not for passing back
// to packer. An action mixing a reference with other functions is evaluated
// when it uses only lower, upper, split, replace or replace_all.
//
// Render fails like CheckVariables when a variable has no value.
//
// For an HCL2 template Render evaluates each build's source with var.*
// (values converted to the declared types), local.*, source.name and
// source.type, path.root and packer's common functions; env() works in
// variable defaults only. What packer knows only while building
// (timestamp(), uuidv4(), build.*) stays as the attribute's source text.
func (t *Template) Render(values, env map[string]string) (map[string]any, error) {
	if err := t.CheckVariables(values); err != nil {
		return nil, err
	}
	if t.hcl != nil {
		return t.renderHCL2(values, env)
	}
	r := &renderer{t: t, values: values, env: env, resolved: map[string]string{}, state: map[string]int{}}
	// packer renders every variable before any builder, so a broken default
	// fails the build even when nothing uses it.
	names := map[string]bool{}
	for name := range t.Variables {
		names[name] = true
	}
	for name := range values {
		names[name] = true
	}
	for _, name := range sortedKeys(names) {
		if _, err := r.variable(name); err != nil {
			return nil, fmt.Errorf("render %s: %w", t.displayName(), err)
		}
	}
	out := make(map[string]any, len(t.Builders))
	for i, b := range t.Builders {
		v, err := r.renderValue(b.Config, fmt.Sprintf("builders[%d]", i), false)
		if err != nil {
			return nil, fmt.Errorf("render %s: %w", t.displayName(), err)
		}
		out[b.Name] = v
	}
	return out, nil
}

type renderer struct {
	t        *Template
	values   map[string]string
	env      map[string]string
	resolved map[string]string
	state    map[string]int // 1 = resolving, 2 = done
}

// variable resolves a user variable, rendering its value or default.
func (r *renderer) variable(name string) (string, error) {
	switch r.state[name] {
	case 2:
		return r.resolved[name], nil
	case 1:
		return "", fmt.Errorf("variable %s refers to itself through other variables", name)
	}
	r.state[name] = 1
	raw, given := r.values[name]
	if !given {
		d, ok := r.t.Variables[name]
		if !ok || d.Required {
			// CheckVariables has reported this already; stay defensive.
			return "", fmt.Errorf("variable %s has no value", name)
		}
		raw = d.Default
	}
	v, err := r.renderString(raw, "variables."+name, true)
	if err != nil {
		return "", err
	}
	r.resolved[name] = v
	r.state[name] = 2
	return v, nil
}

func (r *renderer) envValue(name string) string {
	return r.env[name]
}

func (r *renderer) renderValue(v any, path string, envOK bool) (any, error) {
	switch x := v.(type) {
	case string:
		return r.renderString(x, path, envOK)
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
	var firstErr error
	out := actionRE.ReplaceAllStringFunc(s, func(action string) string {
		if firstErr != nil {
			return action
		}
		body := actionBody(action[2 : len(action)-2])
		if idx := pureRefRE.FindStringSubmatchIndex(body); idx != nil {
			v, err := r.lookup(body[idx[2]:idx[3]], refName(body, idx), path, envOK)
			if err != nil {
				firstErr = err
				return action
			}
			return v
		}
		if body == "template_dir" && r.t.Path != "" {
			return filepath.Dir(r.t.Path)
		}
		if !refRE.MatchString(body) {
			return action // left for packer: {{timestamp}}, {{.Path}}, …
		}
		v, err := r.evaluate(action, path, envOK)
		if err != nil {
			firstErr = err
			return action
		}
		return v
	})
	return out, firstErr
}

func (r *renderer) lookup(kind, name, path string, envOK bool) (string, error) {
	if kind == KindEnv {
		if !envOK {
			return "", fmt.Errorf("%s: {{env `%s`}} is only allowed in \"variables\" (packer 1.6.6 fails with \"env vars are not allowed here\")", path, name)
		}
		return r.envValue(name), nil
	}
	v, err := r.variable(name)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
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
		// Same signatures as packer 1.6.6's template/interpolate funcs.
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
