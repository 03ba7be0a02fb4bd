package builtins

import (
	"fmt"
	"sort"
	"strings"

	"go.starlark.net/starlark"

	"github.com/imgflow/imgflow/internal/redact"
	"github.com/imgflow/imgflow/packer"
)

// Settings of an azure-arm build that become part of a resource's name or
// id, or its tags: a secret rendered into one would be stored by Azure and
// shown by every listing, step line, plan, journal and state file.
var packerNameKeys = []string{
	"managed_image_name", "managed_image_resource_group_name", "build_resource_group_name",
	"temp_resource_group_name", "temp_compute_name", "capture_name_prefix", "capture_container_name",
	"resource_group_name", "storage_account", "image_name", "image_version", "gallery_name",
	"resource_group", "shared_image_gallery_destination", "azure_tags",
}

// checkNoSecretInNames refuses a build whose rendered configuration puts
// a secret()'s value, a SAS signature or a URL's password into a resource
// name or tag, before anything is created (the validation pass runs it
// too).
func checkNoSecretInNames(tpl *packer.Template, values, env map[string]string, vs ...starlark.Value) error {
	named := secretsByName(vs...)
	builds, err := tpl.Render(values, env)
	if err != nil {
		return nil // the checks before and packer's own report it
	}
	var problems []string
	for _, build := range sortedKeys(builds) {
		cfg, _ := builds[build].(map[string]any)
		for _, key := range packerNameKeys {
			v, ok := cfg[key]
			if !ok {
				continue
			}
			for _, name := range secretsIn(fmt.Sprint(v), named) {
				problems = append(problems, fmt.Sprintf("%s.%s is made from secret(%q)", build, key, name))
			}
			if redact.HasCredential(fmt.Sprint(v)) {
				problems = append(problems, fmt.Sprintf("%s.%s carries a SAS signature or a URL password (%s)", build, key, redact.SAS(fmt.Sprint(v))))
			}
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%s: a secret cannot become part of a resource name or tag, which Azure stores and every listing, plan, journal and state shows; "+
		"pass a plain value for it, and secrets only where the template uses them as credentials", strings.Join(problems, "; "))
}

// secretsByName maps the secret() values found in vs to their names.
func secretsByName(vs ...starlark.Value) map[string]string {
	out := map[string]string{}
	var walk func(v starlark.Value)
	walk = func(v starlark.Value) {
		switch v := v.(type) {
		case *Secret:
			out[v.value] = v.name
		case *starlark.Dict:
			for _, kv := range v.Items() {
				walk(kv[1])
			}
		case *starlark.List:
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i))
			}
		}
	}
	for _, v := range vs {
		walk(v)
	}
	return out
}

// secretsIn lists the names of the secrets whose values s contains.
func secretsIn(s string, named map[string]string) []string {
	var names []string
	for value, name := range named {
		if len(value) >= 4 && strings.Contains(s, value) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}
