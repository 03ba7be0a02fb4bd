package workflows

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/cloud/local"
	"github.com/imgflow/imgflow/cloud/overlay"
	"github.com/imgflow/imgflow/interp"
	"github.com/imgflow/imgflow/interp/startest"
)

// publishingInfo are the outputs of every workflow that produces a VHD
// (AgentBaker's vhd-publishing-info.json; t.PUBLISHING_INFO in
// helpers_test.star): set, non-empty, whenever vhd_url is.
var publishingInfo = []string{"vhd_url", "os_name", "sku_name", "offer_name", "hyperv_generation", "image_architecture", "image_version", "captured_sig_resource_id"}

// TestEveryWorkflowOnTheLocalTarget runs each workflow of the workspace as
// `imgflow run workflows/<name>.star` does, with the vars of its plan
// (testdata/plans/<name>.vars.json: none for most, an image-builder
// checkout for the CAPI workflows), on a fresh
// local state directory, and checks what it left: the outputs its test
// file's EXPECTED_OUTPUTS names, what they point at, no managed disk or
// open disk access, no temporary resource (lib/temporary.star deleted
// them). It then runs it again on that state: with the same run facts
// (a resume, or a rerun in the same second) nothing changes at all; with
// new ones (a later `imgflow run`) it succeeds and everything that existed
// is still there, unchanged.
func TestEveryWorkflowOnTheLocalTarget(t *testing.T) {
	for _, name := range workflowFiles(t) {
		t.Run(name, func(t *testing.T) {
			ws := openWorkspace(t)
			expected := expectedOutputs(t, ws, name)
			p, err := local.Open(t.TempDir(), local.Options{Now: func() time.Time { return runTime }, Rand: rand.New(rand.NewSource(1))})
			require.NoError(t, err)
			t.Cleanup(func() { p.Close() })
			run := func(id string, at time.Time) *interp.Result {
				return interp.Run(context.Background(), "//workflows/"+name, interp.Config{
					Workspace: ws, Registry: builtins.NewRegistry(), Info: builtins.RunInfo{ID: id, Time: at}, Programs: &compiled,
					Vars: planVars(t, strings.TrimSuffix(name, ".star")),
				}, interp.Target{Apply: p, Validate: overlay.New(p)})
			}

			first := run("first", runTime)
			require.NoError(t, first.Err)
			outputs := outputMap(first)
			for _, o := range expected {
				assert.Contains(t, outputs, o, "EXPECTED_OUTPUTS of %s", startest.TestFileOf("workflows/"+name))
			}
			state := snapshotOf(t, p)
			checkProducts(t, state, outputs)
			checkNoTemporaries(t, state)

			// Again, with the same run facts (run id and time, as a resume
			// has them): nothing changes.
			second := run("first", runTime)
			require.NoError(t, second.Err)
			assert.Equal(t, outputs, outputMap(second))
			assert.Equal(t, mustJSON(t, state), mustJSON(t, snapshotOf(t, p)), "a rerun with the same run facts changed the state")

			// A later run: a new build where names come from the run's
			// time; everything that existed stays as it was.
			third := run("third", runTime.Add(time.Hour))
			require.NoError(t, third.Err)
			after := snapshotOf(t, p)
			assertContains(t, "state", state, after)
			checkProducts(t, after, outputMap(third))
			checkNoTemporaries(t, after)
		})
	}
}

// checkProducts checks that what the outputs name exists: the VHD blob,
// the captured version, the community version, the CAPZ images.
func checkProducts(t *testing.T, state map[string]any, outputs map[string]any) {
	t.Helper()
	if url, ok := outputs["vhd_url"].(string); ok {
		b := findBlob(state, url)
		if assert.NotNil(t, b, "the VHD %s is not in the state", url) {
			assert.Equal(t, "PageBlob", b["type"])
			size, _ := b["size"].(float64)
			assert.Equal(t, float64(30<<30+512), size, "%s: a fixed VHD of the 30 GB OS disk", url)
		}
		for _, k := range publishingInfo {
			if k != "captured_sig_resource_id" {
				assert.NotEmpty(t, outputs[k], "publishing info %s", k)
			}
		}
	}
	if id, _ := outputs["captured_sig_resource_id"].(string); id != "" {
		assert.NotNil(t, findID(state, id), "the captured version %s is not in the state", id)
	}
	if id, _ := outputs["community_image_id"].(string); id != "" {
		parts := strings.Split(id, "/") // /CommunityGalleries/<public>/Images/<def>/Versions/<v>
		require.Len(t, parts, 7)
		v := findVersion(state, "flatcar", parts[4], parts[6])
		if assert.NotNil(t, v, "%s is not in the state", id) {
			assert.Equal(t, false, v["exclude_from_latest"])
		}
	}
	if refs, ok := outputs["capz_images"].([]any); ok {
		assert.NotEmpty(t, refs)
		for _, r := range refs {
			ref := r.(map[string]any)
			assert.Equal(t, outputs["public_gallery_name"], ref["gallery"])
			gallery, v := findPublicVersion(state, ref["gallery"].(string), ref["name"].(string), ref["version"].(string))
			if assert.NotNil(t, v, "CAPZ image %v is not in the state", ref) && gallery == "flatcar4capi" {
				assert.Equal(t, true, v["exclude_from_latest"], "Flatcar's CAPI versions are excluded from latest")
			}
		}
	}
}

// checkNoTemporaries checks that no managed disk, no open disk access and
// no temporary resource (a managed image, an imported definition or
// version, an imported or captured VHD in the build's system container) is
// left: lib/temporary.star deletes them when the workflow ends.
func checkNoTemporaries(t *testing.T, state map[string]any) {
	t.Helper()
	for _, rg := range asMap(state["resource_groups"]) {
		g := asMap(rg)
		assert.Empty(t, g["disks"], "managed disks left in %s", g["name"])
		assert.Empty(t, g["disk_grants"], "open disk access left in %s", g["name"])
		var temporaries []string
		for _, img := range asMap(g["images"]) {
			temporaries = append(temporaries, asMap(img)["id"].(string))
		}
		for _, gal := range asMap(g["galleries"]) {
			for _, d := range asMap(asMap(gal)["definitions"]) {
				def := asMap(d)
				if strings.HasPrefix(def["name"].(string), "imported-") {
					temporaries = append(temporaries, def["id"].(string))
					for _, v := range asMap(def["versions"]) {
						temporaries = append(temporaries, asMap(v)["id"].(string))
					}
				}
			}
		}
		for account, sa := range asMap(g["storage_accounts"]) {
			for name := range asMap(asMap(asMap(asMap(sa)["containers"])["system"])["blobs"]) {
				if strings.HasPrefix(name, "imported-") || (strings.HasPrefix(name, "Microsoft.Compute/Images/aks-vhds/") && !strings.HasPrefix(account, "pkr")) {
					temporaries = append(temporaries, fmt.Sprintf("https://%s.blob.core.windows.net/system/%s", account, name))
				}
			}
		}
		sort.Strings(temporaries)
		assert.Empty(t, temporaries, "temporary resources left in %s", g["name"])
	}
}

func outputMap(res *interp.Result) map[string]any {
	m := map[string]any{}
	for _, o := range res.Outputs {
		m[o.Name] = o.Value
	}
	// Through JSON, so values compare as the state's do.
	data, _ := json.Marshal(m)
	var out map[string]any
	_ = json.Unmarshal(data, &out)
	return out
}

func snapshotOf(t *testing.T, p *local.Provider) map[string]any {
	t.Helper()
	data, err := json.Marshal(p.Snapshot())
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	return m
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	return string(data)
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// findID finds the object of the state with the given ARM id.
func findID(v any, id string) map[string]any {
	switch x := v.(type) {
	case map[string]any:
		if s, _ := x["id"].(string); strings.EqualFold(s, id) {
			return x
		}
		for _, e := range x {
			if m := findID(e, id); m != nil {
				return m
			}
		}
	case []any:
		for _, e := range x {
			if m := findID(e, id); m != nil {
				return m
			}
		}
	}
	return nil
}

// findVersion finds version of definition in the gallery named gallery.
func findVersion(state map[string]any, gallery, definition, version string) map[string]any {
	for _, rg := range asMap(state["resource_groups"]) {
		g := asMap(asMap(asMap(rg)["galleries"])[strings.ToLower(gallery)])
		if v := asMap(asMap(asMap(asMap(g["definitions"])[strings.ToLower(definition)])["versions"])[version]); v != nil {
			return v
		}
	}
	return nil
}

// findPublicVersion finds version of definition in the community gallery
// whose public name is publicName, and that gallery's name.
func findPublicVersion(state map[string]any, publicName, definition, version string) (string, map[string]any) {
	for _, rg := range asMap(state["resource_groups"]) {
		for name, g := range asMap(asMap(rg)["galleries"]) {
			names, _ := asMap(g)["public_names"].([]any)
			for _, n := range names {
				if n == publicName {
					return name, findVersion(state, name, definition, version)
				}
			}
		}
	}
	return "", nil
}

// findBlob finds the blob at url (https://<account>.blob.core.windows.net/<container>/<name>).
func findBlob(state map[string]any, url string) map[string]any {
	rest, ok := strings.CutPrefix(url, "https://")
	if !ok {
		return nil
	}
	host, path, _ := strings.Cut(rest, "/")
	container, name, _ := strings.Cut(path, "/")
	account, _, _ := strings.Cut(host, ".")
	for _, rg := range asMap(state["resource_groups"]) {
		sa := asMap(asMap(asMap(rg)["storage_accounts"])[account])
		if b := asMap(asMap(asMap(asMap(sa["containers"])[container])["blobs"])[name]); b != nil {
			return b
		}
	}
	return nil
}

// assertContains checks that everything in before is in after, unchanged:
// maps may have gained keys, every other value is equal.
func assertContains(t *testing.T, path string, before, after any) {
	t.Helper()
	b, isMap := before.(map[string]any)
	if !isMap {
		assert.Equal(t, before, after, "%s changed", path)
		return
	}
	a, ok := after.(map[string]any)
	if !assert.True(t, ok, "%s is gone", path) {
		return
	}
	for k, v := range b {
		if _, ok := a[k]; !assert.True(t, ok, "%s.%s is gone", path, k) {
			continue
		}
		assertContains(t, path+"."+k, v, a[k])
	}
}

// TestGuideShowsGen2AsItIs keeps the workflow WORKFLOWS.md shows whole
// ("How a workflow is laid out") the same as workflows/gen2.star.
func TestGuideShowsGen2AsItIs(t *testing.T) {
	guide, err := os.ReadFile(filepath.Join(workspaceRoot(), "WORKFLOWS.md"))
	require.NoError(t, err)
	const intro = "`workflows/gen2.star`, whole:\n\n```python\n"
	_, rest, ok := strings.Cut(string(guide), intro)
	require.True(t, ok, "WORKFLOWS.md no longer shows gen2.star whole")
	shown, _, _ := strings.Cut(rest, "```\n")
	file, err := os.ReadFile(filepath.Join(workspaceRoot(), "workflows", "gen2.star"))
	require.NoError(t, err)
	assert.Equal(t, string(file), shown, "update the listing of gen2.star in WORKFLOWS.md")
}
