package packer

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// AzurePluginSource is the azure plugin's source address in HCL2
// required_plugins blocks.
const AzurePluginSource = "github.com/hashicorp/azure"

// bundledAzurePluginMajor is the major version of the azure plugin packer
// 1.9.5 bundles (v1.4.0): templates that require a later major version
// need `packer init`, which downloads it.
const bundledAzurePluginMajor = 1

var constraintRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*(>=|>|=|~>|!=|<=|<)?\s*v?(\d+)`) })

// NeedsAzurePlugin2 reports whether the template declares, in its
// required_plugins, the azure plugin with a version constraint of 2 or
// more (">= 2.0.0", "~> 2.1"): packer 1.9.5 bundles azure plugin 1.4.0, so
// validating it offline is impossible. A legacy JSON template declares no
// plugins.
func (t *Template) NeedsAzurePlugin2() bool {
	return needsAzurePlugin2(t.RequiredPlugins)
}

// needsAzurePlugin2 reports whether required_plugins ask for azure plugin
// 2.x or later.
func needsAzurePlugin2(plugins map[string]Plugin) bool {
	for _, p := range plugins {
		if p.Source == AzurePluginSource && constraintNeedsMajor2(p.Version) {
			return true
		}
	}
	return false
}

// constraintNeedsMajor2 reports whether a version constraint such as
// ">= 2.0.0, < 3" excludes every 1.x release: some part of it asks for
// major version 2 or more at least.
func constraintNeedsMajor2(constraint string) bool {
	for _, part := range strings.Split(constraint, ",") {
		m := constraintRE().FindStringSubmatch(part)
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
