package builtins

import (
	"fmt"
	"strings"
)

// Reference renders the builtin reference as Markdown from the registry:
// one section per group, a signature, the doc, a parameter table and an
// example per builtin. `imgflow doc` prints it and WORKFLOWS.md holds it.
func (r *Registry) Reference() string {
	var b strings.Builder
	for _, group := range r.groups {
		fmt.Fprintf(&b, "### %s\n\n", group)
		for _, s := range r.Specs(group) {
			writeSpec(&b, s)
		}
	}
	return b.String()
}

func writeSpec(b *strings.Builder, s *Spec) {
	fmt.Fprintf(b, "#### `%s`\n\n```python\n%s\n```\n\n%s\n\n", s.Name, s.Signature(), s.Doc)
	if len(s.Params) > 0 {
		b.WriteString("| parameter | type | default | |\n|---|---|---|---|\n")
		for _, p := range s.Params {
			def := "required"
			if !p.Required() {
				def = "`" + p.Default + "`"
			}
			fmt.Fprintf(b, "| `%s` | %s | %s | %s |\n", p.Name, p.Kind, def, strings.ReplaceAll(p.Doc, "|", `\|`))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(b, "Returns: %s.\n\n", s.Returns)
	if s.Example != "" {
		fmt.Fprintf(b, "```python\n%s\n```\n\n", s.Example)
	}
}

// Signature is the builtin's call shape, keyword-only parameters after `*`.
func (s *Spec) Signature() string {
	parts := make([]string, 0, len(s.Params)+1)
	for i, p := range s.Params {
		if i == s.Positional && i > 0 || (i == 0 && s.Positional == 0) {
			parts = append(parts, "*")
		}
		if p.Required() {
			parts = append(parts, p.Name)
		} else {
			parts = append(parts, p.Name+"="+p.Default)
		}
	}
	return s.Name + "(" + strings.Join(parts, ", ") + ")"
}

// Markers delimit the generated reference inside WORKFLOWS.md.
const (
	ReferenceBegin = "<!-- BEGIN GENERATED BUILTINS: imgflow doc -->"
	ReferenceEnd   = "<!-- END GENERATED BUILTINS -->"
)

// SpliceReference replaces the generated section of a document.
func (r *Registry) SpliceReference(doc string) (string, error) {
	begin := strings.Index(doc, ReferenceBegin)
	end := strings.Index(doc, ReferenceEnd)
	if begin < 0 || end < begin {
		return "", fmt.Errorf("markers %q and %q not found", ReferenceBegin, ReferenceEnd)
	}
	return doc[:begin+len(ReferenceBegin)] + "\n\n" + r.Reference() + doc[end:], nil
}
