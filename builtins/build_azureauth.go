package builtins

import (
	"fmt"
	"slices"

	"github.com/imgflow/imgflow/packer"
)

// warnAzureAuth prints, as a warning at the caller's line, when the first
// azure-arm build packer_build selects authenticates in a way packer
// cannot renew (the Azure CLI, a fixed client_jwt): in CI such a login
// ends with the job's federated token, long before a build of hours does.
// imgflow cannot hand packer a refreshing login there: packer-plugin-azure
// takes one only through the template's own settings. Printed once per
// packer_build, in a plan and a run's first pass (see warnUnset).
func (c *Call) warnAzureAuth(tpl *packer.Template, tplRel string, values, env map[string]string, only, secrets []string) {
	if c.Run.Reporter == nil {
		return
	}
	r, err := tpl.RenderBuilds(values, env)
	if err != nil {
		return // the build's own checks report it
	}
	for _, name := range r.Names {
		if r.Builders[name].Type != "azure-arm" || (len(only) > 0 && !slices.Contains(only, name)) {
			continue
		}
		if a := packer.AzureAuthOf(r.Configs[name]); !a.Refreshes {
			c.Run.Reporter.Print(c.Pos(), redactValues(fmt.Sprintf("warning: packer_build %s: build %s: %s", tplRel, name, a.Limit), secrets))
			return
		}
	}
}
