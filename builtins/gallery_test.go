package builtins_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.starlark.net/starlark"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/cloud/local"
)

// versionPrelude makes image version 1.0.0 of gal/def in westeurope from an
// uploaded VHD.
const versionPrelude = `
rg = resource_group("rg", location = "westeurope")
sa = storage_account("imgflowtest", resource_group = rg)
up = vhd_upload("disk.vhd", dest = blob(sa, container = "vhds", name = "disk.vhd"))
g = gallery("gal", resource_group = rg)
d = image_definition(g, name = "def", publisher = "p", offer = "o", sku = "s")
v = image_version(d, version = "1.0.0", source = vhd(up, storage_account = sa))
`

// newReplicationSandbox is a sandbox whose apply pass counts version
// updates, with version 1.0.0 created.
func newReplicationSandbox(t *testing.T) (*snippetSandbox, *countingProvider) {
	t.Helper()
	s := newSnippetSandbox(t)
	counter := &countingProvider{Provider: s.cloud}
	s.apply = counter
	s.fixedVHD("disk.vhd", 1, "flatcar")
	res := s.mustRun(versionPrelude, nil)
	require.Equal(t, cloud.Created, lastOutcome(t, res, "image_version"))
	require.Zero(t, counter.updateCount())
	return s, counter
}

func versionState(t *testing.T, p *local.Provider) *cloud.ImageVersion {
	t.Helper()
	v := p.Snapshot().ResourceGroups["rg"].Galleries["gal"].Definitions["def"].Versions["1.0.0"]
	require.NotNil(t, v)
	return v
}

func targetNames(v *cloud.ImageVersion) []string { return v.RegionNames() }

const replicateOutputs = `
output("regions", [s.name for s in r.regions])
output("states", [s.state for s in r.regions])
output("version_regions", r.version.regions)
`

func TestReplicateGrowsTheRegionListInOneUpdate(t *testing.T) {
	s, counter := newReplicationSandbox(t)
	res := s.mustRun(versionPrelude+`r = replicate(v, regions = ["eastus", "northeurope"])`+replicateOutputs, nil)

	assert.Equal(t, cloud.Updated, lastOutcome(t, res, "replicate"))
	assert.Equal(t, 1, counter.updateCount(), "one update of the target list")
	require.Len(t, counter.updates, 1)
	assert.Equal(t, []string{"westeurope", "eastus", "northeurope"}, counter.updates[0].RegionNames())

	out := outputsOf(res)
	assert.Equal(t, []any{"westeurope", "eastus", "northeurope"}, out["version_regions"])
	assert.ElementsMatch(t, []any{"westeurope", "eastus", "northeurope"}, out["regions"])
	assert.Equal(t, []any{"Completed", "Completed", "Completed"}, out["states"])
	assert.Equal(t, []string{"westeurope", "eastus", "northeurope"}, targetNames(versionState(t, s.cloud)))

	step := stepsOf(res, "replicate")[0]
	assert.Contains(t, step.Summary, "to 3 regions, 1 replica each")
	assert.Equal(t, "main.star:8:14", step.Pos)
}

// replicate's line says how many replicas each region gets.
func TestReplicateSaysTheReplicaCounts(t *testing.T) {
	s, _ := newReplicationSandbox(t)
	res := s.mustRun(versionPrelude+`r = replicate(v, regions = {"eastus": 3, "northeurope": 1})`+replicateOutputs, nil)
	assert.Contains(t, stepsOf(res, "replicate")[0].Summary, "to 3 regions (replicas: westeurope 1, eastus 3, northeurope 1)")

	s, _ = newReplicationSandbox(t)
	res = s.mustRun(versionPrelude+`r = replicate(v, regions = ["eastus"], replica_count = 2)`+replicateOutputs, nil)
	assert.Contains(t, stepsOf(res, "replicate")[0].Summary, "to 2 regions, 2 replicas each")
}

// A workflow that makes a version with image_version() (default regions)
// and then replicates it must change nothing when rerun. Today the rerun's
// image_version() shrinks the target list back to the gallery region (an
// update) and replicate() grows it again (another update): in Azure that
// drops and re-replicates every region on every run.
func TestImageVersionThenReplicateRerunChangesNothing(t *testing.T) {
	s, counter := newReplicationSandbox(t)
	src := versionPrelude + `r = replicate(v, regions = ["eastus", "northeurope"])` + replicateOutputs
	s.mustRun(src, nil)
	require.Equal(t, 1, counter.updateCount())
	res := s.mustRun(src, nil)
	assert.Equal(t, cloud.Exists, lastOutcome(t, res, "replicate"))
	assert.Equal(t, 1, counter.updateCount(), "no second update")
}

// replicateDirect calls replicate() on version 1.0.0 from Go, so that no
// image_version() call runs before it.
func replicateDirect(t *testing.T, s *snippetSandbox, kwargs ...starlark.Tuple) (*builtins.Step, starlark.Value, error) {
	t.Helper()
	c := newBuiltinCaller(t, s)
	gal := builtins.MakeStruct("gallery", map[string]any{"name": "gal", "resource_group": "rg"})
	def := builtins.MakeStruct("image_definition", map[string]any{"name": "def", "resource_group": "rg", "gallery": gal})
	version := builtins.MakeStruct("image_version", map[string]any{"name": "1.0.0", "definition": def})
	v, err := c.call("replicate", []starlark.Value{version}, kwargs...)
	steps := c.run.Steps()
	require.Len(t, steps, 1)
	return steps[0], v, err
}

func stringList(names ...string) starlark.Value {
	items := make([]starlark.Value, len(names))
	for i, n := range names {
		items[i] = starlark.String(n)
	}
	return starlark.NewList(items)
}

func TestReplicateKeepsTheSourceRegion(t *testing.T) {
	s, counter := newReplicationSandbox(t)
	step, _, err := replicateDirect(t, s, kw("regions", stringList("eastus", "northeurope")))
	require.NoError(t, err)
	assert.Equal(t, cloud.Updated, step.Outcome)

	// The source region listed in the middle stays first, once.
	step, v, err := replicateDirect(t, s, kw("regions", stringList("eastus", "WestEurope")))
	require.NoError(t, err)
	assert.Equal(t, cloud.Updated, step.Outcome)
	assert.Equal(t, []string{"westeurope", "eastus"}, targetNames(versionState(t, s.cloud)))
	result, err := builtins.ToGo(v)
	require.NoError(t, err)
	assert.Equal(t, []any{"westeurope", "eastus"}, result.(map[string]any)["version"].(map[string]any)["regions"])

	// An empty list shrinks to the source region, which is never dropped.
	step, _, err = replicateDirect(t, s, kw("regions", stringList()))
	require.NoError(t, err)
	assert.Equal(t, cloud.Updated, step.Outcome)
	assert.Equal(t, []string{"westeurope"}, targetNames(versionState(t, s.cloud)))

	// The same list again is no update.
	step, _, err = replicateDirect(t, s, kw("regions", stringList("westeurope")))
	require.NoError(t, err)
	assert.Equal(t, cloud.Exists, step.Outcome)
	assert.Equal(t, 3, counter.updateCount())
}

func TestReplicateRefusesDuplicates(t *testing.T) {
	s, counter := newReplicationSandbox(t)
	step, _, err := replicateDirect(t, s, kw("regions", stringList("eastus", "northeurope", "EastUS")))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "replicate def/1.0.0")
	assert.Contains(t, err.Error(), `"eastus"`, "EastUS is eastus, as ARM reads it")
	assert.Contains(t, err.Error(), "is listed twice")
	assert.Error(t, step.Err)
	assert.Zero(t, counter.updateCount())
	assert.Equal(t, []string{"westeurope"}, targetNames(versionState(t, s.cloud)))

	// Through a workflow: the error points at the workflow line.
	msg := s.mustFail(versionPrelude+`replicate(v, regions = ["eastus", "eastus"])`, nil)
	assert.Contains(t, msg, "is listed twice")
	assert.Contains(t, msg, "main.star:8:")
	assert.Zero(t, counter.updateCount())
}

func TestReplicateRefusesRegionsNotInTheSubscription(t *testing.T) {
	s, counter := newReplicationSandbox(t)
	_, _, err := replicateDirect(t, s, kw("regions", stringList("eastus", "northeurop")))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `invalid target region "northeurop": is not a location of this subscription`)
	assert.Contains(t, err.Error(), "did you mean northeurope?")

	_, _, err = replicateDirect(t, s, kw("regions", stringList("europe")))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"europe"`)
	assert.Contains(t, err.Error(), "is a geography, not a region")

	_, _, err = replicateDirect(t, s, kw("regions", stringList("west-europe")))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"west-europe"`)
	assert.Contains(t, err.Error(), "westeurope")

	assert.Zero(t, counter.updateCount())
	assert.Equal(t, []string{"westeurope"}, targetNames(versionState(t, s.cloud)))
}

func TestReplicateReplicaCount(t *testing.T) {
	s, counter := newReplicationSandbox(t)
	_, _, err := replicateDirect(t, s, kw("regions", stringList("eastus")), kw("replica_count", starlark.MakeInt(3)))
	require.NoError(t, err)
	require.Equal(t, 1, counter.updateCount())
	for _, r := range versionState(t, s.cloud).TargetRegions {
		assert.Equal(t, 3, r.ReplicaCount, r.Name)
	}
	_, _, err = replicateDirect(t, s, kw("regions", stringList("eastus")), kw("replica_count", starlark.MakeInt(101)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "replica count")
	assert.Equal(t, 1, counter.updateCount())
}

func physicalRegions() []string {
	var out []string
	for _, l := range azrules.DefaultLocations() {
		if l.RegionType == cloud.RegionTypePhysical {
			out = append(out, l.Name)
		}
	}
	sort.Strings(out)
	return out
}

func anyStrings(v any) []string {
	list, _ := v.([]any)
	out := make([]string, len(list))
	for i, e := range list {
		out[i], _ = e.(string)
	}
	return out
}

func TestRegionsAreSortedPhysicalRegions(t *testing.T) {
	s := newSnippetSandbox(t)
	res := s.mustRun(`output("all", regions())`, nil)
	all := anyStrings(outputsOf(res)["all"])
	assert.True(t, sort.StringsAreSorted(all), "sorted: %v", all)
	assert.Equal(t, physicalRegions(), all)
	for _, geography := range []string{"europe", "global", "unitedstates", "asiapacific"} {
		assert.NotContains(t, all, geography)
	}
	assert.Contains(t, all, "westeurope")
	assert.Empty(t, stepsOf(res, "regions")[0].Outcome)
}

func TestRegionsExclude(t *testing.T) {
	s := newSnippetSandbox(t)
	res := s.mustRun(`
output("rest", regions(exclude = ["westeurope", "eastus", "polandcentral", "brazilus"]))
`, nil)
	rest := anyStrings(outputsOf(res)["rest"])
	assert.Len(t, rest, len(physicalRegions())-3, "unknown names in exclude are ignored")
	for _, gone := range []string{"westeurope", "eastus", "polandcentral"} {
		assert.NotContains(t, rest, gone)
	}
	assert.Contains(t, rest, "eastus2")
	assert.True(t, sort.StringsAreSorted(rest))

	// ARM's spellings name the region; others are refused with its name.
	res = s.mustRun(`output("rest", regions(exclude = ["West Europe", "EastUS"]))`, nil)
	assert.NotContains(t, anyStrings(outputsOf(res)["rest"]), "westeurope")
	assert.NotContains(t, anyStrings(outputsOf(res)["rest"]), "eastus")
	msg := s.mustFail(`regions(exclude = ["west_europe"])`, nil)
	assert.Contains(t, msg, "regions: exclude:")
	assert.Contains(t, msg, `so here "westeurope"`)
}

// communityPrelude is versionPrelude with the gallery created as a
// community gallery; %s is the profile's prefix.
const communityPrelude = `
rg = resource_group("rg", location = "westeurope")
sa = storage_account("imgflowtest", resource_group = rg)
up = vhd_upload("disk.vhd", dest = blob(sa, container = "vhds", name = "disk.vhd"))
profile = community_profile(prefix = "%s", publisher_uri = "https://example.org", publisher_email = "images@example.org", eula = "https://example.org/eula")
g = gallery("gal", resource_group = rg, community = profile)
d = image_definition(g, name = "def", publisher = "p", offer = "o", sku = "s")
v = image_version(d, version = "1.0.0", source = vhd(up, storage_account = sa))
`

func TestGalleryFlowIsIdempotent(t *testing.T) {
	s := newSnippetSandbox(t)
	s.fixedVHD("disk.vhd", 1, "flatcar")
	src := fmt.Sprintf(communityPrelude, "imgflow") + `
shared = share_community(g)
output("public_name", shared.public_name)
output("unshared_before", g.public_name == None)
output("profile", g.community)
`
	first := s.mustRun(src, nil)
	for _, b := range []string{"resource_group", "storage_account", "vhd_upload", "gallery", "image_definition", "image_version", "share_community"} {
		assert.Equal(t, cloud.Created, lastOutcome(t, first, b), b)
	}
	public, _ := outputsOf(first)["public_name"].(string)
	assert.Regexp(t, `^imgflow-[0-9a-f-]{36}$`, public)
	assert.Equal(t, true, outputsOf(first)["unshared_before"])
	assert.Equal(t, map[string]any{"prefix": "imgflow", "publisher_uri": "https://example.org", "publisher_email": "images@example.org", "eula": "https://example.org/eula"},
		outputsOf(first)["profile"])

	second := s.mustRun(src, nil)
	for _, step := range second.Steps {
		if step.Effect == builtins.Changes {
			assert.Equal(t, cloud.Exists, step.Outcome, "%s on the rerun", step.Builtin)
		}
	}
	assert.Equal(t, public, outputsOf(second)["public_name"])

	// Another prefix is refused by gallery(), before anything changes.
	msg := s.mustFail(fmt.Sprintf(communityPrelude, "otherprefix"), nil)
	assert.Contains(t, msg, `public name prefix "imgflow", which Azure cannot change`)
	assert.Contains(t, msg, "keep prefix = \"imgflow\"")
	assert.Contains(t, msg, "main.star:6:")
}

func TestCommunityGalleryPublisherDetailsAreUpdated(t *testing.T) {
	s := newSnippetSandbox(t)
	const src = `
rg = resource_group("rg", location = "westeurope")
g = gallery("gal", resource_group = rg, community = community_profile(prefix = "imgflow", publisher_uri = "https://example.org", publisher_email = "%s", eula = "https://example.org/eula"))
output("contact", g.community.publisher_email)
`
	s.mustRun(fmt.Sprintf(src, "images@example.org"), nil)
	res := s.mustRun(fmt.Sprintf(src, "security@example.org"), nil)
	assert.Equal(t, cloud.Updated, lastOutcome(t, res, "gallery"))
	assert.Equal(t, "security@example.org", outputsOf(res)["contact"])
}

func TestShareCommunityRefusesAPrivateGallery(t *testing.T) {
	s := newSnippetSandbox(t)
	// Declared in the workflow without community=: refused by the
	// validation pass, so not even the resource group is created.
	res := s.exec(`
rg = resource_group("rg", location = "westeurope")
g = gallery("gal", resource_group = rg)
share_community(g)
`, nil)
	require.Error(t, res.Err)
	assert.Equal(t, "validate", res.Pass, "refused by the validation pass")
	for _, want := range []string{
		"main.star:4:", `gallery "gal" is a private gallery`, "Azure cannot convert a private gallery to a community gallery",
		`gallery("gal", …, community = community_profile(`, "use a new name, or delete it",
	} {
		assert.Contains(t, res.Err.Error(), want)
	}
	_, err := s.cloud.GetResourceGroup(context.Background(), "rg")
	assert.True(t, cloud.IsNotFound(err), "nothing was created: %v", err)

	// Existing, private: gallery(…, community = …) refuses to convert it.
	s.mustRun(`gallery("gal", resource_group = resource_group("rg", location = "westeurope"))`, nil)
	msg := s.mustFail(`
rg = resource_group("rg", location = "westeurope")
g = gallery("gal", resource_group = rg, community = community_profile(prefix = "imgflow", publisher_uri = "https://example.org", publisher_email = "images@example.org", eula = "https://example.org/eula"))
share_community(g)
`, nil)
	assert.Contains(t, msg, "main.star:3:")
	assert.Contains(t, msg, `gallery "gal" already exists as a private gallery, and Azure cannot convert a private gallery to a community gallery`)
}

func TestCommunityProfileIsCheckedWhereItIsWritten(t *testing.T) {
	s := newSnippetSandbox(t)
	msg := s.mustFail(`community_profile(prefix = "flatcar-capi", publisher_uri = "www.flatcar.org", publisher_email = "Flatcar <infra@flatcar-linux.org>", eula = "https://example.org/eula?sig=SECRET")`, nil)
	for _, want := range []string{"main.star:1:", `invalid community prefix "flatcar-capi"`, "is not an absolute URL", "bare e-mail address", "has a query string"} {
		assert.Contains(t, msg, want)
	}
	// The message never repeats the query (the traceback shows the source line).
	message, _, _ := strings.Cut(msg, "\n    1 |")
	assert.NotContains(t, message, "SECRET")
}

func TestImageDefinitionImmutableFields(t *testing.T) {
	s := newSnippetSandbox(t)
	const base = `
rg = resource_group("rg", location = "westeurope")
g = gallery("gal", resource_group = rg)
image_definition(g, name = "def", publisher = "p", offer = "o", sku = "s"%s)
`
	s.mustRun(fmt.Sprintf(base, ""), nil)
	msg := s.mustFail(fmt.Sprintf(base, `, architecture = "Arm64"`), nil)
	assert.Contains(t, msg, "already exists with different immutable properties")
	assert.Contains(t, msg, "architecture x64 → Arm64")

	res := s.mustRun(fmt.Sprintf(base, `, description = "new words"`), nil)
	assert.Equal(t, cloud.Updated, lastOutcome(t, res, "image_definition"))
}

func TestReplicateSetsAReplicaCountPerRegion(t *testing.T) {
	s, counter := newReplicationSandbox(t)
	res := s.mustRun(versionPrelude+`r = replicate(v, regions = {"eastus": 2, "northeurope": 3}, replica_count = 1)`+replicateOutputs, nil)
	assert.Equal(t, cloud.Updated, lastOutcome(t, res, "replicate"))
	require.Len(t, counter.updates, 1)
	counts := map[string]int{}
	for _, r := range versionState(t, s.cloud).TargetRegions {
		counts[r.Name] = r.ReplicaCount
	}
	assert.Equal(t, map[string]int{"westeurope": 1, "eastus": 2, "northeurope": 3}, counts, "the source region keeps replica_count; the others their own")

	// The same counts again change nothing.
	again := s.mustRun(versionPrelude+`r = replicate(v, regions = {"eastus": 2, "northeurope": 3}, replica_count = 1)`, nil)
	assert.Equal(t, cloud.Exists, lastOutcome(t, again, "replicate"))
}

func TestReplicateRefusesABadRegionCount(t *testing.T) {
	s, _ := newReplicationSandbox(t)
	for src, want := range map[string]string{
		`replicate(v, regions = {"eastus": 0})`:   `regions["eastus"] = 0: a replica count is 1 to 100`,
		`replicate(v, regions = {"eastus": 101})`: `regions["eastus"]: invalid replica count "101"`,
		`replicate(v, regions = {"eastus": "2"})`: "list of region names or dict of region name to replica count",
	} {
		assert.Contains(t, s.mustFail(versionPrelude+src, nil), want, src)
	}
}

// ARM accepts a location in any case and with its display name's spaces;
// imgflow normalises it once, so the step records (the journal's keys),
// the cloud and a rerun spelled otherwise all see westeurope.
func TestLocationSpellingsARMAcceptsAreNormalised(t *testing.T) {
	s := newSnippetSandbox(t)
	const flow = `
rg = resource_group("rg", location = %q)
g = gallery("gal", resource_group = rg, location = %q)
d = image_definition(g, name = "def", publisher = "p", offer = "o", sku = "s")
output("where", [rg.location, g.location, regions(exclude = [%q])[:0]])
`
	first := s.mustRun(fmt.Sprintf(flow, "westeurope", "westeurope", "northeurope"), nil)
	keys := map[string]string{}
	for _, step := range first.Steps {
		if step.Effect == builtins.Changes {
			keys[step.Builtin] = builtins.StepKey(step.Builtin, step.Args)
		}
	}
	second := s.mustRun(fmt.Sprintf(flow, "West Europe", "WestEurope", "North Europe"), nil)
	for _, step := range second.Steps {
		if step.Effect == builtins.Changes {
			assert.Equal(t, cloud.Exists, step.Outcome, "%s on the rerun", step.Builtin)
			assert.Equal(t, keys[step.Builtin], builtins.StepKey(step.Builtin, step.Args), "%s's journal key", step.Builtin)
		}
	}
	assert.Equal(t, "westeurope", stepsOf(second, "resource_group")[0].Args["location"])
	assert.Equal(t, []any{"westeurope", "westeurope", []any{}}, outputsOf(second)["where"])
	assert.Len(t, s.cloud.Snapshot().ResourceGroups, 1)

	// What ARM refuses is still refused, with the name it would take.
	msg := s.mustFail(`resource_group("rg", location = "west-europe")`, nil)
	assert.Contains(t, msg, `"westeurope"`)
}
