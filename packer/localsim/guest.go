package localsim

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/imgflow/imgflow/cloud/guest"
	"github.com/imgflow/imgflow/packer"
)

// What a simulated build puts on its OS disk. No provisioner runs, but
// the effect of imgflow's own provisioning is known and is recorded in
// the disk (guest.GuestContent at guest.GuestContentOffset), so that
// test_vm's checks can be evaluated against the image on the local target:
//
//   - a `file` provisioner uploading from the staged-files directory
//     (imgflow_files_dir): the staged files at its destination, with their
//     modes and content;
//   - a `shell` provisioner running artifacts/scripts/install-files.sh:
//     each src:dest:mode of its IMGFLOW_INSTALLS copied to dest with mode;
//   - a `shell` provisioner running artifacts/scripts/install-bcc.sh: the
//     package bcc at its BCC_VERSION (without the tag's "v");
//   - an `ansible` provisioner running kubernetes-sigs/image-builder's node
//     playbook: what its kubernetes and containerd roles install
//     (imagebuilder.go).
//
// Other provisioners (package installs, deprovisioning) leave no record.

// guestContent is the record of the build's OS disk.
func (p *prepared) guestContent() (*guest.GuestContent, error) {
	g := &guest.GuestContent{Files: map[string]guest.GuestFile{}, Packages: map[string]string{}}
	for _, prov := range p.tpl.Provisioners {
		prov = unquoted(prov)
		typ, _ := prov["type"].(string)
		switch typ {
		case "file":
			if err := p.simulateUpload(g, prov); err != nil {
				return nil, err
			}
		case "ansible":
			if vars := p.imageBuilderVars(prov); vars != nil {
				record := p.recordImageBuilderNode
				if windowsPlaybook(prov) {
					record = recordImageBuilderWindows
				}
				if err := record(g, vars); err != nil {
					return nil, err
				}
			}
		case "shell":
			script, _ := prov["script"].(string)
			env := fmt.Sprint(prov["environment_vars"])
			switch path.Base(script) {
			case "install-files.sh":
				if err := installFiles(g, p.envValue(env, "IMGFLOW_INSTALLS")); err != nil {
					return nil, err
				}
			case "install-bcc.sh":
				if v := p.envValue(env, "BCC_VERSION"); v != "" {
					g.Packages["bcc"] = strings.TrimPrefix(v, "v")
				}
			}
		}
	}
	for _, f := range g.Files {
		g.UsedBytes += f.Size
	}
	return g, nil
}

// unquoted strips the quotes an HCL2 template's attributes that refer to
// variables keep (their source text, "\"${var.x}/home/packer/\"").
func unquoted(prov map[string]any) map[string]any {
	out := make(map[string]any, len(prov))
	for k, v := range prov {
		if s, ok := v.(string); ok && len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
			v = s[1 : len(s)-1]
		}
		out[k] = v
	}
	return out
}

// varRef matches a reference to a template variable, in a JSON template
// ({{user `name`}}) or an HCL2 one (${var.name}).
var varRef = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile("^(?:\\{\\{\\s*user\\s+`(\\w+)`\\s*\\}\\}|\\$\\{var\\.(\\w+)\\})")
})

// refValue is the variable value an expression starting with a reference
// stands for, and the rest of the expression.
func (p *prepared) refValue(expr string) (value, rest string, ok bool) {
	m := varRef().FindStringSubmatch(expr)
	if m == nil {
		return "", expr, false
	}
	return p.values[m[1]+m[2]], expr[len(m[0]):], true
}

// envValue is the value a provisioner's environment_vars give name, when
// it is a variable reference ("" otherwise).
func (p *prepared) envValue(env, name string) string {
	i := strings.Index(env, name+"=")
	if i < 0 {
		return ""
	}
	v, _, _ := p.refValue(env[i+len(name)+1:])
	return v
}

// simulateUpload records what a file provisioner uploads from the staged
// files: source <files dir>/<sub>/ to destination.
func (p *prepared) simulateUpload(g *guest.GuestContent, prov map[string]any) error {
	if dir, _ := prov["direction"].(string); dir == "download" {
		return nil
	}
	src, _ := prov["source"].(string)
	dest, _ := prov["destination"].(string)
	staged, sub, ok := p.refValue(src)
	m := varRef().FindStringSubmatch(src)
	if !ok || m[1]+m[2] != packer.FilesDirVar || staged == "" || dest == "" || p.staged == nil {
		return nil
	}
	if _, err := os.Lstat(filepath.Join(staged, filepath.FromSlash(sub))); err != nil {
		return err // as packer would fail to upload it
	}
	// The staged tree was read once (readStaged): its files under sub.
	root := "/" + strings.Trim(filepath.ToSlash(sub), "/")
	for vmPath, f := range p.staged.files {
		var rel string
		switch {
		case root == "/":
			rel = vmPath[1:]
		case vmPath == root: // the source is one file
		case strings.HasPrefix(vmPath, root+"/"):
			rel = vmPath[len(root)+1:]
		default:
			continue
		}
		target := path.Join(dest, rel)
		if rel == "" && !strings.HasSuffix(src, "/") && !strings.HasSuffix(dest, "/") {
			target = dest
		}
		g.Files[target] = guest.GuestFile{Mode: f.Mode, Size: f.Size, Text: f.text}
	}
	return nil
}

// installFiles applies install-files.sh's install list to g.
func installFiles(g *guest.GuestContent, list string) error {
	for _, entry := range strings.Fields(list) {
		parts := strings.Split(entry, ":")
		if len(parts) != 3 {
			return fmt.Errorf("install-files: bad entry %s (want src:dest:mode)", entry)
		}
		src, ok := g.Files[parts[0]]
		if !ok {
			return fmt.Errorf("install-files: %s was not uploaded", parts[0])
		}
		mode := parts[2]
		if len(mode) == 3 {
			mode = "0" + mode
		}
		src.Mode = mode
		g.Files[parts[1]] = src
	}
	return nil
}

// guestRecord is guestContent encoded for the disk.
func (p *prepared) guestRecord() ([]byte, error) {
	g, err := p.guestContent()
	if err != nil {
		return nil, err
	}
	return guest.EncodeGuestContent(g)
}

// guestFile is a file of data with mode as the guest record keeps it.
func guestFile(data []byte, mode string) guest.GuestFile {
	f := guest.GuestFile{Mode: mode, Size: int64(len(data))}
	if len(data) <= guest.MaxGuestText {
		f.Text = string(data)
	}
	return f
}
