package tenant_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/local"
	"github.com/imgflow/imgflow/cloud/overlay"
	"github.com/imgflow/imgflow/internal/tenant"
	"github.com/imgflow/imgflow/internal/testharness"
	"github.com/imgflow/imgflow/interp"
	"github.com/imgflow/imgflow/journal"
)

const gallerySub = "00000000-0000-0000-0000-00000000beef"

// world is a local target and its tenant, on state directories, as
// `imgflow run` opens them.
type world struct {
	dir    string
	target *local.Provider
	subs   *tenant.Cache
	h      *testharness.Harness
}

func newWorld(t *testing.T, src string) *world {
	t.Helper()
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "xsub.star"), []byte(src), 0o644))
	dir := filepath.Join(root, ".imgflow")
	tn := local.NewTenant()
	p, err := local.Open(dir, local.Options{Tenant: tn})
	require.NoError(t, err)
	w := &world{dir: dir, target: p, subs: tenant.NewLocal(dir, tn, local.Options{}), h: testharness.New(t, root, "xsub")}
	t.Cleanup(func() { assert.NoError(t, w.subs.Close()); assert.NoError(t, p.Close()) })
	return w
}

func (w *world) config() interp.Config {
	cfg := w.h.Config(nil)
	cfg.Subscriptions = tenant.ForPass(w.subs)
	return cfg
}

func (w *world) run() *interp.Result {
	return interp.Run(context.Background(), "//xsub.star", w.config(), interp.Target{Apply: w.target, Validate: overlay.New(w.target)})
}

// other is the gallery subscription's state, nil when it was never opened.
func (w *world) other(t *testing.T) *local.State {
	t.Helper()
	for _, p := range w.subs.Opened() {
		if lp := p.(*local.Provider); lp.SubscriptionID() == gallerySub {
			return lp.Snapshot()
		}
	}
	return nil
}

const publish = `
rg = resource_group("aks-vhd-build", location = "eastus")
sa = storage_account("xsubvhds", resource_group = rg)
up = vhd_upload("//base.vhd", dest = blob(sa, container = "vhds", name = "base.vhd"))
img = managed_image("base", resource_group = rg, source = vhd(up, storage_account = sa))
grg = resource_group("aks-vhd-build", location = "eastus", subscription_id = "` + gallerySub + `")
d = image_definition(gallery("sig", resource_group = grg), name = "ubuntu", publisher = "p", offer = "o", sku = "s")
v = image_version(d, version = "1.0.0", source = img)
tmp = image_version(d, version = "1.0.1", source = img)
cleanup(lambda: delete(tmp), deletes = tmp)
`

// writeVHD puts the project's small test VHD in the workspace root.
func writeVHD(t *testing.T, root string) {
	t.Helper()
	data, err := os.ReadFile("../../testdata/flatcar/flatcar-linux-test-amd64.vhd")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "base.vhd"), data, 0o644))
}

func journalCleanup(kind string, args map[string]any) journal.Cleanup {
	return journal.Cleanup{ID: "c#0", Kind: kind, Name: "delete", Args: args}
}

// The managed image in the target's subscription, the gallery and its
// versions in another: the plan records them in each subscription's
// overlay and changes nothing; the run makes them there, and the
// workflow's cleanup deletes the temporary version in its subscription.
func TestGalleryInAnotherSubscription(t *testing.T) {
	w := newWorld(t, publish)
	writeVHD(t, filepath.Dir(w.dir))

	plan := interp.Plan(context.Background(), "//xsub.star", w.config(), overlay.New(w.target))
	require.NoError(t, plan.Err)
	assert.Empty(t, w.target.Snapshot().ResourceGroups, "a plan changes nothing")
	if st := w.other(t); st != nil {
		assert.Empty(t, st.ResourceGroups, "a plan changes nothing in the other subscription")
	}
	summaries := map[string]string{}
	for _, s := range plan.Steps {
		summaries[s.Builtin] = s.Summary
	}
	assert.Contains(t, summaries["gallery"], "(subscription "+gallerySub+")")
	assert.Contains(t, summaries["image_version"], "(subscription "+gallerySub+")")
	assert.NotContains(t, summaries["managed_image"], "subscription")

	res := w.run()
	require.NoError(t, res.Err)
	other := w.other(t)
	require.NotNil(t, other)
	g := other.ResourceGroups["aks-vhd-build"].Galleries["sig"]
	require.NotNil(t, g, "the gallery is in the gallery subscription")
	versions := g.Definitions["ubuntu"].Versions
	require.Contains(t, versions, "1.0.0")
	assert.NotContains(t, versions, "1.0.1", "the cleanup deleted the temporary version where it is")
	assert.Equal(t, cloud.ManagedImageID(w.target.SubscriptionID(), "aks-vhd-build", "base"), versions["1.0.0"].Source.ID)
	assert.Empty(t, w.target.Snapshot().ResourceGroups["aks-vhd-build"].Galleries, "nothing of the gallery in the target's")
	_, err := os.Stat(filepath.Join(tenant.LocalDir(w.dir, gallerySub), "state.json"))
	require.NoError(t, err, "the other subscription is a state directory of its own")

	again := w.run()
	require.NoError(t, again.Err)
	for _, s := range again.Steps {
		if s.Builtin == "gallery" || s.Builtin == "image_definition" || (s.Builtin == "image_version" && s.Args["version"] == "1.0.0") {
			assert.Equal(t, cloud.Exists, s.Outcome, "%s is found again in its subscription", s.Builtin)
		}
	}
}

// A journaled cleanup of a resource in another subscription runs there,
// also outside the run (imgflow gc).
func TestCleanupRunsInItsSubscription(t *testing.T) {
	w := newWorld(t, publish)
	writeVHD(t, filepath.Dir(w.dir))
	require.NoError(t, w.run().Err)
	gp, err := w.subs.Provider(context.Background(), gallerySub)
	require.NoError(t, err)
	_, err = gp.GetImageVersion(context.Background(), "aks-vhd-build", "sig", "ubuntu", "1.0.0")
	require.NoError(t, err)
	c := journalCleanup("delete_image_version", map[string]any{"resource_group": "aks-vhd-build", "gallery": "sig", "definition": "ubuntu", "version": "1.0.0", builtins.SubscriptionArg: gallerySub})
	require.NoError(t, w.h.Registry.RunCleanupIn(context.Background(), w.target, w.subs, c))
	_, err = gp.GetImageVersion(context.Background(), "aks-vhd-build", "sig", "ubuntu", "1.0.0")
	assert.True(t, cloud.IsNotFound(err), "deleted in the gallery subscription: %v", err)
	err = w.h.Registry.RunCleanup(context.Background(), w.target, c)
	require.ErrorContains(t, err, "subscription "+gallerySub+", which this target cannot reach")
}

// Bad subscription ids, and a subscription a resource cannot be in, are
// refused in the validation pass with the workflow's line, before any
// change in any subscription.
func TestBadSubscriptionsAreRefusedBeforeAnyChange(t *testing.T) {
	cases := map[string]struct{ src, want string }{
		"not a GUID": {`resource_group("g", location = "eastus")
gallery("sig", resource_group = "g", location = "eastus", subscription_id = "beef")`, `xsub.star:3:8: gallery sig: subscription_id: invalid subscription id "beef"`},
		"an ARM id": {`resource_group("g", location = "eastus", subscription_id = "/subscriptions/` + gallerySub + `")`, "is a GUID"},
		"not the group's": {`rg = resource_group("g", location = "eastus")
gallery("sig", resource_group = rg, subscription_id = "` + gallerySub + `")`, "but its resource group is in subscription"},
		"storage elsewhere": {`rg = resource_group("g", location = "eastus", subscription_id = "` + gallerySub + `")
storage_account("xsubvhds", resource_group = rg)`, "makes storage accounts and managed images in the target's subscription"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, "resource_group(\"before\", location = \"eastus\")\n"+tc.src)
			res := w.run()
			require.Error(t, res.Err)
			assert.Equal(t, "validate", res.Pass)
			assert.Contains(t, res.Err.Error(), tc.want)
			assert.Empty(t, w.target.Snapshot().ResourceGroups)
			if st := w.other(t); st != nil {
				assert.Empty(t, st.ResourceGroups)
			}
		})
	}
}

// A new process (imgflow run --resume) has not opened the gallery's
// subscription when it makes a disk from a version there: the target's
// tenant opens it then.
func TestTenantOpensASubscriptionASourceNames(t *testing.T) {
	w := newWorld(t, publish)
	writeVHD(t, filepath.Dir(w.dir))
	require.NoError(t, w.run().Err)
	require.NoError(t, w.subs.Close())
	require.NoError(t, w.target.Close())

	tn := local.NewTenant()
	p, err := local.Open(w.dir, local.Options{Tenant: tn})
	require.NoError(t, err)
	subs := tenant.NewLocal(w.dir, tn, local.Options{})
	t.Cleanup(func() { assert.NoError(t, subs.Close()); assert.NoError(t, p.Close()) })
	require.Empty(t, subs.Opened())
	id := cloud.ImageVersionID(gallerySub, "aks-vhd-build", "sig", "ubuntu", "1.0.0")
	_, err = p.CreateDiskFromImageVersion(context.Background(), cloud.Disk{Name: "export", ResourceGroup: "aks-vhd-build", Location: "eastus", SourceImageVersionID: id})
	require.NoError(t, err)
	assert.Len(t, subs.Opened(), 1)
}
