package builtins_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.starlark.net/starlark"

	"github.com/imgflow/imgflow/builtins"
)

func TestWrongTypeNamesParameterAndTypes(t *testing.T) {
	s := newSnippetSandbox(t)
	msg := s.mustFail(`gallery(1, resource_group = "rg", location = "westeurope")`, nil)
	assert.Contains(t, msg, "gallery: for parameter name: got int, want string")
	assert.Contains(t, msg, "main.star:1:")
	assert.Empty(t, s.cloud.Snapshot().ResourceGroups)
}

func TestWrongTypeOfListElement(t *testing.T) {
	s := newSnippetSandbox(t)
	msg := s.mustFail(`regions(exclude = ["westeurope", 3])`, nil)
	assert.Contains(t, msg, "regions: for parameter exclude: got list holding int at [1], want list of strings")
}

// A secret() in command()'s argv is refused with where it goes instead:
// argv shows in process lists, step lines and plans.
func TestSecretInArgvSaysSecretsGoInEnv(t *testing.T) {
	t.Setenv("IMGFLOW_SECRET_UA_TOKEN", secretValue)
	s := newSnippetSandbox(t)
	msg := s.mustFail(`command(["curl", "-H", secret("ua_token")])`, nil)
	assert.Contains(t, msg, "command: for parameter argv: got list holding <secret ua_token> at [2]")
	assert.Contains(t, msg, `pass it in env = {"NAME": secret("ua_token")}`)
	assert.Contains(t, msg, "main.star:1:")
	assert.NotContains(t, msg, secretValue)
}

func TestTooManyPositionalArgumentsAskForKeywords(t *testing.T) {
	s := newSnippetSandbox(t)
	msg := s.mustFail(`gallery("flatcar", "rg")`, nil)
	assert.Contains(t, msg, "gallery: got 2 positional arguments, want at most 1 (name); pass the others by keyword")

	msg = s.mustFail(`regions(["westeurope"])`, nil)
	assert.Contains(t, msg, "regions: got 1 positional argument(s), want keywords only, e.g. regions(exclude=…)")
}

// A builtin without parameters called with a positional argument must fail
// with an error, not crash the interpreter (positionalError indexes
// s.Params[0]).
func TestPositionalArgumentToParameterlessBuiltin(t *testing.T) {
	s := newSnippetSandbox(t)
	c := newBuiltinCaller(t, s)
	var err error
	require.NotPanics(t, func() {
		_, err = c.call("run_info", []starlark.Value{starlark.MakeInt(1)})
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "run_info")
}

func TestMissingRequiredArgument(t *testing.T) {
	s := newSnippetSandbox(t)
	msg := s.mustFail(`gallery("flatcar")`, nil)
	assert.Contains(t, msg, "gallery: missing argument for resource_group")

	// None for a required parameter counts as missing.
	msg = s.mustFail(`resource_group("rg", location = None)`, nil)
	assert.Contains(t, msg, "resource_group: missing argument for location")
	assert.Empty(t, s.cloud.Snapshot().ResourceGroups)
}

func TestUnknownKeyword(t *testing.T) {
	s := newSnippetSandbox(t)
	msg := s.mustFail(`resource_group("rg", location = "westeurope", colour = "red")`, nil)
	assert.Contains(t, msg, "resource_group: unexpected keyword argument")
	assert.Contains(t, msg, "colour")
	assert.Empty(t, s.cloud.Snapshot().ResourceGroups)
}

func TestRemovedParameterSaysWhatToDoInstead(t *testing.T) {
	s := newSnippetSandbox(t)
	msg := s.mustFail(`
rg = resource_group("rg", location = "westeurope")
g = gallery("gal", resource_group = rg)
share_community(g, prefix = "flatcar", publisher_uri = "https://x.org", publisher_email = "a@x.org", eula = "https://x.org/eula")
`, nil)
	assert.Contains(t, msg, "main.star:4:")
	assert.Contains(t, msg, "share_community: parameter prefix was removed")
	assert.Contains(t, msg, "gallery(…, community = community_profile(")
	assert.Empty(t, s.cloud.Snapshot().ResourceGroups)
}

func TestStructOfTheWrongBuiltinNamesBoth(t *testing.T) {
	s := newSnippetSandbox(t)
	msg := s.mustFail(`
rg = resource_group("rg", location = "westeurope")
image_definition(rg, name = "d", publisher = "p", offer = "o", sku = "s")
`, nil)
	assert.Contains(t, msg, "image_definition: for parameter gallery: got resource_group(…), want gallery (the value gallery() returns)")
	assert.Contains(t, msg, "main.star:3:")

	// A plain struct() is not a gallery either.
	msg = s.mustFail(`share_community(struct(name = "g"))`, nil)
	assert.Contains(t, msg, "share_community: for parameter gallery: got struct, want gallery")
}

func TestOneOfKindsListsAlternatives(t *testing.T) {
	s := newSnippetSandbox(t)
	msg := s.mustFail(`gallery("g", resource_group = 42, location = "westeurope")`, nil)
	assert.Contains(t, msg, "gallery: for parameter resource_group: got int, want resource_group or string")
}

func TestDurationKind(t *testing.T) {
	s := newSnippetSandbox(t)
	c := newBuiltinCaller(t, s)
	version := builtins.MakeStruct("image_version", map[string]any{"name": "1.0.0"})
	_, err := c.call("replicate", []starlark.Value{version},
		kw("regions", starlark.NewList(nil)), kw("timeout", starlark.String("six hours")))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `replicate: for parameter timeout: got string, want duration ("30m", "6h")`)

	// The wrong builtin's struct is refused before the duration is looked at.
	_, err = c.call("replicate", []starlark.Value{builtins.MakeStruct("image_definition", nil)},
		kw("regions", starlark.NewList(nil)), kw("timeout", starlark.String("1h")))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "replicate: for parameter version: got image_definition(…), want image_version")
}

func TestBuiltinOutsideARun(t *testing.T) {
	s := newSnippetSandbox(t)
	fn := s.reg.Predeclared()["regions"]
	_, err := starlark.Call(&starlark.Thread{}, fn, nil, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "regions() can only be called while imgflow runs a workflow")
}

func TestCallsAreRecordedWithPosition(t *testing.T) {
	s := newSnippetSandbox(t)
	res := s.mustRun(`
rg = resource_group("rg", location = "westeurope", tags = {"team": "images"})
names = regions()
`, nil)
	rg := stepsOf(res, "resource_group")
	require.Len(t, rg, 1)
	assert.Equal(t, "main.star:2:20", rg[0].Pos)
	assert.Equal(t, "rg", rg[0].Args["name"])
	assert.Equal(t, "westeurope", rg[0].Args["location"])
	assert.Equal(t, map[string]any{"team": "images"}, rg[0].Args["tags"])
	assert.Equal(t, "created", string(rg[0].Outcome))
	assert.NoError(t, rg[0].Err)
	result, ok := rg[0].Result.(map[string]any)
	require.True(t, ok, "result %T", rg[0].Result)
	assert.Equal(t, "rg", result["name"])

	require.Len(t, stepsOf(res, "regions"), 1)
	assert.Empty(t, stepsOf(res, "regions")[0].Outcome, "reads have no outcome")
	tags := s.cloud.Snapshot().ResourceGroups["rg"].Tags
	assert.Equal(t, "images", tags["team"])
	assert.Equal(t, "imgflow", tags["createdBy"])
}
