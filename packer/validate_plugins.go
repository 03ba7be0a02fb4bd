package packer

import (
	"os"
	"regexp"
	"strconv"
	"strings"
)

// AzurePluginSource is the azure plugin's source address in HCL2
// required_plugins blocks.
const AzurePluginSource = "github.com/hashicorp/azure"

// bundledAzurePluginMajor is the major version of the azure plugin packer
// 1.9.5 bundles (v1.4.0): templates that require a later major version
// need `packer init`, which downloads it.
const bundledAzurePluginMajor = 1

var (
	versionAttrRE = regexp.MustCompile(`"?version"?\s*[=:]\s*"([^"]*)"`)
	constraintRE  = regexp.MustCompile(`^\s*(>=|>|=|~>|!=|<=|<)?\s*v?(\d+)`)
)

// templateNeedsAzurePlugin2 reads the template at path and reports
// whether it needs an azure plugin newer than the bundled one.
func templateNeedsAzurePlugin2(path string) (bool, error) {
	if !strings.HasSuffix(path, ".pkr.hcl") && !strings.HasSuffix(path, ".pkr.json") {
		return false, nil // a legacy JSON template cannot declare plugins
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	return NeedsAzurePlugin2(src), nil
}

// NeedsAzurePlugin2 reports whether an HCL2 template (HCL or JSON syntax)
// declares, in a required_plugins block, the azure plugin with a version
// constraint of 2 or more (">= 2.0.0", "~> 2.1"): packer 1.9.5 bundles
// azure plugin 1.4.0, so validating it offline is impossible.
//
// It reads the template's text, not its syntax tree: the block holding the
// azure source is the one whose version counts.
// TODO(lead): use the HCL2 parser's Template.RequiredPlugins once it lands.
func NeedsAzurePlugin2(src []byte) bool {
	text := string(src)
	at := strings.Index(text, "required_plugins")
	if at < 0 {
		return false
	}
	rest := text[at:]
	for {
		i := strings.Index(rest, AzurePluginSource)
		if i < 0 {
			return false
		}
		block := enclosingBlock(rest, i)
		if m := versionAttrRE.FindStringSubmatch(block); m != nil && constraintNeedsMajor2(m[1]) {
			return true
		}
		rest = rest[i+len(AzurePluginSource):]
	}
}

// enclosingBlock returns the text of the innermost {…} around text[i].
func enclosingBlock(text string, i int) string {
	start := strings.LastIndex(text[:i], "{")
	if start < 0 {
		start = 0
	}
	end := strings.Index(text[i:], "}")
	if end < 0 {
		return text[start:]
	}
	return text[start : i+end+1]
}

// constraintNeedsMajor2 reports whether a version constraint such as
// ">= 2.0.0, < 3" excludes every 1.x release: some part of it asks for
// major version 2 or more at least.
func constraintNeedsMajor2(constraint string) bool {
	for _, part := range strings.Split(constraint, ",") {
		m := constraintRE.FindStringSubmatch(part)
		if m == nil {
			continue
		}
		major, err := strconv.Atoi(m[2])
		if err != nil {
			continue
		}
		switch m[1] {
		case "", "=", ">=", "~>", ">":
			if major > bundledAzurePluginMajor {
				return true
			}
		}
	}
	return false
}
