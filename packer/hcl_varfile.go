package packer

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// ReadVarFile reads a var-file for this template, as strings. For a JSON
// template it is the package's ReadVarFile (packer 1.6.6 takes only
// strings). For an HCL2 template packer 1.9.5 also reads typed JSON
// values and .pkrvars.hcl files: a value that is not a string is kept as
// its JSON text (["a","b"], 30, true), which the variable check and Render
// convert to the declared type.
func (t *Template) ReadVarFile(path string) (map[string]string, error) {
	if t.hcl == nil {
		return ReadVarFile(path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("var-file: %w", err)
	}
	if strings.HasSuffix(path, ".pkrvars.hcl") {
		return readHCLVarFile(data, path)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("var-file %s: %w", path, err)
	}
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		var s string
		if err := json.Unmarshal(v, &s); err == nil {
			out[k] = s
			continue
		}
		var compact strings.Builder
		enc := json.NewEncoder(&compact)
		var decoded any
		if err := json.Unmarshal(v, &decoded); err != nil {
			return nil, fmt.Errorf("var-file %s: %s: %w", path, k, err)
		}
		if err := enc.Encode(decoded); err != nil {
			return nil, fmt.Errorf("var-file %s: %s: %w", path, k, err)
		}
		out[k] = strings.TrimSuffix(compact.String(), "\n")
	}
	return out, nil
}

// readHCLVarFile reads name = value lines; values must be constants.
func readHCLVarFile(data []byte, path string) (map[string]string, error) {
	file, diags := hclsyntax.ParseConfig(data, path, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, fmt.Errorf("var-file: %w", diags)
	}
	body := file.Body.(*hclsyntax.Body)
	if len(body.Blocks) > 0 {
		return nil, fmt.Errorf("var-file: %s: a var-file holds only name = value lines, not blocks", body.Blocks[0].DefRange())
	}
	names := make([]string, 0, len(body.Attributes))
	for n := range body.Attributes {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make(map[string]string, len(names))
	for _, name := range names {
		a := body.Attributes[name]
		v, diags := a.Expr.Value(nil)
		if diags.HasErrors() {
			return nil, fmt.Errorf("var-file: %w", diags)
		}
		s, err := ctyString(v)
		if err != nil {
			return nil, fmt.Errorf("var-file: %s: %w", a.SrcRange, err)
		}
		out[name] = s
	}
	return out, nil
}
