package packer

import (
	"fmt"
	"iter"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
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

// Template actions: packer renders strings with Go's text/template,
// so a reference is `user` or `env` followed by a back-quoted or
// double-quoted name anywhere inside {{ … }}, with any spacing and the
// optional trim markers ({{- … -}}).
var (
	refRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile("(?:^|[\\s(|])(user|env)\\s+(?:`([^`]*)`|\"((?:[^\"\\\\]|\\\\.)*)\")")
	})
	pureRefRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile("^(user|env)\\s+(?:`([^`]*)`|\"((?:[^\"\\\\]|\\\\.)*)\")$")
	})
	identRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`) })
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

// actions yields the start and end of every {{…}} action of s, from its
// "{{" to the first "}}" after it, in order: what the regexp
// `(?s)\{\{(.*?)\}\}` matches, at a fraction of its cost (every string
// of every template is scanned on every render).
func actions(s string) iter.Seq2[int, int] {
	return func(yield func(int, int) bool) {
		for i := 0; ; {
			open := strings.Index(s[i:], "{{")
			if open < 0 {
				return
			}
			open += i
			close := strings.Index(s[open+2:], "}}")
			if close < 0 {
				return
			}
			end := open + 2 + close + 2
			if !yield(open, end) {
				return
			}
			i = end
		}
	}
}

// refsIn returns the (kind, name) pairs referenced in s, in order.
func refsIn(s string) [][2]string {
	var out [][2]string
	for start, end := range actions(s) {
		body := actionBody(s[start+2 : end-2])
		for _, idx := range refRE().FindAllStringSubmatchIndex(body, -1) {
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
	if identRE().MatchString(key) {
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

func (t *Template) occurrences() []occurrence { return t.occ() }

func (t *Template) findOccurrences() []occurrence {
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

// Uses reports whether UsedVariables lists the variable name of kind,
// without building the list (a build asks it of each template it runs).
func (t *Template) Uses(kind, name string) bool {
	for _, o := range t.occurrences() {
		if o.kind == kind && o.name == name {
			return true
		}
	}
	return false
}

// VariableProblem is one variable a template cannot be built without, or
// (from UnsetVariables) one it uses that nobody sets.
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
		return fmt.Sprintf("env %s: used at %s, but packer allows {{env}} only in \"variables\" defaults and var-file values (it fails with \"env vars are not allowed here\"); declare a variable with default \"{{env `%s`}}\" and use {{user `…`}} instead",
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
		fmt.Fprintf(&b, "used at %s but neither declared in \"variables\" nor given a value: packer renders it as \"\"", strings.Join(p.Paths, ", "))
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
// when a required ("name": null) variable is not in values, or when {{env}}
// is used outside "variables" (packer rejects both).
//
// Everything else packer 1.9.5 renders, and so does Render: a value for an
// undeclared variable is visible to {{user}}; a {{user}} reference to a
// variable nobody sets renders as "" (UnsetVariables lists those the
// template's builders, provisioners and post-processors make); {{env}} in
// defaults and values renders as "" when the variable is not set. See the
// package documentation for the measurements.
//
// For an HCL2 template the rules are packer 1.9.5's: see checkHCL2Variables.
func (t *Template) CheckVariables(values map[string]string) error {
	if t.hcl != nil {
		return t.checkHCL2Variables(values)
	}
	users := map[string]map[string]bool{}
	envs := map[string]map[string]bool{}
	for _, o := range t.occurrences() {
		if _, inDefault := variableOwner(o.path); inDefault {
			continue // {{env}} is allowed there; required {{user}} is reported below
		}
		if o.kind == KindEnv {
			addPath(envs, o.name, o.path)
			continue
		}
		if d, ok := t.Variables[o.name]; ok && d.Required {
			if _, given := values[o.name]; !given {
				addPath(users, o.name, o.path)
			}
		}
	}
	for name, d := range t.Variables {
		if _, given := values[name]; d.Required && !given && users[name] == nil {
			users[name] = map[string]bool{}
		}
	}

	var problems []VariableProblem
	for name, paths := range users {
		problems = append(problems, VariableProblem{Kind: KindUser, Name: name, Paths: sortedKeys(paths), Declared: true, Required: true})
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

// UnsetVariables lists the {{user}} references of the template's builders,
// provisioners and post-processors to variables that are neither declared
// nor in values, sorted by name. packer renders them as "" without a word,
// which is what a template relies on for optional settings and what hides a
// misspelt name: callers show them as warnings. References inside variable
// defaults and values are not listed: image-builder's var-files make dozens
// of them on purpose.
func (t *Template) UnsetVariables(values map[string]string) []VariableProblem {
	unset := map[string]map[string]bool{}
	for _, o := range t.occurrences() {
		if _, inDefault := variableOwner(o.path); inDefault || o.kind != KindUser {
			continue
		}
		if _, declared := t.Variables[o.name]; declared {
			continue
		}
		if _, given := values[o.name]; !given {
			addPath(unset, o.name, o.path)
		}
	}
	out := make([]VariableProblem, 0, len(unset))
	for _, name := range sortedKeys(boolSet(unset)) {
		out = append(out, VariableProblem{Kind: KindUser, Name: name, Paths: sortedKeys(unset[name])})
	}
	return out
}

func addPath(m map[string]map[string]bool, name, path string) {
	if m[name] == nil {
		m[name] = map[string]bool{}
	}
	m[name][path] = true
}

func boolSet[V any](m map[string]V) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
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
