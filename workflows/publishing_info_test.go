package workflows

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.starlark.net/starlark"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/builtins/faulthook"
	"github.com/imgflow/imgflow/cloud/faults"
	"github.com/imgflow/imgflow/cloud/overlay"
	"github.com/imgflow/imgflow/interp"
	"github.com/imgflow/imgflow/journal"
)

// agentBakerPublishingInfo is the shape of vhd-publishing-info.json as
// AgentBaker's vhdbuilder/packer/generate-vhd-publishing-info.sh writes it
// for a Linux VHD (the heredoc of its OS_NAME=linux branch): every field,
// in its order, with the format of its value. Every value is a JSON
// string, replication_inverse too.
var agentBakerPublishingInfo = []struct {
	name   string
	format *regexp.Regexp
}{
	// ${STORAGE_ACCT_BLOB_URL}/${VHD_NAME}: a blob URL; no SAS since
	// AgentBaker stopped generating one.
	{"vhd_url", regexp.MustCompile(`^https://[a-z0-9]{3,24}\.blob\.core\.windows\.net/[a-z0-9-]+/[^?]+\.vhd$`)},
	// The captured version in the staging gallery PackerSigGalleryEastUS.
	{"captured_sig_resource_id", regexp.MustCompile(`^/subscriptions/[0-9a-f-]{36}/resourceGroups/[^/]+/providers/Microsoft\.Compute/galleries/PackerSigGalleryEastUS/images/[^/]+/versions/1\.\d+\.\d+$`)},
	{"os_name", regexp.MustCompile(`^Linux$`)},
	{"sku_name", regexp.MustCompile(`^[A-Za-z0-9]+$`)},
	// OFFER_NAME, the OS_SKU: Ubuntu, CBLMariner, AzureLinux, …
	{"offer_name", regexp.MustCompile(`^(Ubuntu|CBLMariner|AzureLinux|AzureLinuxOSGuard|AzureContainerLinux|Flatcar)$`)},
	{"hyperv_generation", regexp.MustCompile(`^V[12]$`)},
	{"image_architecture", regexp.MustCompile(`^(x64|Arm64)$`)},
	// IMAGE_VERSION, by default date +%Y%m.%d.0.
	{"image_version", regexp.MustCompile(`^\d{6}\.\d{2}\.\d+$`)},
	// A power of two: 1, doubled per rule (offer, SKU, Gen1, feature).
	{"replication_inverse", regexp.MustCompile(`^(1|2|4|8|16)$`)},
	// The marketplace image version the build started from, concrete as
	// az vm image list … version lists it (never "latest": an unpinned
	// build's is resolved through the target).
	{"publisher_base_image_version", regexp.MustCompile(`^\d+\.\d+\.\d+$`)},
	// IMG_SKU: the marketplace SKU the build started from.
	{"publisher_base_image_sku", regexp.MustCompile(`^[a-z0-9_-]+$`)},
}

// publishingVariants are the three cells the golden test covers: Ubuntu
// gen2, Azure Linux arm64 and a confidential VM image.
var publishingVariants = []struct {
	name string
	vars map[string]string
}{
	{"ubuntu-2204-gen2", map[string]string{}},
	{"azurelinux-3-arm64", map[string]string{"os": "AzureLinux", "os_version": "3.0", "arch": "arm64"}},
	{"ubuntu-2404-cvm", map[string]string{"os_version": "24.04", "features": "cvm", "img_version": "24.04.202608140"}},
}

// goldenPublishingInfo is a variant's golden vhd-publishing-info.json.
func goldenPublishingInfo(name string) string {
	return filepath.Join(workspaceRoot(), "testdata", "publishing", name+".vhd-publishing-info.json")
}

// TestPublishingInfoHasAgentBakersShape runs linux.star for each variant
// on the local target with an artifacts directory and checks the
// vhd-publishing-info.json it writes field by field against AgentBaker's
// shape (names, order, string values, formats), then byte for byte against
// testdata/publishing/<variant>.vhd-publishing-info.json (go test
// ./workflows/ -run TestPublishingInfo -update rewrites them).
func TestPublishingInfoHasAgentBakersShape(t *testing.T) {
	for _, v := range publishingVariants {
		t.Run(v.name, func(t *testing.T) {
			dir := t.TempDir()
			res := interp.Run(context.Background(), "//workflows/linux.star", interp.Config{
				Workspace: openWorkspace(t), Registry: builtins.NewRegistry(), Vars: stringListVars(v.vars),
				Info: builtins.RunInfo{ID: "publishing", Time: runTime}, ArtifactsDir: dir,
			}, interp.Target{Apply: newPlanCloud(t), Validate: nil})
			require.NoError(t, res.Err)

			data, err := os.ReadFile(filepath.Join(dir, "vhd-publishing-info.json"))
			require.NoError(t, err, "linux.star writes vhd-publishing-info.json into the artifacts directory")
			names, values := orderedStringFields(t, data)
			want := make([]string, len(agentBakerPublishingInfo))
			for i, f := range agentBakerPublishingInfo {
				want[i] = f.name
				assert.Contains(t, names, f.name, "AgentBaker's field %s is missing", f.name)
			}
			for _, n := range names {
				assert.Contains(t, want, n, "field %s is not one AgentBaker writes", n)
			}
			assert.Equal(t, want, names, "the fields in AgentBaker's order")
			for _, f := range agentBakerPublishingInfo {
				if val, ok := values[f.name]; ok {
					assert.Regexp(t, f.format, val, "field %s", f.name)
				}
			}

			// The outputs carry the same values, for steps that read them.
			outputs := outputMap(res)
			for name, val := range values {
				assert.Equal(t, val, outputs[name], "output %s", name)
			}

			got := subscriptionRE.ReplaceAll(data, []byte("/subscriptions/<subscription>/"))
			golden := goldenPublishingInfo(v.name)
			if *updateGolden {
				require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o755))
				require.NoError(t, os.WriteFile(golden, got, 0o644))
			}
			wantData, err := os.ReadFile(golden)
			require.NoError(t, err, "no golden file: go test ./workflows/ -run TestPublishingInfo/%s -update", v.name)
			assert.Equal(t, string(wantData), string(got), "rewrite with: go test ./workflows/ -run TestPublishingInfo/%s -update", v.name)
		})
	}
}

var subscriptionRE = regexp.MustCompile(`/subscriptions/[0-9a-f-]{36}/`)

// orderedStringFields decodes a JSON object keeping its field order, and
// requires every value to be a string (as AgentBaker writes them).
func orderedStringFields(t *testing.T, data []byte) ([]string, map[string]string) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	require.NoError(t, err)
	require.Equal(t, json.Delim('{'), tok, "a JSON object")
	var names []string
	values := map[string]string{}
	for dec.More() {
		tok, err := dec.Token()
		require.NoError(t, err)
		name := tok.(string)
		var v any
		require.NoError(t, dec.Decode(&v))
		s, ok := v.(string)
		assert.True(t, ok, "field %s is %v, not a string as AgentBaker writes it", name, v)
		names = append(names, name)
		values[name] = s
	}
	return names, values
}

// stringListVars are vars as --var gives them; features is a list.
func stringListVars(m map[string]string) map[string]starlark.Value {
	vars := stringVars(m)
	if f, ok := m["features"]; ok {
		vars["features"] = starlark.NewList([]starlark.Value{starlark.String(f)})
	}
	return vars
}

// TestLinuxPublishesTheBuildDownloads checks the other publishing
// artifacts of a local run: the files the template downloads from the
// build VM, simulated from what the build uploaded and was given.
func TestLinuxPublishesTheBuildDownloads(t *testing.T) {
	dir := t.TempDir()
	res := interp.Run(context.Background(), "//workflows/linux.star", interp.Config{
		Workspace: openWorkspace(t), Registry: builtins.NewRegistry(), Vars: stringVars(nil),
		Info: builtins.RunInfo{ID: "downloads", Time: runTime}, ArtifactsDir: dir,
	}, interp.Target{Apply: newPlanCloud(t)})
	require.NoError(t, res.Err)
	var names []string
	for _, a := range res.Artifacts {
		names = append(names, a.Name)
		assert.Equal(t, filepath.Join(dir, a.Name), a.Path)
		st, err := os.Stat(a.Path)
		require.NoError(t, err)
		assert.EqualValues(t, a.Size, st.Size())
	}
	assert.Equal(t, []string{"trivy-report.json", "trivy-images-table.txt", "vhd-publishing-info.json", "release-notes.txt", "image-bom.json", "bcc-tools-installation.log"}, names)

	notes, err := os.ReadFile(filepath.Join(dir, "release-notes.txt"))
	require.NoError(t, err)
	for _, want := range []string{
		"/opt/azure/vhd-install.complete of build azure-arm, simulated by imgflow",
		"sku=22_04-lts-gen2",
		"bcc_version = v0.29.0",
		"/home/packer/provision_configs.sh:/opt/azure/containers/provision_configs.sh:0744",
		"/home/packer/aks-mglru.conf:/etc/tmpfiles.d/aks-mglru.conf:0644",
	} {
		assert.Contains(t, string(notes), want)
	}
	var bom struct {
		SourceImage map[string]string `json:"source_image"`
		Files       []struct{ Path, Mode, SHA256 string }
	}
	data, err := os.ReadFile(filepath.Join(dir, "image-bom.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &bom), "image-bom.json is JSON")
	assert.Equal(t, "0001-com-ubuntu-server-jammy", bom.SourceImage["offer"])
	var paths []string
	for _, f := range bom.Files {
		paths = append(paths, f.Path)
		assert.Len(t, f.SHA256, 64)
	}
	assert.Contains(t, paths, "/home/packer/provision_configs_gpu.sh")
	assert.Contains(t, paths, "/home/packer/lister")
}

// TestResumedRunPublishesWhatTheBuildDownloaded crashes linux.star after
// the export, when the build VM is long gone, and resumes it into the same
// artifacts directory: the downloads come back from the journal, so the
// resumed run writes the same release notes, and every artifact matches
// an uninterrupted run's.
func TestResumedRunPublishesWhatTheBuildDownloaded(t *testing.T) {
	run := func(h *harness, id string, resume bool, injected map[string]faults.Fault, dir string) *interp.Result {
		var j *journal.File
		var err error
		if resume {
			j, err = journal.Open(h.journals, id)
		} else {
			j, err = journal.Create(h.journals, journal.Record{RunID: id, RunTime: &runTime})
		}
		require.NoError(t, err)
		defer j.Close()
		fs := faults.NewFaults(injected)
		return interp.Run(context.Background(), h.file, interp.Config{
			Workspace: h.ws, Registry: h.reg, Vars: h.vars, Info: builtins.RunInfo{ID: id, Time: runTime}, Journal: j, Hooks: faulthook.Hooks(fs), ArtifactsDir: dir,
		}, interp.Target{Apply: faults.WithFaults(h.cloud, fs), Validate: overlay.New(h.cloud)})
	}
	refDir := t.TempDir()
	ref := run(newHarness(t, "workflows/linux.star", nil), "ref", false, nil, refDir)
	require.NoError(t, ref.Err)

	h, dir := newHarness(t, "workflows/linux.star", nil), t.TempDir()
	crashed := run(h, "ref", false, map[string]faults.Fault{"sig_to_vhd": {Crash: true}}, dir)
	require.True(t, crashed.Crashed, "%v", crashed.Err)
	var before []string
	for _, a := range crashed.Artifacts {
		before = append(before, a.Name)
	}
	assert.Equal(t, []string{"trivy-report.json", "trivy-images-table.txt"}, before, "the crash came after the scans' reports, before the publishing artifacts")
	resumed := run(h, "ref", true, nil, dir)
	require.NoError(t, resumed.Err)
	build := stepsNamed(resumed, "packer_build")
	require.Len(t, build, 1)
	assert.Equal(t, "replayed", string(build[0].Outcome), "the build is not redone")
	tested := stepsNamed(resumed, "test_vm")
	require.Len(t, tested, 1)
	assert.Equal(t, "replayed", string(tested[0].Outcome), "the scans are not run again: their reports come from the journal")

	require.Len(t, resumed.Artifacts, len(ref.Artifacts))
	for i, a := range resumed.Artifacts {
		assert.Equal(t, ref.Artifacts[i].Name, a.Name)
		assert.Equal(t, ref.Artifacts[i].SHA256, a.SHA256, "%s as an uninterrupted run writes it", a.Name)
		data, err := os.ReadFile(filepath.Join(dir, a.Name))
		require.NoError(t, err)
		want, err := os.ReadFile(filepath.Join(refDir, a.Name))
		require.NoError(t, err)
		assert.Equal(t, string(want), string(data))
	}
}

func stepsNamed(res *interp.Result, builtin string) []*builtins.Step {
	var out []*builtins.Step
	for _, s := range res.Steps {
		if s.Builtin == builtin {
			out = append(out, s)
		}
	}
	return out
}
