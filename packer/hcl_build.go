package packer

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// builds reads every build block into Template.Builders, Provisioners and
// PostProcessors. Build names follow packer 1.9.5 (what -only matches and
// machine-readable lines carry): "type.name" for a build block without a
// name, "build-name.type.name" for one with.
func (p *hclParser) builds(body *hclsyntax.Body) {
	seen := map[string]hcl.Range{}
	index := 0
	for _, b := range body.Blocks {
		if b.Type != "build" {
			continue
		}
		if len(b.Labels) != 0 {
			p.fail(b.DefRange(), "Unexpected build label", `a build block takes no label; name it with name = "…" inside`)
			continue
		}
		path := fmt.Sprintf("build[%d]", index)
		index++
		p.addExprs(path, b.Body, "")
		buildName := ""
		if a, ok := b.Body.Attributes["name"]; ok {
			v, ok := p.constant(a.Expr)
			if !ok {
				continue
			}
			if v.Type() != cty.String || v.IsNull() || v.AsString() == "" {
				p.fail(a.Expr.Range(), "Invalid build name", "name must be a non-empty string")
				continue
			}
			buildName = v.AsString()
		}
		var builds []hclBuild
		var ranges []hcl.Range
		if a, ok := b.Body.Attributes["sources"]; ok {
			exprs, diags := hcl.ExprList(a.Expr)
			if diags.HasErrors() {
				p.errs = append(p.errs, diags...)
				continue
			}
			for _, e := range exprs {
				v, ok := p.constant(e)
				if !ok {
					continue
				}
				if v.Type() != cty.String || v.IsNull() {
					p.fail(e.Range(), "Invalid source reference", `write sources = ["source.azure-arm.name"]`)
					continue
				}
				if src := p.source(v.AsString(), e.Range()); src != nil {
					builds = append(builds, hclBuild{source: src, name: src.name})
					ranges = append(ranges, e.Range())
				}
			}
		}
		for _, sb := range b.Body.Blocks {
			if sb.Type != "source" || !p.labels(sb, "source reference") {
				continue
			}
			src := p.source(sb.Labels[0], sb.LabelRanges[0])
			if src == nil {
				continue
			}
			hb := hclBuild{source: src, name: src.name, override: sb.Body}
			if a, ok := sb.Body.Attributes["name"]; ok {
				v, ok := p.constant(a.Expr)
				if !ok || v.Type() != cty.String || v.IsNull() || v.AsString() == "" {
					p.fail(a.Expr.Range(), "Invalid source name", "name must be a non-empty string")
					continue
				}
				hb.name = v.AsString()
			}
			builds = append(builds, hb)
			ranges = append(ranges, sb.DefRange())
		}
		if len(builds) == 0 {
			p.fail(b.DefRange(), "Build without sources", `a build block needs sources = ["source.<type>.<name>"]`)
			continue
		}
		for i, hb := range builds {
			name := hb.source.typ + "." + hb.name
			if buildName != "" {
				name = buildName + "." + name
			}
			if prev, dup := seen[name]; dup {
				p.fail(ranges[i], "Duplicate build", fmt.Sprintf("build %q is also defined at %s; packer 1.9.5 would run both under one name, so their artifacts could not be told apart: give one build block a distinct name", name, prev))
				continue
			}
			seen[name] = ranges[i]
			cfg := p.h.staticBody(hb.source.body)
			if hb.override != nil {
				for k, v := range p.h.staticBody(hb.override) {
					cfg[k] = v
				}
			}
			cfg["type"], cfg["name"] = hb.source.typ, name
			p.t.Builders = append(p.t.Builders, Builder{Type: hb.source.typ, Name: name, Config: cfg})
			p.h.builds = append(p.h.builds, hb)
		}
		p.provisioners(b.Body)
	}
}

// source finds the source a build refers to as "source.type.name".
func (p *hclParser) source(ref string, rng hcl.Range) *hclSource {
	key, ok := strings.CutPrefix(ref, "source.")
	if src := p.h.sources[key]; ok && src != nil {
		return src
	}
	names := make([]string, 0, len(p.h.sources))
	for k := range p.h.sources {
		names = append(names, "source."+k)
	}
	sort.Strings(names)
	p.fail(rng, "Unknown source", fmt.Sprintf("%q is not a source of this template (sources: %s)", ref, strings.Join(names, ", ")))
	return nil
}

// provisioners appends a build block's provisioners and post-processors.
// Their attributes are shown as in staticBody: imgflow reads them, packer
// evaluates them.
func (p *hclParser) provisioners(body *hclsyntax.Body) {
	for _, b := range body.Blocks {
		switch b.Type {
		case "provisioner":
			if p.labels(b, "type") {
				p.t.Provisioners = append(p.t.Provisioners, p.h.typedBody(b))
			}
		case "post-processor":
			if p.labels(b, "type") {
				p.t.PostProcessors = append(p.t.PostProcessors, p.h.typedBody(b))
			}
		case "post-processors":
			var seq []any
			for _, pb := range b.Body.Blocks {
				if pb.Type == "post-processor" && p.labels(pb, "type") {
					seq = append(seq, p.h.typedBody(pb))
				}
			}
			p.t.PostProcessors = append(p.t.PostProcessors, seq)
		}
	}
}

func (h *hclTemplate) typedBody(b *hclsyntax.Block) map[string]any {
	m := h.staticBody(b.Body)
	m["type"] = b.Labels[0]
	return m
}

// staticBody converts a body to the JSON template's shape without
// evaluating anything that refers to variables: constant attributes become
// their values, the others their source text (e.g. "${var.location}").
// Nested blocks become objects, or lists of objects when repeated.
func (h *hclTemplate) staticBody(body *hclsyntax.Body) map[string]any {
	out := map[string]any{}
	for name, a := range body.Attributes {
		if len(a.Expr.Variables()) == 0 {
			if v, diags := a.Expr.Value(nil); !diags.HasErrors() && v.IsWhollyKnown() {
				if gv, err := ctyToGo(v); err == nil {
					if gv != nil {
						out[name] = gv
					}
					continue
				}
			}
		}
		out[name] = h.sourceText(a.Expr.Range())
	}
	addBlocks(out, body, h.staticBody)
	return out
}

// addBlocks adds body's nested blocks to out under their type: one block
// is an object, repeated blocks a list of objects.
func addBlocks(out map[string]any, body *hclsyntax.Body, convert func(*hclsyntax.Body) map[string]any) {
	count := map[string]int{}
	for _, b := range body.Blocks {
		count[b.Type]++
	}
	for _, b := range body.Blocks {
		m := convert(b.Body)
		if count[b.Type] == 1 {
			out[b.Type] = m
			continue
		}
		list, _ := out[b.Type].([]any)
		out[b.Type] = append(list, m)
	}
}
