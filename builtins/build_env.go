package builtins

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"go.starlark.net/starlark"

	"github.com/imgflow/imgflow/packer"
)

// envNameRE is a portable environment variable name (POSIX's, which is
// also what packer's {{env}} can be given).
var envNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// packerEnv converts packer_build's env dict: names are environment
// variable names, values strings or secrets (revealed, and named in the
// second result so they are redacted).
func packerEnv(v starlark.Value) (map[string]string, []string, error) {
	return stringOrSecretDict(v, "env", func(name string) error {
		if !envNameRE().MatchString(name) {
			return errors.New(`is not an environment variable name (letters, digits and _, not starting with a digit, e.g. "PACKER_BUILD_LOCATION")`)
		}
		return nil
	}, "environment variables are strings", "environment variables are strings (or secret() values)")
}

// envSummary is the env part of packer_build's step summary: every name,
// with its value or <secret>; "" without env.
func envSummary(env map[string]string, sensitive []string) string {
	if len(env) == 0 {
		return ""
	}
	names := make([]string, 0, len(env))
	for k := range env {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, k := range names {
		v := env[k]
		for _, s := range sensitive {
			if s == k {
				v = "<secret>"
			}
		}
		parts[i] = k + "=" + v
	}
	return "; env " + strings.Join(parts, ", ")
}

// warnUnset prints, as warnings at the caller's line, the variables the
// template's builders, provisioners and post-processors use that nobody
// sets: packer renders them as "" without a word, which is what optional
// settings rely on and what hides a misspelt name. A run's validation pass
// has no Reporter, so a run prints them once, as a plan does.
func (c *Call) warnUnset(tpl *packer.Template, tplRel string, values map[string]string, secrets []string) {
	if c.Run.Reporter == nil {
		return
	}
	for _, p := range tpl.UnsetVariables(values) {
		c.Run.Reporter.Print(c.Pos(), redactValues(fmt.Sprintf("warning: packer_build %s: %s", tplRel, p), secrets))
	}
}
