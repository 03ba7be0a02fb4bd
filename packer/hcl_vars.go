package packer

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// hclOccurrences lists every var.NAME reference and env("NAME") call of an
// HCL2 template, each with where it is (path and file:line).
func (h *hclTemplate) occurrences() []occurrence {
	var out []occurrence
	for _, e := range h.exprs {
		where := e.where()
		for _, tr := range e.expr.Variables() {
			if name, ok := varName(tr); ok {
				out = append(out, occurrence{kind: KindUser, name: name, path: where})
			}
		}
		hclsyntax.VisitAll(e.expr, func(n hclsyntax.Node) hcl.Diagnostics {
			call, ok := n.(*hclsyntax.FunctionCallExpr)
			if !ok || call.Name != "env" || len(call.Args) != 1 {
				return nil
			}
			if v, diags := call.Args[0].Value(nil); !diags.HasErrors() && v.IsKnown() && !v.IsNull() && v.Type().FriendlyName() == "string" {
				out = append(out, occurrence{kind: KindEnv, name: v.AsString(), path: where, owner: e.variable})
			}
			return nil
		})
	}
	return out
}

// varName returns NAME for a var.NAME traversal.
func varName(tr hcl.Traversal) (string, bool) {
	if tr.RootName() != "var" || len(tr) < 2 {
		return "", false
	}
	switch step := tr[1].(type) {
	case hcl.TraverseAttr:
		return step.Name, true
	case hcl.TraverseIndex:
		if step.Key.Type().FriendlyName() == "string" && step.Key.IsKnown() && !step.Key.IsNull() {
			return step.Key.AsString(), true
		}
	}
	return "", false
}

// checkHCL2Variables is CheckVariables for HCL2, by packer 1.9.5's rules:
// a variable without a default needs a value ("Unset variable"), var.NAME
// needs a variable block ("Unsupported attribute"), env() works only in
// variable defaults ("There is no function named env"), and every value
// must convert to its variable's type. A value for an undeclared variable
// only draws a warning from packer when it comes from a var-file, which is
// how imgflow passes every value; CheckUndeclared checks workflow vars.
func (t *Template) checkHCL2Variables(values map[string]string) error {
	h := t.hcl
	values = h.withAuto(values)
	users := map[string]map[string]bool{}
	envs := map[string]map[string]bool{}
	add := func(m map[string]map[string]bool, name, path string) {
		if m[name] == nil {
			m[name] = map[string]bool{}
		}
		m[name][path] = true
	}
	for _, o := range h.occurrences() {
		if o.kind == KindEnv {
			if o.owner == "" {
				add(envs, o.name, o.path)
			}
			continue
		}
		if _, given := values[o.name]; given {
			if _, declared := h.variables[o.name]; declared {
				continue
			}
		}
		if v, ok := h.variables[o.name]; ok && v.def != nil {
			continue
		}
		add(users, o.name, o.path)
	}
	for name, v := range h.variables {
		if _, given := values[name]; v.def == nil && !given && users[name] == nil {
			users[name] = map[string]bool{}
		}
	}
	var problems []VariableProblem
	for name, paths := range users {
		d, declared := t.Variables[name]
		problems = append(problems, VariableProblem{Kind: KindUser, Name: name, Paths: sortedKeys(paths), Declared: declared, Required: d.Required, HCL2: true})
	}
	for name, paths := range envs {
		problems = append(problems, VariableProblem{Kind: KindEnv, Name: name, Paths: sortedKeys(paths), HCL2: true})
	}
	if len(problems) > 0 {
		sortProblems(problems)
		return &MissingVariablesError{Template: t.displayName(), Problems: problems}
	}
	var errs []error
	for _, name := range sortedKeys(keysOf(values)) {
		if v, ok := h.variables[name]; ok {
			val, err := v.convert(values[name])
			if err == nil {
				err = v.validate(val)
			}
			if err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("packer template %s: %w", t.displayName(), err)
	}
	return nil
}

func keysOf(m map[string]string) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

func sortProblems(problems []VariableProblem) {
	sort.Slice(problems, func(i, j int) bool {
		if problems[i].Kind != problems[j].Kind {
			return problems[i].Kind == KindUser
		}
		return problems[i].Name < problems[j].Name
	})
}

// CheckUndeclared fails, with one *MissingVariablesError naming all of
// them, when vars sets a variable an HCL2 template does not declare:
// packer 1.9.5 refuses such a -var ("Undefined -var variable"), and a
// workflow's vars are what a user would pass as -var. (From a var-file
// packer only warns, so shared var-files may hold extra keys.) Legacy JSON
// templates accept undeclared values: the result is then always nil.
func (t *Template) CheckUndeclared(vars map[string]string) error {
	if t.hcl == nil {
		return nil
	}
	var problems []VariableProblem
	for _, name := range sortedKeys(keysOf(vars)) {
		if _, ok := t.hcl.variables[name]; !ok {
			problems = append(problems, VariableProblem{Kind: KindUser, Name: name, Undeclared: true, HCL2: true})
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return &MissingVariablesError{Template: t.displayName(), Problems: problems}
}

// hcl2String is VariableProblem.String for an HCL2 template.
func (p VariableProblem) hcl2String() string {
	if p.Kind == KindEnv {
		return fmt.Sprintf("env(%q): used at %s, but packer allows env() only in a variable's default (it fails with: There is no function named \"env\"); declare variable %q { default = env(%q) } and use var.%s instead",
			p.Name, strings.Join(p.Paths, ", "), strings.ToLower(p.Name), p.Name, strings.ToLower(p.Name))
	}
	var b strings.Builder
	b.WriteString(p.Name)
	b.WriteString(": ")
	switch {
	case p.Undeclared:
		fmt.Fprintf(&b, "set in vars, but the template declares no variable %q (packer 1.9.5 refuses it: \"Undefined -var variable\"); declare variable %q { type = string } or remove it from vars", p.Name, p.Name)
		return b.String()
	case p.Required && len(p.Paths) > 0:
		fmt.Fprintf(&b, "declared without a default and used at %s (packer 1.9.5 fails with: Unset variable %q)", strings.Join(p.Paths, ", "), p.Name)
	case p.Required:
		fmt.Fprintf(&b, "declared without a default; packer 1.9.5 refuses to build without it (Unset variable %q)", p.Name)
	case !p.Declared:
		fmt.Fprintf(&b, "used at %s but not declared (packer 1.9.5 fails with \"Unsupported attribute\"); add variable %q { type = string } to the template", strings.Join(p.Paths, ", "), p.Name)
		return b.String()
	default:
		fmt.Fprintf(&b, "used at %s", strings.Join(p.Paths, ", "))
	}
	fmt.Fprintf(&b, "; pass it with vars={%q: …} in the workflow", p.Name)
	return b.String()
}

// VarFileValues returns values as a var-file's JSON object should hold them
// for this template: strings, except that an HCL2 list, set, map or object
// variable gets its value as JSON of that type (packer 1.9.5 refuses a
// string there). Values for undeclared variables stay strings.
func (t *Template) VarFileValues(values map[string]string) (map[string]any, error) {
	out := make(map[string]any, len(values))
	var errs []error
	for name, raw := range values {
		out[name] = raw
		if t.hcl == nil {
			continue
		}
		if v, ok := t.hcl.variables[name]; ok {
			jv, err := v.varFileValue(raw)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			out[name] = jv
		}
	}
	return out, errors.Join(errs...)
}
