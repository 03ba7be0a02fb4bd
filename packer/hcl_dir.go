package packer

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// loadHCL2Dir reads a directory as packer 1.9.5 does: every *.pkr.hcl file
// is part of the template, and *.auto.pkrvars.hcl / *.auto.pkrvars.json
// files give values (below var-files and vars), in name order.
func loadHCL2Dir(dir string) (*Template, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("packer template: %w", err)
	}
	var files []hclFile
	var autoFiles []string
	for _, e := range entries {
		name := e.Name()
		switch {
		case e.IsDir():
		case strings.HasSuffix(name, ".pkr.json"):
			return nil, fmt.Errorf("%s: imgflow reads HCL2 templates written as .pkr.hcl, not .pkr.json; convert it or pass the .pkr.hcl files' directory without it", filepath.Join(dir, name))
		case strings.HasSuffix(name, HCL2Ext):
			data, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				return nil, fmt.Errorf("packer template: %w", err)
			}
			files = append(files, hclFile{name: filepath.Join(dir, name), src: data})
		case strings.HasSuffix(name, ".auto.pkrvars.hcl"), strings.HasSuffix(name, ".auto.pkrvars.json"):
			autoFiles = append(autoFiles, filepath.Join(dir, name))
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s has no *%s file: not a packer template directory", dir, HCL2Ext)
	}
	t, err := parseHCL2Files(files, dir)
	if err != nil {
		return nil, err
	}
	for _, f := range autoFiles {
		values, err := t.ReadVarFile(f)
		if err != nil {
			return nil, err
		}
		data, _ := os.ReadFile(f)
		t.source = append(t.source, fmt.Sprintf("%d:%s;%d:", len(f), filepath.Base(f), len(data))...)
		t.source = append(t.source, data...)
		if t.hcl.auto == nil {
			t.hcl.auto = map[string]string{}
		}
		for k, v := range values {
			t.hcl.auto[k] = v
		}
	}
	return t, nil
}
