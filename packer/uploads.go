package packer

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Upload is a file provisioner's upload source as the template writes it,
// relative to packer's working directory or absolute.
type Upload struct {
	// Provisioner is the provisioner's 1-based index in the template.
	Provisioner int
	Source      string
	// Destination is the provisioner's destination on the VM, as written.
	Destination string
	// Only and Except are the provisioner's build filters.
	Only, Except []string
}

// AppliesTo reports whether the provisioner runs for one of builds.
func (u Upload) AppliesTo(builds []string) bool {
	for _, b := range builds {
		if (len(u.Only) == 0 || slices.Contains(u.Only, b)) && !slices.Contains(u.Except, b) {
			return true
		}
	}
	return len(builds) == 0
}

// Uploads lists the upload sources packer 1.9.5's file provisioner checks
// when it prepares a build: every "source" and "sources" entry of a file
// provisioner uploading (the default direction) without "generated":
// true. Sources that are expressions (a variable, {{template_dir}}) are
// left to packer, which knows their values.
func (t *Template) Uploads() []Upload {
	var out []Upload
	for i, p := range t.Provisioners {
		if p["type"] != "file" || (p["direction"] != nil && p["direction"] != "upload") {
			continue
		}
		if g, _ := p["generated"].(bool); g {
			continue
		}
		sources := []any{p["source"]}
		if list, ok := p["sources"].([]any); ok {
			sources = append(sources, list...)
		}
		for _, s := range sources {
			src, _ := s.(string)
			if src == "" || strings.Contains(src, "{{") || strings.Contains(src, "${") || strings.HasPrefix(src, `"`) {
				continue
			}
			dest, _ := p["destination"].(string)
			out = append(out, Upload{Provisioner: i + 1, Source: src, Destination: dest, Only: stringsOf(p["only"]), Except: stringsOf(p["except"])})
		}
	}
	return out
}

func stringsOf(v any) []string {
	items, _ := v.([]any)
	var out []string
	for _, it := range items {
		if s, ok := it.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// BadSource is packer 1.9.5's refusal of an upload source that does not
// exist in workDir ("" = the current directory), or nil: "Bad source
// 'vhdbuilder/lister/bin/lister': stat vhdbuilder/lister/bin/lister: no
// such file or directory".
func (u Upload) BadSource(workDir string) error {
	p := u.Source
	if !filepath.IsAbs(p) && workDir != "" {
		p = filepath.Join(workDir, filepath.FromSlash(p))
	}
	return u.BadSourceAt(p)
}

// BadSourceAt is BadSource for the source read from p.
func (u Upload) BadSourceAt(p string) error {
	if _, err := os.Stat(p); err != nil {
		if pe, ok := err.(*os.PathError); ok {
			return fmt.Errorf("Bad source '%s': %s %s: %w", u.Source, pe.Op, u.Source, pe.Err)
		}
		return fmt.Errorf("Bad source '%s': %w", u.Source, err)
	}
	return nil
}
