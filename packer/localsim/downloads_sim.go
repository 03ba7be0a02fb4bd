package localsim

import (
	"encoding/json"
	"fmt"
	"github.com/imgflow/imgflow/packer"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// writeDownloads writes what the build's download provisioners would
// fetch where packer would write it: into packer's working directory
// (or DownloadsDirVar's directory). No VM ran, so a download is what
// the simulation knows of the VM: a file the build uploaded is downloaded
// as uploaded; any other path is a description of the build (source
// image, variables without secrets, uploaded files with modes and
// digests), as JSON when the name ends in .json, as text otherwise.
func (p *prepared) writeDownloads(s *simulation) error {
	if len(p.downloads) == 0 {
		return nil
	}
	staged := map[string]stagedFile{}
	if p.staged != nil {
		staged = p.staged.files
	}
	for _, d := range p.downloads {
		if !d.AppliesTo(s.cfg.build) {
			continue
		}
		var data []byte
		if f, ok := staged[d.Source]; ok {
			var err error
			if data, err = os.ReadFile(f.abs); err != nil {
				return err
			}
		} else {
			data = p.describe(s, d, staged)
		}
		dir := p.workDir
		if d.ViaVar {
			dir = p.values[packer.DownloadsDirVar]
		}
		dst := filepath.Join(dir, filepath.FromSlash(d.Name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return fmt.Errorf("download %s: %w", d.Source, err)
		}
	}
	return nil
}

// describe is the simulated content of a download that is not an upload.
func (p *prepared) describe(s *simulation, d packer.Download, staged map[string]stagedFile) []byte {
	c := s.cfg
	source := map[string]string{}
	switch {
	case c.sigSource != nil:
		source["shared_image_gallery"] = c.sigSource.String()
	case c.imageURL != "":
		source["image_url"] = strings.SplitN(c.imageURL, "?", 2)[0]
	default:
		source = map[string]string{"publisher": c.publisher, "offer": c.offer, "sku": c.sku, "version": c.version}
	}
	vars := map[string]string{}
	for k, v := range p.values {
		if !p.secret[k] && k != packer.FilesDirVar && k != packer.DownloadsDirVar {
			vars[k] = v
		}
	}
	files := make([]stagedFile, 0, len(staged))
	for _, f := range staged {
		files = append(files, f)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	note := fmt.Sprintf("%s of build %s, simulated by imgflow: no VM ran", d.Source, c.build)
	if strings.HasSuffix(d.Name, ".json") {
		data, _ := json.MarshalIndent(map[string]any{
			"simulated": note, "build": c.build, "source_image": source, "variables": vars, "files": files,
		}, "", "  ")
		return append(data, '\n')
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n", note)
	keys := sortedKeys(source)
	fmt.Fprintf(&b, "source image:")
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%s", k, source[k])
	}
	b.WriteString("\nvariables:\n")
	for _, k := range sortedKeys(vars) {
		// A list (the install list, space-separated) reads one item a line.
		if items := strings.Fields(vars[k]); len(items) > 1 {
			fmt.Fprintf(&b, "  %s =\n    %s\n", k, strings.Join(items, "\n    "))
			continue
		}
		fmt.Fprintf(&b, "  %s = %s\n", k, vars[k])
	}
	b.WriteString("files uploaded:\n")
	for _, f := range files {
		fmt.Fprintf(&b, "  %s %s %d sha256:%s\n", f.Path, f.Mode, f.Size, f.SHA256)
	}
	return []byte(b.String())
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
