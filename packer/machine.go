package packer

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Line is one line of `packer -machine-readable` output:
// timestamp,target,type,data...
type Line struct {
	Timestamp time.Time
	// Target is the build name, or "" for ui and global lines.
	Target string
	Type   string
	// Data holds the remaining fields, unescaped.
	Data []string
}

// Unescape undoes packer's machine-readable escaping: packer writes a
// comma as %!(PACKER_COMMA), a newline as the two characters \n and a
// carriage return as \r. A literal backslash-n in the original text cannot
// be told apart and also becomes a newline.
func Unescape(s string) string {
	if strings.Contains(s, `\`) {
		s = strings.ReplaceAll(s, `\r`, "\r")
		s = strings.ReplaceAll(s, `\n`, "\n")
	}
	return strings.ReplaceAll(s, "%!(PACKER_COMMA)", ",")
}

// ParseLine parses one machine-readable line (without its trailing newline).
func ParseLine(s string) (Line, error) {
	s = strings.TrimRight(s, "\r\n")
	// Escaping guarantees that fields never contain a raw comma.
	fields := strings.Split(s, ",")
	if len(fields) < 3 {
		return Line{}, fmt.Errorf("not a machine-readable line (want timestamp,target,type,…): %q", s)
	}
	sec, err := strconv.ParseInt(fields[0], 10, 64)
	if err != nil {
		return Line{}, fmt.Errorf("not a machine-readable line (bad timestamp %q)", fields[0])
	}
	l := Line{Timestamp: time.Unix(sec, 0), Target: fields[1], Type: fields[2]}
	if fields[2] == "" {
		return Line{}, fmt.Errorf("not a machine-readable line (empty type): %q", s)
	}
	for _, f := range fields[3:] {
		l.Data = append(l.Data, Unescape(f))
	}
	return l, nil
}

// buildRGRE matches the line the azure-arm builder prints when it creates
// (or reuses) its build resource group: "==> NAME:  -> ResourceGroupName : 'rg'".
var buildRGRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^==> ([^:]+):\s+-> ResourceGroupName\s*:\s*'([^']*)'`)
})

// The azure-arm builder's temporary resource group, as packer-plugin-azure
// v1.4.0 (bundled with packer 1.9.5) says it: "Creating resource group
// ..." before the ResourceGroupName line ("Using existing resource group
// ..." for build_resource_group_name, which it never deletes), and on
// cleanup "Resource group has been deleted." or, with
// async_resourcegroup_delete, "Not waiting for Resource Group delete as
// requested by user. Resource Group Name is NAME".
var (
	creatingRGRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^==> ([^:]+): Creating resource group \.\.\.`) })
	deletedRGRE  = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?m)^==> ([^:]+): Resource group has been deleted\.`)
	})
	asyncDeleteRGE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?m)^==> ([^:]+):\s+Not waiting for Resource Group delete as requested by user\. Resource Group Name is (\S+)`)
	})
)

// collector consumes packer's stdout line by line as it streams, prints ui
// lines and gathers artifacts and errors. It is used by one goroutine at a
// time (exec's stdout copier, then the caller after Wait).
type collector struct {
	print  func(string) // prints one display line; nil discards
	redact *redactor
	// names maps packer's build targets to the template's build names
	// (see buildNames); targets not in it are kept as they are.
	names map[string]string

	builds     []*BuildArtifacts
	byName     map[string]*BuildArtifacts
	uiErrors   []string
	targetErrs []string
	version    string
	unparsed   []string // non machine-readable lines, last few kept
	// onTemporaryGroup is BuildRequest.OnTemporaryResourceGroup.
	onTemporaryGroup func(build, group string)
	// creatingGroup marks the builds that said "Creating resource group
	// ...": their next ResourceGroupName line names a group they create.
	creatingGroup map[string]bool
}

func newCollector(print func(string), red *redactor) *collector {
	return &collector{print: print, redact: red, byName: map[string]*BuildArtifacts{}}
}

// buildNames maps each target packer may print for a builder of tpl to
// the builder's build name. For a legacy JSON template packer 1.9.5 prints
// "TYPE.NAME" when the builder has a "name" and "TYPE" when it has none,
// while -only still takes NAME.
func buildNames(tpl *Template) map[string]string {
	if tpl == nil {
		return nil
	}
	names := map[string]string{}
	for _, b := range tpl.Builders {
		names[b.Name] = b.Name
		if !tpl.IsHCL2() { // HCL2 build names are TYPE.NAME already
			names[b.Type+"."+b.Name] = b.Name
			names[typePrefix+b.Type] = b.Type
		}
	}
	return names
}

// typePrefix marks a builder type in buildNames: a target "TYPE.NAME"
// whose NAME was rendered from a template ("sig-{{user `x`}}") is not in
// the map, but its TYPE is, and NAME is the rendered build name.
const typePrefix = "\x00type:"

func (c *collector) build(target string) *BuildArtifacts {
	name := target
	if n, ok := c.names[target]; ok {
		name = n
	} else if typ, rest, found := strings.Cut(target, "."); found && c.names[typePrefix+typ] != "" {
		name = rest
	}
	b := c.byName[name]
	if b == nil {
		b = &BuildArtifacts{Name: name}
		c.byName[name] = b
		c.builds = append(c.builds, b)
	}
	return b
}

func (c *collector) show(msg string) {
	if c.print == nil {
		return
	}
	msg = strings.Trim(msg, "\n")
	for _, line := range strings.Split(msg, "\n") {
		c.print(c.redact.redact(strings.TrimRight(line, "\r")))
	}
}

// handle consumes one raw stdout line.
func (c *collector) handle(raw string) {
	if strings.TrimSpace(raw) == "" {
		return
	}
	l, err := ParseLine(raw)
	if err != nil {
		// Not machine-readable (a crash, a plugin writing to stdout): show it
		// and keep the tail for the error message.
		red := c.redact.redact(raw)
		c.unparsed = append(c.unparsed, red)
		if len(c.unparsed) > 20 {
			c.unparsed = c.unparsed[1:]
		}
		if c.print != nil {
			c.print(red)
		}
		return
	}
	switch l.Type {
	case "ui":
		if len(l.Data) < 2 {
			return
		}
		msg := strings.Join(l.Data[1:], ",")
		if l.Data[0] == "error" {
			if e := strings.TrimSpace(withoutBundledPluginsWarning(msg)); e != "" {
				c.uiErrors = append(c.uiErrors, c.redact.redact(e))
			}
		}
		c.resourceGroupLine(msg)
		c.show(msg)
	case "error":
		msg := c.redact.redact(strings.TrimSpace(strings.Join(l.Data, ",")))
		if l.Target != "" {
			b := c.build(l.Target)
			b.Errors = append(b.Errors, msg)
			// As packer's ui shows it, so errorLines drops the ui duplicate.
			msg = l.Target + ": " + msg
		}
		c.targetErrs = append(c.targetErrs, msg)
	case "artifact-count":
		c.build(l.Target)
	case "artifact":
		c.artifact(l)
	case "version":
		if len(l.Data) > 0 {
			c.version = l.Data[0]
		}
	}
}

// resourceGroupLine follows an azure-arm build's resource group through
// its ui say lines: the group it builds in, whether it created it, and
// whether its cleanup deleted it.
func (c *collector) resourceGroupLine(msg string) {
	if m := creatingRGRE().FindStringSubmatch(msg); m != nil {
		if c.creatingGroup == nil {
			c.creatingGroup = map[string]bool{}
		}
		c.creatingGroup[c.build(m[1]).Name] = true
	}
	if m := buildRGRE().FindStringSubmatch(msg); m != nil {
		b := c.build(m[1])
		if b.BuildResourceGroup == "" {
			b.BuildResourceGroup = m[2]
		}
		if c.creatingGroup[b.Name] && b.TemporaryResourceGroup == "" {
			b.TemporaryResourceGroup = m[2]
			if c.onTemporaryGroup != nil {
				c.onTemporaryGroup(b.Name, m[2])
			}
		}
		delete(c.creatingGroup, b.Name)
	}
	if m := deletedRGRE().FindStringSubmatch(msg); m != nil {
		if b := c.build(m[1]); b.TemporaryResourceGroup != "" {
			b.TemporaryResourceGroupDeleted = true
		}
	}
	if m := asyncDeleteRGE().FindStringSubmatch(msg); m != nil {
		if b := c.build(m[1]); b.TemporaryResourceGroup == m[2] {
			b.TemporaryResourceGroupDeleted = true
		}
	}
}

// artifact handles "artifact,INDEX,KEY,VALUE..." lines.
func (c *collector) artifact(l Line) {
	if len(l.Data) < 2 {
		return
	}
	idx, err := strconv.Atoi(l.Data[0])
	if err != nil || idx < 0 {
		return
	}
	b := c.build(l.Target)
	for len(b.Artifacts) <= idx {
		b.Artifacts = append(b.Artifacts, Artifact{Index: len(b.Artifacts)})
	}
	a := &b.Artifacts[idx]
	val := ""
	if len(l.Data) > 2 {
		val = strings.Join(l.Data[2:], ",")
	}
	switch l.Data[1] {
	case "builder-id":
		a.BuilderID = val
	case "id":
		a.ID = c.redact.redact(val)
	case "string":
		// Parse before redacting secrets: the parser redacts SAS itself and
		// must see the real field layout.
		if a.BuilderID == AzureARMBuilderID {
			if az, err := ParseAzureARMArtifact(val); err == nil {
				redactAzure(az, c.redact)
				a.Azure = az
			}
		}
		a.String = c.redact.redact(val)
	case "file":
		// "file,N,PATH"
		if len(l.Data) > 3 {
			a.Files = append(a.Files, c.redact.redact(strings.Join(l.Data[3:], ",")))
		}
	}
}

// bundledPluginsWarning starts the warning packer 1.9.5 prints for every
// legacy JSON template that uses a plugin it bundles (azure-arm): as a ui
// say line, or, when packer then fails, at the head of the ui error line.
const bundledPluginsWarning = "Warning: Bundled plugins used"

// withoutBundledPluginsWarning returns a ui error message without that
// warning: the error that follows it, or "" when there is none.
func withoutBundledPluginsWarning(msg string) string {
	if !strings.HasPrefix(strings.TrimSpace(msg), bundledPluginsWarning) {
		return msg
	}
	if i := strings.Index(msg, "\nError:"); i >= 0 {
		return msg[i+1:]
	}
	return ""
}

// errorLines returns packer's error lines (ui errors, then per-build error
// lines) without the duplicates packer prints in both forms.
func (c *collector) errorLines() []string {
	seen := map[string]bool{}
	var out []string
	for _, list := range [][]string{c.uiErrors, c.targetErrs} {
		for _, e := range list {
			e = strings.TrimSpace(e)
			key := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(e, "--> "), "==> "))
			if e == "" || seen[key] {
				continue
			}
			seen[key] = true
			out = append(out, e)
		}
	}
	return out
}
