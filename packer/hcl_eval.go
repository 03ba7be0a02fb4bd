package packer

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/tryfunc"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// hclFunctions returns the packer 1.9.5 functions imgflow evaluates, from
// go-cty's stdlib, which most of packer's are (TestRealPackerHCL2Functions…
// compares a sample with real packer). env is only given to variable
// defaults, as in packer. timestamp() and uuidv4() are unknown: what they
// depend on is left as source text, as Render leaves {{timestamp}} in JSON
// templates. File functions (file, templatefile, …) are not offered, so a
// template using them fails with HCL's "Call to unknown function".
func hclFunctions(env map[string]string) map[string]function.Function {
	fns := map[string]function.Function{
		"abs":             stdlib.AbsoluteFunc,
		"can":             tryfunc.CanFunc,
		"ceil":            stdlib.CeilFunc,
		"chomp":           stdlib.ChompFunc,
		"chunklist":       stdlib.ChunklistFunc,
		"coalesce":        coalesceFunc,
		"coalescelist":    stdlib.CoalesceListFunc,
		"compact":         stdlib.CompactFunc,
		"concat":          stdlib.ConcatFunc,
		"contains":        stdlib.ContainsFunc,
		"csvdecode":       stdlib.CSVDecodeFunc,
		"distinct":        stdlib.DistinctFunc,
		"element":         stdlib.ElementFunc,
		"flatten":         stdlib.FlattenFunc,
		"floor":           stdlib.FloorFunc,
		"format":          stdlib.FormatFunc,
		"formatdate":      stdlib.FormatDateFunc,
		"formatlist":      stdlib.FormatListFunc,
		"indent":          stdlib.IndentFunc,
		"join":            stdlib.JoinFunc,
		"jsondecode":      stdlib.JSONDecodeFunc,
		"jsonencode":      stdlib.JSONEncodeFunc,
		"keys":            stdlib.KeysFunc,
		"length":          lengthFunc,
		"log":             stdlib.LogFunc,
		"lookup":          stdlib.LookupFunc,
		"lower":           stdlib.LowerFunc,
		"max":             stdlib.MaxFunc,
		"merge":           stdlib.MergeFunc,
		"min":             stdlib.MinFunc,
		"parseint":        stdlib.ParseIntFunc,
		"pow":             stdlib.PowFunc,
		"range":           stdlib.RangeFunc,
		"regex":           stdlib.RegexFunc,
		"regex_replace":   stdlib.RegexReplaceFunc,
		"regexall":        stdlib.RegexAllFunc,
		"replace":         stdlib.ReplaceFunc,
		"reverse":         stdlib.ReverseListFunc,
		"setintersection": stdlib.SetIntersectionFunc,
		"setproduct":      stdlib.SetProductFunc,
		"setunion":        stdlib.SetUnionFunc,
		"signum":          stdlib.SignumFunc,
		"slice":           stdlib.SliceFunc,
		"sort":            stdlib.SortFunc,
		"split":           stdlib.SplitFunc,
		"strrev":          stdlib.ReverseFunc,
		"substr":          stdlib.SubstrFunc,
		"timeadd":         stdlib.TimeAddFunc,
		"timestamp":       unknownStringFunc,
		"title":           stdlib.TitleFunc,
		"trim":            stdlib.TrimFunc,
		"trimprefix":      stdlib.TrimPrefixFunc,
		"trimspace":       stdlib.TrimSpaceFunc,
		"trimsuffix":      stdlib.TrimSuffixFunc,
		"try":             tryfunc.TryFunc,
		"upper":           stdlib.UpperFunc,
		"uuidv4":          unknownStringFunc,
		"values":          stdlib.ValuesFunc,
		"zipmap":          stdlib.ZipmapFunc,
	}
	if env != nil {
		fns["env"] = function.New(&function.Spec{
			Params: []function.Parameter{{Name: "key", Type: cty.String}},
			Type:   function.StaticReturnType(cty.String),
			Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
				// An unset variable is "", as in packer.
				return cty.StringVal(env[args[0].AsString()]), nil
			},
		})
	}
	return fns
}

// lengthFunc is packer's length: the number of characters of a string,
// or of elements of a collection (go-cty's LengthFunc takes only these).
var lengthFunc = function.New(&function.Spec{
	Params: []function.Parameter{{Name: "value", Type: cty.DynamicPseudoType, AllowDynamicType: true, AllowUnknown: true}},
	Type:   function.StaticReturnType(cty.Number),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		if args[0].Type() == cty.String {
			return stdlib.Strlen(args[0])
		}
		return stdlib.Length(args[0])
	},
})

// coalesceFunc is packer's coalesce: the first argument that is neither
// null nor "" (go-cty's CoalesceFunc returns "" — measured difference).
var coalesceFunc = function.New(&function.Spec{
	VarParam: &function.Parameter{Name: "vals", Type: cty.DynamicPseudoType, AllowNull: true, AllowUnknown: true, AllowDynamicType: true},
	Type: func(args []cty.Value) (cty.Type, error) {
		types := make([]cty.Type, len(args))
		for i, a := range args {
			types[i] = a.Type()
		}
		t, _ := convert.UnifyUnsafe(types)
		if t == cty.NilType {
			return cty.NilType, fmt.Errorf("all arguments must have the same type")
		}
		return t, nil
	},
	Impl: func(args []cty.Value, retType cty.Type) (cty.Value, error) {
		for _, a := range args {
			if !a.IsKnown() {
				return cty.UnknownVal(retType), nil
			}
			if a.IsNull() {
				continue
			}
			v, err := convert.Convert(a, retType)
			if err != nil {
				return cty.NilVal, err
			}
			if retType == cty.String && v.AsString() == "" {
				continue
			}
			return v, nil
		}
		return cty.NilVal, fmt.Errorf("no non-null, non-empty-string arguments")
	},
})

var unknownStringFunc = function.New(&function.Spec{
	Type: function.StaticReturnType(cty.String),
	Impl: func([]cty.Value, cty.Type) (cty.Value, error) { return cty.UnknownVal(cty.String), nil },
})

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

// ctyToGo converts a known value to encoding/json's shapes: string,
// float64, bool, []any, map[string]any; null is nil.
func ctyToGo(v cty.Value) (any, error) {
	v, _ = v.Unmark()
	if v.IsNull() {
		return nil, nil
	}
	t := v.Type()
	switch {
	case t == cty.String:
		return v.AsString(), nil
	case t == cty.Number:
		f, _ := v.AsBigFloat().Float64()
		return f, nil
	case t == cty.Bool:
		return v.True(), nil
	case t.IsListType() || t.IsSetType() || t.IsTupleType():
		out := []any{}
		for it := v.ElementIterator(); it.Next(); {
			_, ev := it.Element()
			gv, err := ctyToGo(ev)
			if err != nil {
				return nil, err
			}
			out = append(out, gv)
		}
		return out, nil
	case t.IsMapType() || t.IsObjectType():
		out := map[string]any{}
		for it := v.ElementIterator(); it.Next(); {
			k, ev := it.Element()
			gv, err := ctyToGo(ev)
			if err != nil {
				return nil, err
			}
			out[k.AsString()] = gv
		}
		return out, nil
	}
	return nil, fmt.Errorf("cannot use a value of type %s here", t.FriendlyName())
}

// ctyString shows a constant value as a string: strings as they are,
// numbers and booleans as written, anything else as JSON.
func ctyString(v cty.Value) (string, error) {
	if v.IsNull() {
		return "", nil
	}
	switch v.Type() {
	case cty.String:
		return v.AsString(), nil
	case cty.Number:
		return v.AsBigFloat().Text('f', -1), nil
	case cty.Bool:
		if v.True() {
			return "true", nil
		}
		return "false", nil
	}
	data, err := ctyjson.Marshal(v, v.Type())
	return string(data), err
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
