package packer

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// HCL2Ext is the file name suffix of an HCL2 packer template.
const HCL2Ext = ".pkr.hcl"

// Plugin is one entry of a template's packer { required_plugins { … } }.
type Plugin struct {
	// Source is the plugin's address, e.g. "github.com/hashicorp/azure".
	Source string
	// Version is the version constraint, e.g. ">= 2.5.0" ("" when absent).
	Version string
}

// hclTemplate is what an HCL2 template keeps beyond Template's common
// fields: the expressions, evaluated by Render.
type hclTemplate struct {
	// src holds each file's bytes, to show unevaluated expressions.
	src       map[string][]byte
	variables map[string]*hclVariable
	locals    map[string]*hclLocal
	sources   map[string]*hclSource // by "type.name"
	// builds[i] is Template.Builders[i].
	builds []hclBuild
	// exprs are every expression of the template, for UsedVariables and
	// CheckVariables.
	exprs []hclExpr
	// auto holds the values of a template directory's *.auto.pkrvars.*
	// files; values passed to CheckVariables and Render override them.
	auto map[string]string
}

// withAuto returns values over the auto var-files' values.
func (h *hclTemplate) withAuto(values map[string]string) map[string]string {
	if len(h.auto) == 0 {
		return values
	}
	out := make(map[string]string, len(h.auto)+len(values))
	for k, v := range h.auto {
		out[k] = v
	}
	for k, v := range values {
		out[k] = v
	}
	return out
}

// hclVariable is a variable block.
type hclVariable struct {
	name      string
	typ       cty.Type // cty.DynamicPseudoType when the block has no type
	def       hcl.Expression
	sensitive bool
	decl      hcl.Range
	// validations are the variable's validation blocks, in order.
	validations []hclValidation
}

// hclValidation is a variable's validation { condition error_message }.
type hclValidation struct {
	condition hcl.Expression
	message   hcl.Expression
	rng       hcl.Range
}

// hclLocal is one locals attribute or local block.
type hclLocal struct {
	name      string
	expr      hcl.Expression
	sensitive bool
}

// hclSource is a top-level source "type" "name" block.
type hclSource struct {
	typ, name string
	body      *hclsyntax.Body
}

// hclBuild is one source run by one build block.
type hclBuild struct {
	source *hclSource
	// name is the source name the build sees (source.name): the source's,
	// or the one a build-level source block sets.
	name string
	// override holds a build-level source block's attributes, which replace
	// the source's (nil when the build lists the source by reference only).
	override *hclsyntax.Body
}

// hclExpr is one expression and where it is.
type hclExpr struct {
	// path names the place, e.g. "source.azure-arm.sig.location".
	path string
	expr hclsyntax.Expression
	// variable is set for a variable's default, where env() is allowed.
	variable string
}

// where returns path with the expression's file and line.
func (e hclExpr) where() string {
	r := e.expr.Range()
	return fmt.Sprintf("%s (%s:%d)", e.path, shortFile(r.Filename), r.Start.Line)
}

func shortFile(name string) string {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		return name[i+1:]
	}
	return name
}

// IsHCL2 reports whether the template was written in HCL2.
func (t *Template) IsHCL2() bool { return t.hcl != nil }

// isHCL2Path reports whether LoadTemplate reads path as HCL2: a .pkr.hcl
// file or a directory.
func isHCL2Path(path string) bool {
	if strings.HasSuffix(path, HCL2Ext) {
		return true
	}
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// ParseHCL2Template parses an HCL2 template from memory; filename is used in
// error messages. The result has no Path.
func ParseHCL2Template(src []byte, filename string) (*Template, error) {
	t, err := parseHCL2Files([]hclFile{{name: filename, src: src}}, filename)
	if err != nil {
		return nil, err
	}
	t.source = src
	return t, nil
}

// hclFile is one file of an HCL2 template.
type hclFile struct {
	name string
	src  []byte
}

// parseHCL2Files parses the files of one template (a file, or a
// directory's *.pkr.hcl files) as packer does: one set of variables,
// locals and sources that every file's build blocks share.
func parseHCL2Files(files []hclFile, display string) (*Template, error) {
	p := &hclParser{
		t: newTemplate(),
		h: &hclTemplate{src: map[string][]byte{}, variables: map[string]*hclVariable{}, locals: map[string]*hclLocal{}, sources: map[string]*hclSource{}},
	}
	p.t.hcl = p.h
	var bodies []*hclsyntax.Body
	for _, f := range files {
		file, diags := hclsyntax.ParseConfig(f.src, f.name, hcl.InitialPos)
		p.errs = append(p.errs, diags...)
		if diags.HasErrors() {
			continue
		}
		p.h.src[f.name] = f.src
		p.t.source = append(p.t.source, fmt.Sprintf("%d:%s;%d:", len(f.name), filepath.Base(f.name), len(f.src))...)
		p.t.source = append(p.t.source, f.src...)
		bodies = append(bodies, file.Body.(*hclsyntax.Body))
	}
	for _, body := range bodies {
		p.topLevel(body)
	}
	if len(p.errs) == 0 {
		for _, body := range bodies {
			p.builds(body)
		}
	}
	if len(p.errs) > 0 {
		return nil, p.errs
	}
	if len(p.t.Builders) == 0 {
		return nil, fmt.Errorf("%s: template has no build block with sources; packer would build nothing", display)
	}
	for name, v := range p.h.variables {
		if v.sensitive {
			p.t.SensitiveVariables = append(p.t.SensitiveVariables, name)
		}
	}
	sort.Strings(p.t.SensitiveVariables)
	return p.t, nil
}

// loadHCL2 reads one .pkr.hcl file.
func loadHCL2(abs string) (*Template, error) {
	data, err := os.ReadFile(abs)
	if err != nil {
		return nil, fmt.Errorf("packer template: %w", err)
	}
	return ParseHCL2Template(data, abs)
}

// hclParser collects a template's blocks and every error it finds.
type hclParser struct {
	t    *Template
	h    *hclTemplate
	errs hcl.Diagnostics
}

func (p *hclParser) fail(rng hcl.Range, summary, detail string) {
	p.errs = append(p.errs, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: rng.Ptr()})
}

func (p *hclParser) addExprs(path string, body *hclsyntax.Body, variable string) {
	for _, name := range sortedAttrNames(body) {
		p.h.exprs = append(p.h.exprs, hclExpr{path: path + "." + name, expr: body.Attributes[name].Expr, variable: variable})
	}
	counts := map[string]int{}
	for _, b := range body.Blocks {
		sub := fmt.Sprintf("%s.%s[%d]", path, b.Type, counts[b.Type])
		counts[b.Type]++
		p.addExprs(sub, b.Body, variable)
	}
}

// topLevel reads the packer, variable(s), local(s) and source blocks.
func (p *hclParser) topLevel(body *hclsyntax.Body) {
	for _, a := range body.Attributes {
		p.fail(a.NameRange, "Unexpected attribute", fmt.Sprintf("%q is not allowed at the top level of a packer template; put it inside a block", a.Name))
	}
	for _, b := range body.Blocks {
		switch b.Type {
		case "packer":
			p.packerBlock(b)
		case "variable":
			if p.labels(b, "name") {
				p.variable(b.Labels[0], b)
			}
		case "variables":
			// The short form: each attribute is a variable with a default.
			for _, name := range sortedAttrNames(b.Body) {
				a := b.Body.Attributes[name]
				p.declare(&hclVariable{name: name, typ: cty.DynamicPseudoType, def: a.Expr, decl: a.SrcRange})
			}
		case "locals":
			for _, name := range sortedAttrNames(b.Body) {
				p.local(&hclLocal{name: name, expr: b.Body.Attributes[name].Expr}, b.Body.Attributes[name].NameRange)
			}
			p.addExprs("local", b.Body, "")
		case "local":
			if p.labels(b, "name") {
				p.localBlock(b)
			}
		case "source":
			if p.labels(b, "type", "name") {
				key := b.Labels[0] + "." + b.Labels[1]
				if _, dup := p.h.sources[key]; dup {
					p.fail(b.DefRange(), "Duplicate source block", fmt.Sprintf("source %q %q is defined twice; rename one", b.Labels[0], b.Labels[1]))
					continue
				}
				p.h.sources[key] = &hclSource{typ: b.Labels[0], name: b.Labels[1], body: b.Body}
				p.addExprs("source."+key, b.Body, "")
			}
		case "build":
			// Read by builds, once every file's sources are known.
		case "data":
			p.fail(b.DefRange(), "Unsupported data source", "imgflow does not evaluate packer data sources; pass the value as a variable instead")
		default:
			p.fail(b.TypeRange, "Unsupported block type", fmt.Sprintf("packer templates have no %q block (packer, variable, variables, locals, local, source, build)", b.Type))
		}
	}
}

func (p *hclParser) labels(b *hclsyntax.Block, names ...string) bool {
	if len(b.Labels) == len(names) {
		return true
	}
	p.fail(b.DefRange(), "Wrong number of labels", fmt.Sprintf("a %s block takes %d label(s): %s", b.Type, len(names), strings.Join(names, ", ")))
	return false
}

// constant evaluates an expression that may not refer to anything.
func (p *hclParser) constant(expr hcl.Expression) (cty.Value, bool) {
	v, diags := expr.Value(nil)
	if diags.HasErrors() {
		p.errs = append(p.errs, diags...)
		return cty.NilVal, false
	}
	return v, true
}

func (p *hclParser) packerBlock(b *hclsyntax.Block) {
	for _, rb := range b.Body.Blocks {
		if rb.Type != "required_plugins" {
			continue
		}
		if p.t.RequiredPlugins == nil {
			p.t.RequiredPlugins = map[string]Plugin{}
		}
		for _, name := range sortedAttrNames(rb.Body) {
			a := rb.Body.Attributes[name]
			v, ok := p.constant(a.Expr)
			if !ok {
				continue
			}
			if v.IsNull() || !(v.Type().IsObjectType() || v.Type().IsMapType()) {
				p.fail(a.Expr.Range(), "Invalid required_plugins entry", fmt.Sprintf(`write %s = { source = "github.com/hashicorp/%s", version = ">= 1.0.0" }`, name, name))
				continue
			}
			plugin := Plugin{}
			m := v.AsValueMap()
			if s, ok := m["source"]; ok && s.Type() == cty.String && !s.IsNull() {
				plugin.Source = s.AsString()
			}
			if s, ok := m["version"]; ok && s.Type() == cty.String && !s.IsNull() {
				plugin.Version = s.AsString()
			}
			if plugin.Source == "" {
				p.fail(a.Expr.Range(), "Missing plugin source", fmt.Sprintf(`required_plugins %s needs a source, e.g. source = "github.com/hashicorp/%s"`, name, name))
				continue
			}
			p.t.RequiredPlugins[name] = plugin
		}
	}
}

func (p *hclParser) variable(name string, b *hclsyntax.Block) {
	v := &hclVariable{name: name, typ: cty.DynamicPseudoType, decl: b.DefRange()}
	if a, ok := b.Body.Attributes["type"]; ok {
		typ, diags := typeexpr.TypeConstraint(a.Expr)
		if diags.HasErrors() {
			p.errs = append(p.errs, diags...)
			return
		}
		v.typ = typ
	}
	if a, ok := b.Body.Attributes["default"]; ok {
		v.def = a.Expr
	}
	for _, vb := range b.Body.Blocks {
		if vb.Type != "validation" {
			continue
		}
		cond, hasCond := vb.Body.Attributes["condition"]
		msg, hasMsg := vb.Body.Attributes["error_message"]
		if !hasCond || !hasMsg {
			p.fail(vb.DefRange(), "Incomplete validation", "a validation block needs condition = … and error_message = \"…\"")
			continue
		}
		v.validations = append(v.validations, hclValidation{condition: cond.Expr, message: msg.Expr, rng: vb.TypeRange})
	}
	if a, ok := b.Body.Attributes["sensitive"]; ok {
		s, ok := p.constant(a.Expr)
		if !ok {
			return
		}
		if s.Type() != cty.Bool || s.IsNull() {
			p.fail(a.Expr.Range(), "Invalid sensitive", "sensitive must be true or false")
			return
		}
		v.sensitive = s.True()
	}
	p.declare(v)
}

func (p *hclParser) declare(v *hclVariable) {
	if prev, dup := p.h.variables[v.name]; dup {
		p.fail(v.decl, "Duplicate variable", fmt.Sprintf("variable %q is declared twice (also at %s); remove one", v.name, prev.decl))
		return
	}
	p.h.variables[v.name] = v
	decl := Variable{Name: v.name, Sensitive: v.sensitive, Required: v.def == nil}
	if v.def != nil {
		if se, ok := v.def.(hclsyntax.Expression); ok {
			p.h.exprs = append(p.h.exprs, hclExpr{path: "variable." + v.name + ".default", expr: se, variable: v.name})
		}
		decl.Default = p.h.display(v.def)
	}
	p.t.Variables[v.name] = decl
}

func (p *hclParser) local(l *hclLocal, rng hcl.Range) {
	if _, dup := p.h.locals[l.name]; dup {
		p.fail(rng, "Duplicate local", fmt.Sprintf("local %q is defined twice; remove one", l.name))
		return
	}
	p.h.locals[l.name] = l
}

func (p *hclParser) localBlock(b *hclsyntax.Block) {
	a, ok := b.Body.Attributes["expression"]
	if !ok {
		p.fail(b.DefRange(), "Missing expression", fmt.Sprintf("local %q needs expression = …", b.Labels[0]))
		return
	}
	l := &hclLocal{name: b.Labels[0], expr: a.Expr}
	if s, ok := b.Body.Attributes["sensitive"]; ok {
		v, ok := p.constant(s.Expr)
		if !ok {
			return
		}
		l.sensitive = v.Type() == cty.Bool && !v.IsNull() && v.True()
	}
	p.local(l, b.DefRange())
	p.h.exprs = append(p.h.exprs, hclExpr{path: "local." + l.name, expr: a.Expr})
}

// display is the value of a constant expression as a string, or its source
// text when it depends on anything (env(), var.…).
func (h *hclTemplate) display(expr hcl.Expression) string {
	if len(expr.Variables()) == 0 {
		if v, diags := expr.Value(nil); !diags.HasErrors() && v.IsWhollyKnown() {
			if s, err := ctyString(v); err == nil {
				return s
			}
		}
	}
	return h.sourceText(expr.Range())
}

func (h *hclTemplate) sourceText(r hcl.Range) string {
	src := h.src[r.Filename]
	if r.Start.Byte < 0 || r.End.Byte > len(src) || r.Start.Byte > r.End.Byte {
		return ""
	}
	return string(r.SliceBytes(src))
}

func sortedAttrNames(body *hclsyntax.Body) []string {
	names := make([]string, 0, len(body.Attributes))
	for n := range body.Attributes {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
