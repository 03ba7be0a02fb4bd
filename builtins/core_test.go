package builtins_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const typedParams = `
count = param("count", default = 1, doc = "how many")
enabled = param("enabled", default = False)
targets = param("targets", default = ["westeurope"])
name = param("name", default = "flatcar")
output("count", count)
output("count_type", type(count))
output("enabled", enabled)
output("enabled_type", type(enabled))
output("targets", targets)
output("targets_type", type(targets))
output("name", name)
`

func TestParamConvertsVarsToTheDefaultsType(t *testing.T) {
	s := newSnippetSandbox(t)
	res := s.mustRun(typedParams, map[string]string{
		"count": "42", "enabled": "true", "targets": "eastus, westus2,,northeurope", "name": "lts",
	})
	out := outputsOf(res)
	assert.Equal(t, int64(42), out["count"])
	assert.Equal(t, "int", out["count_type"])
	assert.Equal(t, true, out["enabled"])
	assert.Equal(t, "bool", out["enabled_type"])
	assert.Equal(t, []any{"eastus", "westus2", "northeurope"}, out["targets"])
	assert.Equal(t, "list", out["targets_type"])
	assert.Equal(t, "lts", out["name"])

	params := res.Params
	require.Len(t, params, 4)
	assert.Equal(t, "count", params[0].Name)
	assert.Equal(t, "how many", params[0].Doc)
	assert.Equal(t, "main.star:2:14", params[0].Pos)
}

func TestParamDefaultsWhenNotSet(t *testing.T) {
	s := newSnippetSandbox(t)
	out := outputsOf(s.mustRun(typedParams, nil))
	assert.Equal(t, int64(1), out["count"])
	assert.Equal(t, false, out["enabled"])
	assert.Equal(t, []any{"westeurope"}, out["targets"])
	assert.Equal(t, "flatcar", out["name"])
}

func TestParamRefusesAValueNotOfTheDefaultsType(t *testing.T) {
	s := newSnippetSandbox(t)
	msg := s.mustFail(typedParams, map[string]string{"count": "many"})
	assert.Contains(t, msg, `param "count"`)
	assert.Contains(t, msg, "is not an integer")
	assert.Contains(t, msg, "main.star:2:")

	msg = s.mustFail(typedParams, map[string]string{"enabled": "yes please"})
	assert.Contains(t, msg, `param "enabled"`)
	assert.Contains(t, msg, "is not a bool")
}

// The value in the message is quoted once: `value "many"`, not the
// Starlark repr quoted again (`value "\"many\""`).
func TestParamTypeErrorQuotesTheValueOnce(t *testing.T) {
	s := newSnippetSandbox(t)
	msg := s.mustFail(typedParams, map[string]string{"count": "many"})
	assert.Contains(t, msg, `value "many" is not an integer`)
	msg = s.mustFail(typedParams, map[string]string{"enabled": "maybe"})
	assert.Contains(t, msg, `value "maybe" is not a bool`)
}

func TestParamChoices(t *testing.T) {
	s := newSnippetSandbox(t)
	const src = `channel = param("channel", default = "stable", choices = ["stable", "beta"])
output("channel", channel)
`
	assert.Equal(t, "beta", outputsOf(s.mustRun(src, map[string]string{"channel": "beta"}))["channel"])
	msg := s.mustFail(src, map[string]string{"channel": "nightly"})
	assert.Contains(t, msg, `param "channel": "nightly" is not one of the choices stable, beta: pass --var channel=<one of them>`)
}

func TestListParamChoicesAreEachElements(t *testing.T) {
	s := newSnippetSandbox(t)
	const src = `features = param("features", default = [], choices = ["fips", "gpu", "cvm"])
output("features", features)
`
	assert.Equal(t, []any{"fips", "gpu"}, outputsOf(s.mustRun(src, map[string]string{"features": "fips,gpu"}))["features"])
	assert.Equal(t, []any{}, outputsOf(s.mustRun(src, nil))["features"])
	msg := s.mustFail(src, map[string]string{"features": "fips,gpv"})
	assert.Contains(t, msg, `param "features": "gpv" is not one of the choices fips, gpu, cvm: did you mean gpu?`)
}

func TestRequiredParamListsTheDeclaredParams(t *testing.T) {
	s := newSnippetSandbox(t)
	msg := s.mustFail(`
channel = param("channel", default = "stable", doc = "release channel")
version = param("version", doc = "the release", choices = ["1.0.0", "2.0.0"])
arch = param("arch", default = "amd64")
`, nil)
	assert.Contains(t, msg, `param "version" is required: pass --var version=<value> (the release); choices: 1.0.0, 2.0.0`)
	assert.Contains(t, msg, "declared params:")
	assert.Contains(t, msg, `channel (default "stable"): release channel`)
	assert.Contains(t, msg, "version (required): the release")
	assert.Contains(t, msg, "arch (declared further down)")
	assert.Contains(t, msg, "main.star:3:")
}

func TestUnknownVarListsTheDeclaredParams(t *testing.T) {
	s := newSnippetSandbox(t)
	msg := s.mustFail(`channel = param("channel", default = "stable")`, map[string]string{"chanel": "beta"})
	assert.Contains(t, msg, "unknown --var chanel: the workflow declares no such param")
	assert.Contains(t, msg, `channel (default "stable")`)
}

func TestParamDeclaredTwice(t *testing.T) {
	s := newSnippetSandbox(t)
	msg := s.mustFail(`
a = param("channel", default = "stable")
b = param("channel", default = "beta")
`, nil)
	assert.Contains(t, msg, `param "channel" is already declared at main.star:2:10`)
	assert.Contains(t, msg, "main.star:3:")
}

func TestParamInvalidName(t *testing.T) {
	s := newSnippetSandbox(t)
	msg := s.mustFail(`param("Flatcar-Version", default = "1")`, nil)
	assert.Contains(t, msg, `param: invalid name "Flatcar-Version"`)
}

func TestParamRefusedWhileALibraryLoads(t *testing.T) {
	s := newSnippetSandbox(t)
	s.write("lib/params.star", `channel = param("channel", default = "stable")
`)
	msg := s.mustFail(`load("//lib/params.star", "channel")
output("channel", channel)
`, nil)
	assert.Contains(t, msg, `param "channel": params are declared by the workflow, not while loading lib/params.star`)
}

func TestParamDeclaredInAFunctionTheWorkflowCalls(t *testing.T) {
	s := newSnippetSandbox(t)
	s.write("lib/params.star", `def channel():
    return param("channel", default = "stable")
`)
	res := s.mustRun(`load("//lib/params.star", "channel")
output("channel", channel())
`, map[string]string{"channel": "beta"})
	assert.Equal(t, "beta", outputsOf(res)["channel"])
}

func TestLibraryRefusesCloudChangesWhileLoading(t *testing.T) {
	s := newSnippetSandbox(t)
	s.write("lib/bad.star", `RG = resource_group("from-a-library", location = "westeurope")
`)
	res := s.exec(`load("//lib/bad.star", "RG")
`, nil)
	require.Error(t, res.Err)
	msg := res.Err.Error()
	assert.Contains(t, msg, "resource_group() cannot run while lib/bad.star is being loaded")
	assert.Contains(t, msg, "libraries must not change the cloud")
	assert.Contains(t, msg, "lib/bad.star:1:")
	assert.Empty(t, s.cloud.Snapshot().ResourceGroups)
}

func TestLibraryMayReadWhileLoading(t *testing.T) {
	s := newSnippetSandbox(t)
	s.write("lib/regions.star", `ALL = regions(exclude = ["westeurope"])
`)
	res := s.mustRun(`load("//lib/regions.star", "ALL")
output("n", len(ALL))
`, nil)
	assert.Positive(t, outputsOf(res)["n"])
}

func TestOutput(t *testing.T) {
	s := newSnippetSandbox(t)
	res := s.mustRun(`
rg = resource_group("rg", location = "westeurope")
output("rg", rg)
output("list", [1, "two", None, True, 2.5])
output("dict", {"a": {"b": [1]}})
`, nil)
	out := outputsOf(res)
	rg, ok := out["rg"].(map[string]any)
	require.True(t, ok, "%T", out["rg"])
	assert.Equal(t, "rg", rg["name"])
	assert.Equal(t, "westeurope", rg["location"])
	assert.Equal(t, []any{int64(1), "two", nil, true, 2.5}, out["list"])
	assert.Equal(t, map[string]any{"a": map[string]any{"b": []any{int64(1)}}}, out["dict"])
	assert.Equal(t, []string{"rg", "list", "dict"}, []string{res.Outputs[0].Name, res.Outputs[1].Name, res.Outputs[2].Name})
	assert.Equal(t, "main.star:3:7", res.Outputs[0].Pos)
}

// output(name, None) is a valid output (JSON null), e.g. an optional
// community id; today None counts as a missing argument.
func TestOutputNone(t *testing.T) {
	s := newSnippetSandbox(t)
	res := s.exec(`output("community_id", None)`, nil)
	require.NoError(t, res.Err)
	require.Len(t, res.Outputs, 1)
	assert.Nil(t, res.Outputs[0].Value)
}

func TestOutputSetTwiceIsRefused(t *testing.T) {
	s := newSnippetSandbox(t)
	msg := s.mustFail(`
output("vhd_url", "a")
output("vhd_url", "b")
`, nil)
	assert.Contains(t, msg, `output "vhd_url" is already set at main.star:2:7`)
	assert.Contains(t, msg, "main.star:3:")
}

func TestOutputRefusesValuesThatAreNotJSON(t *testing.T) {
	s := newSnippetSandbox(t)
	msg := s.mustFail(`
def f():
    pass
output("fn", f)
`, nil)
	assert.Contains(t, msg, `output "fn": function values cannot be converted`)

	msg = s.mustFail(`output("nested", {"fn": len})`, nil)
	assert.Contains(t, msg, `output "nested"`)
	assert.Contains(t, msg, "cannot be converted")

	msg = s.mustFail(`output("big", 1 << 70)`, nil)
	assert.Contains(t, msg, "too large")

	msg = s.mustFail(`output("Bad-Name", 1)`, nil)
	assert.Contains(t, msg, `output: invalid name "Bad-Name"`)
}

func TestRunInfoIsFixedForTheRun(t *testing.T) {
	s := newSnippetSandbox(t)
	res := s.mustRun(`
a = run_info()
b = run_info()
output("same", a == b)
output("time", a.time)
output("timestamp", a.timestamp)
`, nil)
	out := outputsOf(res)
	assert.Equal(t, true, out["same"])
	assert.Equal(t, "2026-01-02T03:04:05Z", out["time"])
	assert.Equal(t, snippetTime.Unix(), out["timestamp"])
}

// TestReadTextDefault: default is returned for a missing file only, so a
// workflow can tell a missing checkout from a bad path.
func TestReadTextDefault(t *testing.T) {
	s := newSnippetSandbox(t)
	s.write("data/rule.conf", "y\n")
	res := s.execFile("flows/main.star", `
output("missing", read_text("//data/missing.txt", default = ""))
output("present", read_text("//data/rule.conf", default = ""))
`, nil, true)
	require.NoError(t, res.Err)
	out := outputsOf(res)
	assert.Equal(t, "", out["missing"])
	assert.Equal(t, "y\n", out["present"])

	msg := s.mustFail(`read_text("../outside.txt", default = "")`, nil)
	assert.Contains(t, msg, "outside the workspace", "default covers a missing file, not a path outside the workspace")
}

func TestReadJSONAndText(t *testing.T) {
	s := newSnippetSandbox(t)
	s.write("data/m.json", `{"modules": ["gpu", "fips"], "n": 2}`)
	s.write("data/rule.conf", "w /sys/kernel/mm/lru_gen/enabled - - - - y\n")
	const src = `
m = read_json("//data/m.json")
rel = read_json("../data/m.json")
output("modules", m["modules"])
output("same", m == rel)
output("rule", read_text("//data/rule.conf"))
`
	res := s.execFile("flows/main.star", src, nil, true)
	require.NoError(t, res.Err)
	out := outputsOf(res)
	assert.Equal(t, []any{"gpu", "fips"}, out["modules"])
	assert.Equal(t, true, out["same"])
	assert.Equal(t, "w /sys/kernel/mm/lru_gen/enabled - - - - y\n", out["rule"])

	msg := s.mustFail(`read_text("../outside.txt")`, nil)
	assert.Contains(t, msg, "outside the workspace")
	msg = s.mustFail(`read_text("//data/missing.txt")`, nil)
	assert.Contains(t, msg, "no such file")
	msg = s.mustFail(`read_text("/etc/hostname")`, nil)
	assert.Contains(t, msg, "is absolute")
}
