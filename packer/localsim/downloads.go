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
	"sync"

	"github.com/imgflow/imgflow/packer"
)

// DownloadsDirVar is the template variable through which packer_build
// passed, before builds had a working directory of their own, the
// directory a template's file provisioners download into. A template may
// still write {{user `imgflow_downloads_dir`}}/NAME; it names the
// build's working directory, so the download is the same as to "NAME".
// Like FilesDirVar, its value does not enter the build identity.
const DownloadsDirVar = "imgflow_downloads_dir"

// Download is a file provisioner with direction "download": the remote
// Source on the build VM, fetched to Name, a path relative to packer's
// working directory (or, with ViaVar, to DownloadsDirVar's directory).
type Download struct {
	Source string
	Name   string
	// ViaVar: the destination was written {{user `imgflow_downloads_dir`}}/Name.
	ViaVar bool
	// Only and Except are the provisioner's build filters (packer -only
	// semantics per provisioner); empty means every build.
	Only, Except []string
}

// downloadVarRE matches a destination inside the downloads directory as
// a JSON template writes it ({{user `imgflow_downloads_dir`}}/NAME) and as
// an HCL2 template does ("${var.imgflow_downloads_dir}/NAME", shown with
// its quotes by packer.Template).
var downloadVarRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile("^(?:\\{\\{\\s*user\\s+`" + DownloadsDirVar + "`\\s*\\}\\}|\"\\$\\{var\\." + DownloadsDirVar + "\\})/([^\"]*)\"?$")
})

// Downloads lists the template's download provisioners. A destination
// relative to packer's working directory is accepted as packer accepts
// it ("image-bom.json", "logs/", "./x"): packer_build runs every build in
// a directory of its own and reads the files back from there. One that
// packer_build cannot read back (an absolute path, a path leaving the
// working directory, an expression) is an error saying what to write.
func Downloads(tpl *packer.Template) ([]Download, error) {
	var out []Download
	var errs []string
	for i, p := range tpl.Provisioners {
		if p["type"] != "file" || p["direction"] != "download" {
			continue
		}
		src, _ := p["source"].(string)
		src = strings.Trim(src, `"`)
		dest, _ := p["destination"].(string)
		name, viaVar, why := downloadName(src, dest)
		if why != "" {
			errs = append(errs, fmt.Sprintf("provisioner %d (file, download %s) writes to %s: %s", i+1, src, dest, why))
			continue
		}
		out = append(out, Download{Source: src, Name: name, ViaVar: viaVar, Only: stringList(p["only"]), Except: stringList(p["except"])})
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return out, nil
}

// downloadName is the path, relative to the build's working directory,
// that a download of src to dest writes, as packer 1.9.5's file
// provisioner does: a destination ending in "/" is a directory the file
// keeps its name in. why says what is wrong with dest, or is "".
func downloadName(src, dest string) (name string, viaVar bool, why string) {
	base := path.Base(src)
	if base == "/" || base == "." || strings.HasSuffix(src, "/") {
		base = "NAME"
	}
	instead := fmt.Sprintf("write a destination relative to packer's working directory, e.g. %q: packer_build gives every build a directory of its own and returns the file in downloads[%q], so nothing of yours is overwritten", base, base)
	if m := downloadVarRE().FindStringSubmatch(dest); m != nil {
		dest, viaVar = m[1], true
	}
	switch {
	case strings.HasSuffix(src, "/"):
		return "", false, "a directory: download its files one by one (packer_build returns files)"
	case dest == "" && !viaVar:
		return "", false, "no destination: " + instead
	case strings.Contains(dest, "{{") || strings.Contains(dest, "${") || strings.HasPrefix(dest, `"`):
		return "", false, "packer_build reads downloads back by a name it knows before the build: " + instead
	case path.IsAbs(dest) || filepath.IsAbs(dest) || filepath.VolumeName(dest) != "":
		return "", false, "an absolute path, outside the build's own directory: " + instead
	}
	name = path.Clean(dest)
	if dest == "" || strings.HasSuffix(dest, "/") {
		name = path.Join(name, path.Base(src))
	}
	if name == "." || name == ".." || strings.HasPrefix(name, "../") {
		return "", false, "outside the build's working directory: " + instead
	}
	return name, viaVar, ""
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
		dir := p.workDir
		if d.ViaVar {
			dir = p.values[DownloadsDirVar]
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
