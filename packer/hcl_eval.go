package packer

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// hclEval evaluates one HCL2 template for a set of variable values.
type hclEval struct {
	t      *Template
	h      *hclTemplate
	env    map[string]string
	vars   map[string]cty.Value
	locals map[string]cty.Value
}

// newHCLEval converts values to the declared types, evaluates the other
// variables' defaults and then every local.
func (t *Template) newHCLEval(values, env map[string]string) (*hclEval, error) {
	e := &hclEval{t: t, h: t.hcl, env: env, vars: map[string]cty.Value{}, locals: map[string]cty.Value{}}
	values = e.h.withAuto(values)
	var diags hcl.Diagnostics
	for _, name := range sortedVariableNames(e.h.variables) {
		v := e.h.variables[name]
		if raw, given := values[name]; given {
			val, err := v.convert(raw)
			if err == nil {
				err = v.validate(val)
			}
			if err != nil {
				return nil, err
			}
			e.vars[name] = val
			continue
		}
		if v.def == nil {
			return nil, fmt.Errorf("variable %s has no value", name)
		}
		ctx := &hcl.EvalContext{Functions: hclFunctions(orEmpty(env))}
		val, d := v.def.Value(ctx)
		diags = append(diags, d...)
		if !d.HasErrors() {
			if conv, err := convert.Convert(val, v.typ); err != nil {
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid default value for variable",
					Detail: fmt.Sprintf("variable %q: %v", name, err), Subject: v.def.Range().Ptr()})
			} else if err := v.validate(conv); err != nil {
				return nil, err
			} else {
				e.vars[name] = conv
			}
		}
	}
	if diags.HasErrors() {
		return nil, diags
	}
	if err := e.evalLocals(); err != nil {
		return nil, err
	}
	return e, nil
}

func orEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func sortedVariableNames(m map[string]*hclVariable) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// evalLocals evaluates locals in dependency order: a local may refer to
// variables and to other locals.
func (e *hclEval) evalLocals() error {
	pending := map[string]*hclLocal{}
	for n, l := range e.h.locals {
		pending[n] = l
	}
	for len(pending) > 0 {
		progressed := false
		for _, name := range sortedLocalNames(pending) {
			l := pending[name]
			if !e.localDepsReady(l.expr, pending) {
				continue
			}
			val, diags := l.expr.Value(e.context(nil))
			if diags.HasErrors() {
				return diags
			}
			e.locals[name] = val
			delete(pending, name)
			progressed = true
		}
		if !progressed {
			return fmt.Errorf("locals %s refer to each other in a cycle", strings.Join(sortedLocalNames(pending), ", "))
		}
	}
	return nil
}

// localDepsReady reports whether every local that expr refers to has been
// evaluated; references to undefined locals fail on evaluation.
func (e *hclEval) localDepsReady(expr hcl.Expression, pending map[string]*hclLocal) bool {
	for _, tr := range expr.Variables() {
		if tr.RootName() != "local" || len(tr) < 2 {
			continue
		}
		if attr, ok := tr[1].(hcl.TraverseAttr); ok && pending[attr.Name] != nil {
			return false
		}
	}
	return true
}

func sortedLocalNames(m map[string]*hclLocal) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// context is the evaluation context of sources, builds and locals; src is
// nil outside a source.
func (e *hclEval) context(src *hclBuild) *hcl.EvalContext {
	vars := map[string]cty.Value{
		"var":   cty.ObjectVal(e.vars),
		"local": cty.ObjectVal(e.locals),
		// What packer knows only while building is unknown here.
		"build":  cty.DynamicVal,
		"packer": cty.DynamicVal,
	}
	pathVars := map[string]cty.Value{"cwd": cty.UnknownVal(cty.String), "root": cty.UnknownVal(cty.String)}
	if e.t.Path != "" {
		pathVars["root"] = cty.StringVal(filepath.Dir(e.t.Path))
	}
	vars["path"] = cty.ObjectVal(pathVars)
	if src != nil {
		vars["source"] = cty.ObjectVal(map[string]cty.Value{"type": cty.StringVal(src.source.typ), "name": cty.StringVal(src.name)})
	}
	return &hcl.EvalContext{Variables: vars, Functions: hclFunctions(nil)}
}

// renderHCL2 evaluates each builder's source (with a build-level source
// block's overrides) into the JSON template's shape.
func (t *Template) renderHCL2(values, env map[string]string) (map[string]any, error) {
	e, err := t.newHCLEval(values, env)
	if err != nil {
		return nil, fmt.Errorf("render %s: %w", t.displayName(), err)
	}
	out := make(map[string]any, len(t.Builders))
	for i, b := range t.Builders {
		hb := &e.h.builds[i]
		ctx := e.context(hb)
		cfg, err := e.body(hb.source.body, ctx)
		if err != nil {
			return nil, fmt.Errorf("render %s: %w", t.displayName(), err)
		}
		if hb.override != nil {
			over, err := e.body(hb.override, ctx)
			if err != nil {
				return nil, fmt.Errorf("render %s: %w", t.displayName(), err)
			}
			for k, v := range over {
				cfg[k] = v
			}
		}
		cfg["type"], cfg["name"] = b.Type, b.Name
		out[b.Name] = cfg
	}
	return out, nil
}

// body evaluates every attribute of body; a null attribute is left out (in
// HCL2 it means "not set"), an unknown one becomes its source text.
func (e *hclEval) body(body *hclsyntax.Body, ctx *hcl.EvalContext) (map[string]any, error) {
	out := map[string]any{}
	var diags hcl.Diagnostics
	for _, name := range sortedAttrNames(body) {
		a := body.Attributes[name]
		v, d := a.Expr.Value(ctx)
		if d.HasErrors() {
			diags = append(diags, d...)
			continue
		}
		if !v.IsWhollyKnown() {
			out[name] = e.h.sourceText(a.Expr.Range())
			continue
		}
		gv, err := ctyToGo(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a.SrcRange, err)
		}
		if gv != nil {
			out[name] = gv
		}
	}
	if diags.HasErrors() {
		return nil, diags
	}
	var firstErr error
	addBlocks(out, body, func(b *hclsyntax.Body) map[string]any {
		m, err := e.body(b, ctx)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return m
	})
	return out, firstErr
}

// convert turns a value given as a string (imgflow's vars, var-files) into
// the variable's type: strings stay, numbers and booleans are parsed, and
// collections are read as HCL or JSON, e.g. ["a", "b"] for list(string).
func (v *hclVariable) convert(raw string) (cty.Value, error) {
	str := cty.StringVal(raw)
	if v.typ == cty.DynamicPseudoType || v.typ.IsPrimitiveType() {
		out, err := convert.Convert(str, v.typ)
		if err != nil {
			return cty.NilVal, fmt.Errorf("variable %s (%s): the value is not a valid %s: %w", v.name, v.decl, v.typ.FriendlyName(), err)
		}
		return out, nil
	}
	expr, diags := hclsyntax.ParseExpression([]byte(raw), v.name, hcl.InitialPos)
	if diags.HasErrors() {
		return cty.NilVal, fmt.Errorf("variable %s (%s) is a %s: pass its value as JSON, e.g. %s", v.name, v.decl, v.typ.FriendlyName(), exampleOf(v.typ))
	}
	val, diags := expr.Value(nil)
	if diags.HasErrors() {
		return cty.NilVal, fmt.Errorf("variable %s (%s) is a %s: pass its value as JSON, e.g. %s", v.name, v.decl, v.typ.FriendlyName(), exampleOf(v.typ))
	}
	out, err := convert.Convert(val, v.typ)
	if err != nil {
		return cty.NilVal, fmt.Errorf("variable %s (%s): the value is not a valid %s: %w", v.name, v.decl, v.typ.FriendlyName(), err)
	}
	return out, nil
}

// validate applies the variable's validation blocks to val, as packer does
// before a build. The value is never shown: it may be a secret.
func (v *hclVariable) validate(val cty.Value) error {
	ctx := &hcl.EvalContext{
		Variables: map[string]cty.Value{"var": cty.ObjectVal(map[string]cty.Value{v.name: val})},
		Functions: hclFunctions(nil),
	}
	for _, rule := range v.validations {
		ok, diags := rule.condition.Value(ctx)
		if diags.HasErrors() {
			return fmt.Errorf("variable %s: validation rule at %s: %w", v.name, rule.rng, diags)
		}
		ok, err := convert.Convert(ok, cty.Bool)
		if err != nil || ok.IsNull() || !ok.IsKnown() {
			return fmt.Errorf("variable %s: the condition of the validation rule at %s must be true or false", v.name, rule.rng)
		}
		if ok.True() {
			continue
		}
		msg := "the value is not valid"
		if m, diags := rule.message.Value(nil); !diags.HasErrors() && m.Type() == cty.String && !m.IsNull() && m.IsKnown() {
			msg = m.AsString()
		}
		return fmt.Errorf("variable %s: %s (the validation rule at %s; packer 1.9.5 fails with \"Invalid value for variable\")", v.name, msg, rule.rng)
	}
	return nil
}

func exampleOf(t cty.Type) string {
	switch {
	case t.IsListType(), t.IsSetType(), t.IsTupleType():
		return `["a", "b"]`
	default:
		return `{"key": "value"}`
	}
}

// varFileValue is the JSON a var-file holds for a value given as a string:
// packer 1.9.5 converts a JSON string to a number or bool, but a list or
// map variable needs a JSON list or object.
func (v *hclVariable) varFileValue(raw string) (any, error) {
	if v.typ == cty.DynamicPseudoType || v.typ.IsPrimitiveType() {
		return raw, nil
	}
	val, err := v.convert(raw)
	if err != nil {
		return nil, err
	}
	data, err := ctyjson.Marshal(val, v.typ)
	if err != nil {
		return nil, fmt.Errorf("variable %s: %w", v.name, err)
	}
	return json.RawMessage(data), nil
}
