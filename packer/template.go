package packer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
)

// Template is a packer template: a legacy JSON template (packer 1.6.6's
// format) or an HCL2 .pkr.hcl file. Build one with LoadTemplate,
// ParseTemplate or ParseHCL2Template.
//
// Builders keep their whole configuration as decoded JSON so that callers
// (the local target) can read any azure-arm field without this package
// modelling the builder.
type Template struct {
	// Path is the absolute path the template was loaded from ("" when parsed
	// from bytes without a path). {{template_dir}} renders as its directory.
	Path string
	// Variables maps each declared variable to its declaration.
	Variables map[string]Variable
	// SensitiveVariables lists the template's "sensitive-variables" (JSON)
	// or its variables declared sensitive = true (HCL2), sorted.
	SensitiveVariables []string
	// Builders in template order.
	Builders []Builder
	// Provisioners in template order, each as decoded JSON.
	Provisioners []map[string]any
	// PostProcessors as decoded JSON: packer accepts a name, an object or a
	// sequence (array) of those for each entry, so entries are kept as any.
	PostProcessors []any
	// RequiredPlugins maps each plugin an HCL2 template's packer {
	// required_plugins { … } } block names to its source and version; nil
	// when there is none (always, for JSON templates).
	RequiredPlugins map[string]Plugin

	// hcl holds an HCL2 template's expressions; nil for JSON templates.
	hcl *hclTemplate
	// source is what the template was read from, see Source.
	source []byte
	// raw is the whole decoded document; UsedVariables scans it so that no
	// section is missed, including ones this type does not model.
	raw map[string]any
	// occ lists the template's variable references once: every render
	// checks them, and a template is rendered once per build.
	occ func() []occurrence
}

func newTemplate() *Template {
	t := &Template{Variables: map[string]Variable{}}
	t.occ = sync.OnceValue(t.findOccurrences)
	return t
}

// Variable is one entry of a template's "variables" section.
type Variable struct {
	Name string
	// Default is the declared default; it may itself contain {{user}} or
	// {{env}} references, which packer renders. For HCL2 it is a constant
	// default as a string (collections as JSON), or the default's source
	// text when it calls env() or refers to anything.
	Default string
	// Required is true when the default is JSON null (JSON) or absent
	// (HCL2): packer then refuses to build unless a value is passed.
	Required bool
	// Sensitive is true when the name is listed in "sensitive-variables"
	// (JSON) or declared with sensitive = true (HCL2).
	Sensitive bool
}

// Builder is one entry of a template's "builders" section.
type Builder struct {
	// Type is the builder type, e.g. "azure-arm".
	Type string
	// Name is the build name: the "name" field, or the type when absent
	// (packer's rule). For HCL2 it is "type.source-name", prefixed with
	// "build-name." when the build block has a name (packer 1.9.5). It is
	// what -only selects and what machine-readable lines carry as their
	// target.
	Name string
	// Config is the builder's whole JSON object, "type" and "name" included.
	// For HCL2 it is the source block (with a build's overrides) in the same
	// shape: attributes as keys, a nested block as an object, repeated
	// blocks as a list; attributes that refer to variables hold their
	// source text until Render.
	Config map[string]any
}

// LoadTemplate reads and parses the template at path: HCL2 when its name
// ends in .pkr.hcl or it is a directory of .pkr.hcl files (with
// *.auto.pkrvars.* files, as packer reads them), legacy JSON otherwise.
func LoadTemplate(path string) (*Template, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("packer template %s: %w", path, err)
	}
	if isHCL2Path(abs) {
		load := loadHCL2
		if st, err := os.Stat(abs); err == nil && st.IsDir() {
			load = loadHCL2Dir
		}
		t, err := load(abs)
		if err != nil {
			return nil, fmt.Errorf("packer template %s: %w", path, err)
		}
		t.Path = abs
		return t, nil
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return nil, fmt.Errorf("packer template: %w", err)
	}
	t, err := ParseTemplate(data)
	if err != nil {
		return nil, fmt.Errorf("packer template %s: %w", path, err)
	}
	t.Path = abs
	return t, nil
}

// ParseTemplate parses a JSON template from memory. The result has no Path.
func ParseTemplate(data []byte) (*Template, error) {
	var raw map[string]any
	// Unmarshal reads data in place; a json.Decoder would copy it into
	// its buffer first. Only a template it refuses goes through the
	// Decoder, whose errors (trailing data told apart) are the ones shown.
	if err := json.Unmarshal(data, &raw); err != nil {
		raw = nil
		dec := json.NewDecoder(bytes.NewReader(data))
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("invalid JSON: %w", err)
		}
		if raw != nil && dec.More() {
			return nil, fmt.Errorf("invalid JSON: trailing data after the template object")
		}
		// Else as the Decoder read it (it lets a stray "]" or "}" after
		// the object pass).
	}
	if raw == nil {
		return nil, fmt.Errorf("invalid template: top level must be a JSON object")
	}
	t := newTemplate()
	t.raw, t.source = raw, data

	if v, ok := raw["sensitive-variables"]; ok {
		list, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf(`"sensitive-variables" must be an array of names`)
		}
		for i, e := range list {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf(`"sensitive-variables"[%d] must be a string`, i)
			}
			t.SensitiveVariables = append(t.SensitiveVariables, s)
		}
	}
	sensitive := map[string]bool{}
	for _, s := range t.SensitiveVariables {
		sensitive[s] = true
	}

	if v, ok := raw["variables"]; ok {
		vars, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf(`"variables" must be an object`)
		}
		for name, def := range vars {
			decl := Variable{Name: name, Sensitive: sensitive[name]}
			switch d := def.(type) {
			case nil:
				decl.Required = true
			case string:
				decl.Default = d
			default:
				// packer 1.6.6 fails the same way ("expected type 'string'").
				return nil, fmt.Errorf("variable %s: default must be a string or null, got %s", name, jsonKind(def))
			}
			t.Variables[name] = decl
		}
	}

	if v, ok := raw["builders"]; ok {
		list, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf(`"builders" must be an array`)
		}
		seen := map[string]int{}
		for i, e := range list {
			cfg, ok := e.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("builders[%d] must be an object", i)
			}
			typ, _ := cfg["type"].(string)
			if typ == "" {
				return nil, fmt.Errorf("builders[%d] has no \"type\"", i)
			}
			name := typ
			if n, ok := cfg["name"]; ok {
				s, ok := n.(string)
				if !ok || s == "" {
					return nil, fmt.Errorf("builders[%d]: \"name\" must be a non-empty string", i)
				}
				name = s
			}
			if j, dup := seen[name]; dup {
				return nil, fmt.Errorf("builders[%d] and builders[%d] are both named %q; packer requires unique build names", j, i, name)
			}
			seen[name] = i
			t.Builders = append(t.Builders, Builder{Type: typ, Name: name, Config: cfg})
		}
	}
	if len(t.Builders) == 0 {
		return nil, fmt.Errorf("template has no builders")
	}

	if v, ok := raw["provisioners"]; ok {
		list, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf(`"provisioners" must be an array`)
		}
		for i, e := range list {
			p, ok := e.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("provisioners[%d] must be an object", i)
			}
			t.Provisioners = append(t.Provisioners, p)
		}
	}

	if v, ok := raw["post-processors"]; ok {
		list, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf(`"post-processors" must be an array`)
		}
		t.PostProcessors = list
	}
	return t, nil
}

// Source returns the bytes the template was parsed from: a file's content,
// or for a template directory each file's name and content in name order.
// Two templates with the same Source are the same template.
func (t *Template) Source() []byte { return t.source }

// Declared returns the declared variables sorted by name.
func (t *Template) Declared() []Variable {
	out := make([]Variable, 0, len(t.Variables))
	for _, v := range t.Variables {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Builder returns the builder with the given build name.
func (t *Template) Builder(name string) (Builder, bool) {
	for _, b := range t.Builders {
		if b.Name == name {
			return b, true
		}
	}
	return Builder{}, false
}

// BuilderNames returns the build names in template order.
func (t *Template) BuilderNames() []string {
	names := make([]string, len(t.Builders))
	for i, b := range t.Builders {
		names[i] = b.Name
	}
	return names
}

func (t *Template) displayName() string {
	if t.Path != "" {
		return t.Path
	}
	return "(template)"
}

func jsonKind(v any) string {
	switch v.(type) {
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	default:
		return fmt.Sprintf("%T", v)
	}
}
