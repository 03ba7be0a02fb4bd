package packer

import (
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// FilesDirVar is the template variable through which imgflow's
// packer_build passes the directory of staged uploads. Its value (a
// temporary path) does not enter the build identity; the files it holds do.
const FilesDirVar = "imgflow_files_dir"

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
// its quotes by Template).
var downloadVarRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile("^(?:\\{\\{\\s*user\\s+`" + DownloadsDirVar + "`\\s*\\}\\}|\"\\$\\{var\\." + DownloadsDirVar + "\\})/([^\"]*)\"?$")
})

// Downloads lists the template's download provisioners. A destination
// relative to packer's working directory is accepted as packer accepts
// it ("image-bom.json", "logs/", "./x"): packer_build runs every build in
// a directory of its own and reads the files back from there. One that
// packer_build cannot read back (an absolute path, a path leaving the
// working directory, an expression) is an error saying what to write.
func Downloads(tpl *Template) ([]Download, error) {
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
		out = append(out, Download{Source: src, Name: name, ViaVar: viaVar, Only: stringsOf(p["only"]), Except: stringsOf(p["except"])})
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

// AppliesTo reports whether the provisioner runs for build.
func (d Download) AppliesTo(build string) bool {
	if len(d.Only) > 0 && !slices.Contains(d.Only, build) {
		return false
	}
	return !slices.Contains(d.Except, build)
}
