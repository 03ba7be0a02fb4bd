package builtins_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.starlark.net/starlark"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/overlay"
	"github.com/imgflow/imgflow/internal/testutil"
	"github.com/imgflow/imgflow/interp"
	"github.com/imgflow/imgflow/packer"
)

// secretValue is what the tests put in IMGFLOW_SECRET_UA_TOKEN; it must
// appear nowhere imgflow writes.
const secretValue = "s3cr3t-UA-token-7f4b2c"

func TestSecretReadsTheEnvironmentAndNeverShowsItsValue(t *testing.T) {
	t.Setenv("IMGFLOW_SECRET_UA_TOKEN", secretValue)
	s := newSnippetSandbox(t)
	res := s.mustRun(`
tok = secret("ua_token")
print(tok)
output("shown", [str(tok), "%s" % tok, repr(tok), type(tok), bool(tok)])
`, nil)
	out := outputsOf(res)
	assert.Equal(t, []any{"<secret ua_token>", "<secret ua_token>", "<secret ua_token>", "secret", true}, out["shown"])
	data, err := json.Marshal(res.Steps)
	require.NoError(t, err)
	assert.NotContains(t, string(data), secretValue)

	for src, want := range map[string]string{
		`x = "token=" + secret("ua_token")`:       "unknown binary op: string + secret",
		`x = {secret("ua_token"): 1}`:             "unhashable type: secret",
		`x = json.encode(secret("ua_token"))`:     "secret",
		`x = secret("ua_token") == "s3cr3t"`:      "",
		`x = secret("no_such_secret_for_tests")`:  "export IMGFLOW_SECRET_NO_SUCH_SECRET_FOR_TESTS=<value>",
		`x = secret("bad-name")`:                  `invalid name "bad-name"`,
		`output("x", secret("ua_token"))`:         "a secret() cannot be one",
		`x = secret("ua_token")[0]`:               "unhandled index operation secret",
		`x = secret("ua_token").startswith("s3")`: "has no .startswith field",
	} {
		res := s.exec(src, nil)
		if want == "" {
			// Comparing is allowed by identity only: it reveals nothing.
			require.NoError(t, res.Err, src)
			continue
		}
		require.Error(t, res.Err, src)
		assert.Contains(t, res.Err.Error(), want, src)
		assert.NotContains(t, res.Err.Error(), secretValue, src)
	}
}

func TestSecretsStayOutOfPackerBuildRecords(t *testing.T) {
	t.Setenv("IMGFLOW_SECRET_UA_TOKEN", secretValue)
	// The builds' directories in a temporary directory of the test's own:
	// the shared one holds other processes' builds (their FIFOs blocked
	// this test's reads for good).
	t.Setenv("TMPDIR", t.TempDir())
	f := newBuildFixture(t)
	res := f.run("testdata/build/sig_marketplace.star", map[string]string{"use_secret": "true"})
	require.NoError(t, res.Err)
	steps := stepsOf(res, "packer_build")
	require.Len(t, steps, 1)
	vars, ok := steps[0].Args["vars"].(map[string]any)
	require.True(t, ok, "vars are recorded as a map: %#v", steps[0].Args["vars"])
	assert.Equal(t, "<secret ua_token>", vars["ua_token"], "a secret is recorded by name only")

	// A failing build: the error either.
	failed := f.run("testdata/build/sig_marketplace.star", map[string]string{"use_secret": "true", "version": "1.2"})
	require.Error(t, failed.Err)

	// A plan of it either.
	plan := interp.Plan(context.Background(), "//testdata/build/sig_marketplace.star", interp.Config{
		Workspace: f.ws, Registry: f.reg, Reporter: f.rep, Info: builtins.RunInfo{ID: "plan", Time: snippetTime},
		Vars: map[string]starlark.Value{"use_secret": starlark.True, "version": starlark.String("2026.1.3")},
	}, overlay.New(f.cloud))
	require.NoError(t, plan.Err)
	require.Len(t, stepsOf(plan, "packer_build"), 1)

	everything := []any{res.Steps, res.Outputs, failed.Steps, failed.Err.Error(), plan.Steps, f.rep.text()}
	data, err := json.Marshal(everything)
	require.NoError(t, err)
	assert.NotContains(t, string(data), secretValue)
	assertNoSecretInDir(t, f.journals)
	leftovers, _ := filepath.Glob(filepath.Join(os.TempDir(), "imgflow-build-*"))
	for _, dir := range leftovers {
		assertNoSecretInDir(t, dir)
	}
}

func assertNoSecretInDir(t *testing.T, dir string) {
	t.Helper()
	_ = filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || !info.Mode().IsRegular() {
			return nil // a FIFO's open would wait for a writer
		}
		data, err := os.ReadFile(path)
		if err == nil {
			assert.NotContains(t, string(data), secretValue, "secret in %s", path)
		}
		return nil
	})
}

// directRun executes src on a thread attached to a run whose Packer is
// set, as the CLI does for --target azure (interp.Config has no Packer yet).
func directRun(t *testing.T, f *buildFixture, pb builtins.PackerBuilder, src string) (starlark.StringDict, *builtins.Run, error) {
	t.Helper()
	return directRunOn(t, f, f.cloud, pb, src)
}

// directRunOn is directRun with another view of the fixture's cloud.
func directRunOn(t *testing.T, f *buildFixture, p cloud.Provider, pb builtins.PackerBuilder, src string) (starlark.StringDict, *builtins.Run, error) {
	t.Helper()
	run := &builtins.Run{
		Ctx: context.Background(), Provider: p, Workspace: f.ws, Registry: f.reg, Reporter: f.rep,
		Info: builtins.RunInfo{ID: "direct", Time: snippetTime}, Packer: pb,
	}
	th := &starlark.Thread{Name: "direct"}
	run.Attach(th)
	globals, err := starlark.ExecFileOptions(interp.FileOptions(), th, "testdata/build/direct.star", src, interp.Predeclared(f.reg))
	return globals, run, err
}

const fakeBuild = `
load_cse = stage_cse_modules()
build = packer_build(
    "//artifacts/packer/sig-marketplace.json",
    files = load_cse.uploads + [struct(src = "//testdata/build/lister", dest = "/home/packer/lister")],
    vars = {
        "subscription_id": "00000000-0000-0000-0000-000000000000",
        "location": "westus2",
        "os_disk_size_gb": "1",
        "imgflow_installs": "/home/packer/provision_configs.sh:/opt/azure/containers/provision_configs.sh:0744",
        "bcc_version": "v0.29.0",
        "managed_image_resource_group_name": "aks-images",
        "sig_resource_group_name": "aks-galleries",
        "sig_gallery_name": "aksgallery",
        "sig_image_name": "ubuntu2204",
        "sig_image_version": "2021.01.01",
        "ua_token": secret("ua_token"),
    },
)
`

// The Azure target: packer_build runs Run.Packer (here packer.Runner with
// the fake packer script) and reads its results from the artifact lines.
func TestPackerBuildRunsRealPackerOnTheAzureTarget(t *testing.T) {
	t.Setenv("IMGFLOW_SECRET_UA_TOKEN", secretValue)
	fake, err := filepath.Abs("../testdata/packer/fake-packer.sh")
	require.NoError(t, err)
	sub := "/subscriptions/00000000-0000-0000-0000-000000000000"
	cases := []struct {
		mode  string
		check func(t *testing.T, build *starlark.Dict)
	}{
		{"vhd", func(t *testing.T, b *starlark.Dict) {
			assert.Equal(t, "https://imgflowvhds.blob.core.windows.net/system/Microsoft.Compute/Images/aks-vhds/aks-osDisk.5e8f1c2a-1b2c-4d5e-8f90-123456789abc.vhd", get(t, b, "vhd_url"))
			assert.Nil(t, get(t, b, "managed_image"))
			assert.Nil(t, get(t, b, "sig_version"))
			assert.Nil(t, get(t, b, "resource_group"))
		}},
		{"managed", func(t *testing.T, b *starlark.Dict) {
			assert.Equal(t, map[string]any{
				"id":   sub + "/resourceGroups/aks-images/providers/Microsoft.Compute/images/aks-ubuntu-2204-2021.01.01",
				"name": "aks-ubuntu-2204-2021.01.01", "resource_group": "aks-images", "location": "westus2",
			}, get(t, b, "managed_image"))
			assert.Equal(t, "aks-images", get(t, b, "resource_group"))
			assert.Nil(t, get(t, b, "sig_version"))
			assert.Nil(t, get(t, b, "vhd_url"))
		}},
		{"sig", func(t *testing.T, b *starlark.Dict) {
			v, ok := get(t, b, "sig_version").(map[string]any)
			require.True(t, ok)
			assert.Equal(t, "2021.01.01", v["name"])
			assert.Contains(t, v["id"], "/resourceGroups/aks-galleries/providers/Microsoft.Compute/galleries/aksgallery/images/ubuntu2204/versions/2021.01.01")
			assert.Equal(t, "ubuntu2204", v["definition"].(map[string]any)["name"])
			assert.Equal(t, "aks-images", get(t, b, "resource_group"))
			arts := get(t, b, "artifacts").([]any)
			require.Len(t, arts, 1)
			assert.Equal(t, packer.AzureARMBuilderID, arts[0].(map[string]any)["builder_id"])
			assert.Equal(t, "azure-arm", arts[0].(map[string]any)["build"])
		}},
	}
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			f := newBuildFixtureIn(t, strings.TrimPrefix(sub, "/subscriptions/")) // the fake packer's ids name it
			argv := filepath.Join(t.TempDir(), "argv")
			out := &testutil.SyncBuffer{}
			var runner builtins.PackerBuilder = &packer.Runner{Binary: fake, Stdout: out, Prefix: "[packer] ",
				Env: []string{"FAKE_PACKER_MODE=" + tc.mode, "FAKE_PACKER_ARGV_FILE=" + argv, "FAKE_PACKER_ECHO_VAR=ua_token"}}
			if tc.mode == "sig" {
				// What packer publishes must exist to be read back; the
				// fake packer only prints it, so the version appears
				// while it runs.
				runner = publishingBuilder{runner, func() error { return publishFakeVersion(t, f) }}
			}
			globals, run, err := directRun(t, f, runner, fakeBuild)
			require.NoError(t, err)
			build, err := builtins.ToGo(globals["build"])
			require.NoError(t, err)
			d := starlark.NewDict(0)
			for k, v := range build.(map[string]any) {
				require.NoError(t, d.SetKey(starlark.String(k), builtins.FromGo(v)))
			}
			tc.check(t, d)

			steps := run.Steps()
			last := steps[len(steps)-1]
			assert.Equal(t, "packer_build", last.Builtin)
			assert.Equal(t, cloud.Created, last.Outcome)
			// The secret went to packer in a 0600 var-file only; packer
			// echoed it and the Runner masked it.
			args, err := os.ReadFile(argv)
			require.NoError(t, err)
			assert.NotContains(t, string(args), secretValue)
			assert.Regexp(t, `varfile-mode \S+imgflow-packer-vars-\S+ 600`, string(args))
			assert.Contains(t, string(args), "-var-file=")
			assert.Contains(t, out.String(), "token=<sensitive>")
			all, err := json.Marshal([]any{steps, out.String(), f.rep.text()})
			require.NoError(t, err)
			assert.NotContains(t, string(all), secretValue)
		})
	}
}

func get(t *testing.T, d *starlark.Dict, key string) any {
	t.Helper()
	v, found, err := d.Get(starlark.String(key))
	require.NoError(t, err)
	require.True(t, found, "no field %s", key)
	g, err := builtins.ToGo(v)
	require.NoError(t, err)
	return g
}

func TestPackerBuildReportsPackersErrors(t *testing.T) {
	t.Setenv("IMGFLOW_SECRET_UA_TOKEN", secretValue)
	fake, err := filepath.Abs("../testdata/packer/fake-packer.sh")
	require.NoError(t, err)
	f := newBuildFixture(t)
	runner := &packer.Runner{Binary: fake, Env: []string{"FAKE_PACKER_MODE=fail"}}
	_, _, err = directRun(t, f, runner, fakeBuild)
	require.Error(t, err)
	msg := err.Error()
	assert.Contains(t, msg, "packer build artifacts/packer/sig-marketplace.json failed (exit status 1)")
	assert.Contains(t, msg, "Script exited with non-zero exit status: 100")
	assert.NotContains(t, msg, secretValue)
	assert.NotContains(t, msg, f.ws.Root, "paths are workspace-relative")
}

// The validation pass never runs real packer, even when Run.Packer is set.
func TestValidationPassSimulatesEvenOnTheAzureTarget(t *testing.T) {
	t.Setenv("IMGFLOW_SECRET_UA_TOKEN", secretValue)
	f := newBuildFixture(t)
	_, _, err := directRun(t, f, nil, `
rg = resource_group("aks-images", location = "westus2")
g = gallery("aksgallery", resource_group = resource_group("aks-galleries", location = "westus2"))
image_definition(g, name = "ubuntu2204", publisher = "aks", offer = "ubuntu", sku = "2204")
`)
	require.NoError(t, err)
	boom := &failingBuilder{}
	run := &builtins.Run{
		Ctx: context.Background(), Provider: overlay.New(f.cloud), Workspace: f.ws, Registry: f.reg,
		Info: builtins.RunInfo{ID: "v", Time: snippetTime}, Packer: boom, Validating: true,
	}
	th := &starlark.Thread{Name: "validate"}
	run.Attach(th)
	src := strings.ReplaceAll(fakeBuild, `"00000000-0000-0000-0000-000000000000"`, `"`+f.cloud.SubscriptionID()+`"`)
	_, err = starlark.ExecFileOptions(interp.FileOptions(), th, "testdata/build/direct.star", src, interp.Predeclared(f.reg))
	require.NoError(t, err)
	assert.False(t, boom.called, "real packer ran in the validation pass")
	assert.Empty(t, f.cloud.Snapshot().ResourceGroups["aks-images"].Images, "the validation pass changed nothing real")
}

// publishingBuilder publishes before it builds, as packer would after.
type publishingBuilder struct {
	builtins.PackerBuilder
	publish func() error
}

func (b publishingBuilder) Build(ctx context.Context, req packer.BuildRequest) (*packer.Result, error) {
	if err := b.publish(); err != nil {
		return nil, err
	}
	return b.PackerBuilder.Build(ctx, req)
}

// publishFakeVersion makes the gallery image version fakeBuild's
// template publishes (aksgallery/ubuntu2204/2021.01.01).
func publishFakeVersion(t *testing.T, f *buildFixture) error {
	_, _, err := directRun(t, f, nil, `
rg = resource_group("aks-galleries", location = "westus2")
sa = storage_account("aksgalleryvhds", resource_group = rg)
up = vhd_upload("//testdata/flatcar/flatcar-linux-test-amd64.vhd", dest = blob(sa, container = "vhds", name = "base.vhd"))
d = image_definition(gallery("aksgallery", resource_group = rg), name = "ubuntu2204", publisher = "aks", offer = "ubuntu", sku = "2204")
image_version(d, version = "2021.01.01", source = vhd(up, storage_account = sa))
`)
	return err
}

type failingBuilder struct{ called bool }

func (b *failingBuilder) Build(context.Context, packer.BuildRequest) (*packer.Result, error) {
	b.called = true
	return nil, assert.AnError
}

// A secret() the template renders into a resource name (managed_image_name)
// or a tag (azure_tags) is refused in the validation pass, at the
// packer_build line, before anything is created: Azure would store it
// and every listing, plan, journal and state would show it.
func TestSecretInAResourceNameOrTagIsRefused(t *testing.T) {
	t.Setenv("IMGFLOW_SECRET_UA_TOKEN", "s3cr3tname")
	for into, want := range map[string]string{
		"name": `managed_image_name is made from secret("ua_token")`,
		"tags": `azure_tags is made from secret("ua_token")`,
	} {
		t.Run(into, func(t *testing.T) {
			f := newBuildFixture(t)
			res := f.run("testdata/build/secret_in_name.star", map[string]string{"into": into})
			require.Error(t, res.Err)
			msg := res.Err.Error()
			assert.Contains(t, msg, want)
			assert.Contains(t, msg, "testdata/build/secret_in_name.star:26:")
			assert.NotContains(t, msg, "s3cr3tname")
			data, err := json.Marshal([]any{res.Steps, f.rep.text()})
			require.NoError(t, err)
			assert.NotContains(t, string(data), "s3cr3tname")
			assert.NotContains(t, f.state(), "2026.1.2", "no image was created")
			assertNoSecretInDir(t, f.journals)
		})
	}
}
