package builtins

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"

	"go.starlark.net/starlark"

	"github.com/imgflow/imgflow/internal/redact"
)

// SecretEnvPrefix starts the environment variable a secret() reads:
// secret("ua_token") reads IMGFLOW_SECRET_UA_TOKEN.
const SecretEnvPrefix = "IMGFLOW_SECRET_"

// Secret is the value secret(name) returns: a value a workflow can pass on
// (to packer_build's vars, to command's env) but never see. It prints as
// <secret NAME>, cannot be concatenated, hashed or converted to JSON, so
// its value reaches no log, step record, journal, plan or error.
type Secret struct {
	name  string
	value string
	// unset marks the stand-in a plan gets for a secret whose variable is
	// not set (Run.Planning).
	unset bool
}

var _ starlark.Value = (*Secret)(nil)

// Name is the secret's name as the workflow wrote it.
func (s *Secret) Name() string { return s.name }

// String is what printing a secret shows: never the value.
func (s *Secret) String() string {
	if s.unset {
		return "<secret " + s.name + ": unset>"
	}
	return "<secret " + s.name + ">"
}

// Type is "secret".
func (s *Secret) Type() string { return "secret" }

// Freeze does nothing: a secret is immutable.
func (s *Secret) Freeze() {}

// Truth is true: a secret always has a value (secret() fails otherwise).
func (s *Secret) Truth() starlark.Bool { return starlark.True }

// Hash fails: a secret cannot be a dict key or set member, where it could
// be compared against guesses.
func (s *Secret) Hash() (uint32, error) {
	return 0, fmt.Errorf("unhashable type: secret")
}

// reveal returns the value, for the builtins that hand it to a process.
func (s *Secret) reveal() string { return s.value }

var secretNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`) })

// SecretEnvVar is the environment variable that holds the secret name.
func SecretEnvVar(name string) string { return SecretEnvPrefix + strings.ToUpper(name) }

func registerSecret(r *Registry) {
	r.add("Secrets",
		&Spec{
			Name: "secret", Positional: 1, Effect: Pure,
			Params: []Param{
				{Name: "name", Kind: KindString, Doc: "letters, digits and `_`; the value comes from the environment variable `IMGFLOW_SECRET_<NAME>` (upper-cased)"},
			},
			Returns: "a secret value, printed as `<secret NAME>`",
			Doc: "Reads a secret from the environment variable `IMGFLOW_SECRET_<NAME>`: the only way a workflow reads the environment. " +
				"The value can be passed to packer_build(vars=…) (it goes to packer in a 0600 var-file, never argv), packer_build(env=…) and command(env=…), " +
				"and is redacted from their output. It prints as `<secret NAME>` in logs, step records, journals and plans, and cannot be " +
				"concatenated, compared or used as a dict key. A missing or empty variable is an error in a run; a plan goes on with the secret " +
				"shown as `<secret NAME: unset>`, so pull requests, where CI gives no secrets, can plan.",
			Example: `build = packer_build("//artifacts/packer/sig-marketplace.json", vars = {"ua_token": secret("ua_token")})`,
			Impl:    secretImpl,
		},
	)
}

func secretImpl(c *Call) (starlark.Value, error) {
	name := c.String("name", "")
	if !secretNameRE().MatchString(name) {
		return nil, fmt.Errorf("secret: invalid name %q: use letters, digits and '_', starting with a letter (e.g. \"ua_token\")", name)
	}
	env := SecretEnvVar(name)
	value, ok := os.LookupEnv(env)
	if (!ok || value == "") && c.Run.Planning {
		return &Secret{name: name, unset: true}, nil
	}
	if !ok || value == "" {
		return nil, fmt.Errorf("secret %q is not set: export %s=<value> before running imgflow (the workflow reads secrets only from IMGFLOW_SECRET_* variables)", name, env)
	}
	return &Secret{name: name, value: value}, nil
}

// secretValues lists the values of the secrets found in v (a dict, list or
// secret), longest first, for redaction.
func secretValues(vs ...starlark.Value) []string {
	seen := map[string]bool{}
	var walk func(v starlark.Value)
	walk = func(v starlark.Value) {
		switch v := v.(type) {
		case *Secret:
			seen[v.value] = true
		case *starlark.Dict:
			for _, kv := range v.Items() {
				walk(kv[1])
			}
		case *starlark.List:
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i))
			}
		case starlark.Tuple:
			for _, e := range v {
				walk(e)
			}
		}
	}
	for _, v := range vs {
		walk(v)
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// redactValues replaces each secret value in s, then what redact's
// policy removes from any text (SAS signatures, URL passwords): a tool's
// output may print a signed URL it was never given as a secret().
func redactValues(s string, secrets []string) string {
	for _, v := range secrets {
		if v != "" {
			s = strings.ReplaceAll(s, v, "<secret>")
		}
	}
	return redact.SAS(s)
}
