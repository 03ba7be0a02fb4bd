package localsim

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/imgflow/imgflow/packer"
)

// DownloadsDirVar is the template variable through which packer_build
// passes the directory a template's file provisioners download into
// (`"direction": "download"`): a new temporary directory per build, read
// back as the build's downloads. Like FilesDirVar, its value does not
// enter the build identity.
const DownloadsDirVar = "imgflow_downloads_dir"

// Download is a file provisioner with direction "download" into the
// downloads directory: the remote Source on the build VM, fetched to Name
// inside the directory.
type Download struct {
	Source string
	Name   string
	// Only and Except are the provisioner's build filters (packer -only
	// semantics per provisioner); empty means every build.
	Only, Except []string
}

// downloadDestRE matches a destination inside the downloads directory as
// a JSON template writes it ({{user `imgflow_downloads_dir`}}/NAME) and as
// an HCL2 template does ("${var.imgflow_downloads_dir}/NAME", shown with
// its quotes by packer.Template).
var downloadDestRE = regexp.MustCompile("^(?:\\{\\{\\s*user\\s+`" + DownloadsDirVar + "`\\s*\\}\\}|\"\\$\\{var\\." + DownloadsDirVar + "\\})/([^\"]+)\"?$")

// Downloads lists the template's download provisioners. One that
// downloads elsewhere is an error saying how to write it: packer would
// write into packer's working directory, the workspace, where nothing may
// be overwritten unasked.
func Downloads(tpl *packer.Template) ([]Download, error) {
	var out []Download
	var errs []string
	for i, p := range tpl.Provisioners {
		if p["type"] != "file" || p["direction"] != "download" {
			continue
		}
		src, _ := p["source"].(string)
		dest, _ := p["destination"].(string)
		m := downloadDestRE.FindStringSubmatch(dest)
		name := ""
		if m != nil {
			name = path.Clean(m[1])
		}
		if m == nil || strings.HasSuffix(m[1], "/") || name == "." || strings.HasPrefix(name, "../") {
			errs = append(errs, fmt.Sprintf("provisioner %d (file, download %s) writes to %s: download into the build's downloads directory, destination %q (JSON) or %q (HCL2), so packer_build returns it",
				i+1, src, dest, "{{user `"+DownloadsDirVar+"`}}/NAME", "${var."+DownloadsDirVar+"}/NAME"))
			continue
		}
		out = append(out, Download{Source: strings.Trim(src, `"`), Name: name, Only: stringList(p["only"]), Except: stringList(p["except"])})
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return out, nil
}

func stringList(v any) []string {
	items, _ := v.([]any)
	var out []string
	for _, it := range items {
		if s, ok := it.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// appliesTo reports whether the provisioner runs for build.
func (d Download) appliesTo(build string) bool {
	if len(d.Only) > 0 && !contains(d.Only, build) {
		return false
	}
	return !contains(d.Except, build)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// writeDownloads writes what the build's download provisioners would
// fetch into the downloads directory. No VM ran, so a download is what
// the simulation knows of the VM: a file the build uploaded is downloaded
// as uploaded; any other path is a description of the build (source
// image, variables without secrets, uploaded files with modes and
// digests), as JSON when the name ends in .json, as text otherwise.
func (p *prepared) writeDownloads(s *simulation) error {
	dir := p.values[DownloadsDirVar]
	if dir == "" || len(p.downloads) == 0 {
		return nil
	}
	staged := map[string]stagedFile{}
	if p.staged != nil {
		staged = p.staged.files
	}
	for _, d := range p.downloads {
		if !d.appliesTo(s.cfg.build) {
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
func (p *prepared) describe(s *simulation, d Download, staged map[string]stagedFile) []byte {
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
		if !p.secret[k] && k != FilesDirVar && k != DownloadsDirVar {
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
