package builtins

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

func checkWith(env starlark.Value) *starlarkstruct.Struct {
	fields := starlark.StringDict{"name": starlark.String("cis"), "script": starlark.String("true")}
	if env != nil {
		fields["secret_env"] = env
	}
	return starlarkstruct.FromStringDict(starlarkstruct.Default, fields)
}

// TestCheckSecretEnv: a check's secret_env holds variable names to URLs
// (recorded with their query redacted) or secret()s, revealed for the run
// command's protected parameters; anything else, a plain token included,
// is refused naming the check.
func TestCheckSecretEnv(t *testing.T) {
	env, err := checkSecretEnv(checkWith(nil), "cis")
	require.NoError(t, err)
	assert.Nil(t, env, "no secret_env, no protected parameters")
	env, err = checkSecretEnv(checkWith(starlark.None), "cis")
	require.NoError(t, err)
	assert.Nil(t, env)

	d := starlark.NewDict(2)
	require.NoError(t, d.SetKey(starlark.String("IMGFLOW_CIS_ASSESSOR"), starlark.String("https://a.blob.core.windows.net/c/x.tgz?sig=s3cret")))
	require.NoError(t, d.SetKey(starlark.String("TOKEN"), &Secret{name: "token", value: "t0ken"}))
	env, err = checkSecretEnv(checkWith(d), "cis")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"IMGFLOW_CIS_ASSESSOR": "https://a.blob.core.windows.net/c/x.tgz?sig=s3cret", "TOKEN": "t0ken"}, env,
		"strings as they are, secrets revealed")

	for name, bad := range map[string]struct {
		v    starlark.Value
		want string
	}{
		"not a dict":    {starlark.String("URL=x"), "test_vm: check cis: secret_env is a string: want a dict"},
		"a bad name":    {dictOf(t, "bad-name", starlark.String("x")), `test_vm: check cis: secret_env key "bad-name" is not a variable name`},
		"not a string":  {dictOf(t, "N", starlark.MakeInt(1)), `test_vm: check cis: secret_env["N"] is a int: want a string or secret()`},
		"a plain token": {dictOf(t, "TOKEN", starlark.String("t0ken")), `test_vm: check cis: secret_env["TOKEN"] is a plain string, which plans and the journal record: pass a URL (its query is redacted) or a secret()`},
	} {
		_, err := checkSecretEnv(checkWith(bad.v), "cis")
		assert.ErrorContains(t, err, bad.want, name)
	}
}

func dictOf(t *testing.T, k string, v starlark.Value) *starlark.Dict {
	d := starlark.NewDict(1)
	require.NoError(t, d.SetKey(starlark.String(k), v))
	return d
}
