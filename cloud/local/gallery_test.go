package local

import (
	"math/rand"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/cloudtest"
)

func TestResourceGroups(t *testing.T) {
	p := newTestProvider(t)
	_, err := p.GetResourceGroup(ctx, "rg")
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeResourceGroupNotFound, "'rg' could not be found")

	rg, err := p.CreateResourceGroup(ctx, cloud.ResourceGroup{Name: "RG", Location: "West Europe", Tags: cloud.Tags{"a": "1"}})
	require.NoError(t, err)
	assert.Equal(t, cloud.ResourceGroup{ID: cloud.ResourceGroupID(p.SubscriptionID(), "RG"), Name: "RG", Location: "westeurope", Tags: cloud.Tags{"a": "1"}}, *rg)

	// PUT again: tags replaced; the name is case-insensitive.
	rg, err = p.CreateResourceGroup(ctx, cloud.ResourceGroup{Name: "rg", Location: "westeurope", Tags: cloud.Tags{"b": "2"}})
	require.NoError(t, err)
	assert.Equal(t, "RG", rg.Name)
	assert.Equal(t, cloud.Tags{"b": "2"}, rg.Tags)

	_, err = p.CreateResourceGroup(ctx, cloud.ResourceGroup{Name: "rg", Location: "eastus"})
	cloudtest.RequireError(t, err, http.StatusConflict, cloud.CodeInvalidResourceGroupLocation, "already exists in location 'westeurope'")

	_, err = p.CreateResourceGroup(ctx, cloud.ResourceGroup{Name: "other", Location: "europe"})
	cloudtest.RequireError(t, err, http.StatusBadRequest, cloud.CodeLocationNotAvailableForResourceType)

	got, err := p.GetResourceGroup(ctx, "Rg")
	require.NoError(t, err)
	got.Tags["b"] = "mutated" // a returned value is a copy
	got, err = p.GetResourceGroup(ctx, "rg")
	require.NoError(t, err)
	assert.Equal(t, "2", got.Tags["b"])
}

func TestGalleries(t *testing.T) {
	p := newTestProvider(t)
	_, err := p.CreateGallery(ctx, cloud.Gallery{Name: "g", ResourceGroup: "rg1", Location: "westeurope"})
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeResourceGroupNotFound)

	for _, rg := range []string{"rg1", "rg2"} {
		_, err := p.CreateResourceGroup(ctx, cloud.ResourceGroup{Name: rg, Location: "westeurope"})
		require.NoError(t, err)
	}
	_, err = p.GetGallery(ctx, "rg1", "g")
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeResourceNotFound)

	g, err := p.CreateGallery(ctx, cloud.Gallery{Name: "g", ResourceGroup: "rg1", Location: "westeurope", Description: "one"})
	require.NoError(t, err)
	assert.Equal(t, cloud.GalleryID(p.SubscriptionID(), "rg1", "g"), g.ID)

	g, err = p.CreateGallery(ctx, cloud.Gallery{Name: "G", ResourceGroup: "rg1", Location: "westeurope", Description: "two", Tags: cloud.Tags{"k": "v"}})
	require.NoError(t, err)
	assert.Equal(t, "g", g.Name)
	assert.Equal(t, "two", g.Description)
	assert.Equal(t, cloud.Tags{"k": "v"}, g.Tags)

	_, err = p.CreateGallery(ctx, cloud.Gallery{Name: "g", ResourceGroup: "rg1", Location: "eastus"})
	cloudtest.RequireError(t, err, http.StatusConflict, cloud.CodeInvalidResourceLocation)

	// Unique per subscription, not per resource group.
	_, err = p.CreateGallery(ctx, cloud.Gallery{Name: "G", ResourceGroup: "rg2", Location: "westeurope"})
	cloudtest.RequireError(t, err, http.StatusConflict, cloud.CodeConflict, "not unique within the subscription")

	_, err = p.CreateGallery(ctx, cloud.Gallery{Name: "a", ResourceGroup: "rg2"})
	require.NoError(t, err)
	list, err := p.ListGalleries(ctx)
	require.NoError(t, err)
	require.Len(t, list, 2)
	assert.Equal(t, []string{"a", "g"}, []string{list[0].Name, list[1].Name})
	assert.Equal(t, "westeurope", list[0].Location, "location defaults to the resource group's")
}

var community = cloud.CommunityInfo{
	PublicNamePrefix: "flatcar", PublisherURI: "https://flatcar.org",
	PublisherContact: "security@flatcar.org", EULA: "https://flatcar.org/eula",
}

// communityGallery creates the community gallery "community" in the
// fixture's resource group.
func communityGallery(t *testing.T, f *fixture) *cloud.Gallery {
	t.Helper()
	info := community
	g, err := f.p.CreateGallery(ctx, cloud.Gallery{Name: "community", ResourceGroup: rgName, Community: &info})
	require.NoError(t, err)
	return g
}

func TestCommunityGalleryIsCreatedAsOne(t *testing.T) {
	f := newFixture(t)
	g := communityGallery(t, f)
	assert.Equal(t, community, *g.Community)
	assert.False(t, g.CommunityEnabled, "not public until shared")

	// The publisher details change; the prefix does not.
	info := community
	info.EULA = "https://kinvolk.io/legal/open-source/"
	g, err := f.p.CreateGallery(ctx, cloud.Gallery{Name: "community", ResourceGroup: rgName, Community: &info})
	require.NoError(t, err)
	assert.Equal(t, info, *g.Community)
	info.PublicNamePrefix = "flatcar4capi"
	_, err = f.p.CreateGallery(ctx, cloud.Gallery{Name: "community", ResourceGroup: rgName, Community: &info})
	cloudtest.RequireError(t, err, http.StatusConflict, cloud.CodePropertyChangeNotAllowed, "publicNamePrefix")

	// A PUT without a profile keeps it.
	g, err = f.p.CreateGallery(ctx, cloud.Gallery{Name: "community", ResourceGroup: rgName, Description: "d"})
	require.NoError(t, err)
	assert.Equal(t, "flatcar", g.Community.PublicNamePrefix)

	// A private gallery is not converted.
	_, err = f.p.CreateGallery(ctx, cloud.Gallery{Name: galName, ResourceGroup: rgName, Community: &info})
	cloudtest.RequireError(t, err, http.StatusConflict, cloud.CodePropertyChangeNotAllowed, "from 'Private' to 'Community'")
	got, err := f.p.GetGallery(ctx, rgName, galName)
	require.NoError(t, err)
	assert.Nil(t, got.Community)
}

func TestShareCommunity(t *testing.T) {
	f := newFixture(t)
	_, err := f.p.ShareCommunity(ctx, rgName, "missing")
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeResourceNotFound)
	_, err = f.p.ShareCommunity(ctx, rgName, galName)
	cloudtest.RequireError(t, err, http.StatusBadRequest, cloud.CodeInvalidParameter, "is not a community gallery")

	communityGallery(t, f)
	g, err := f.p.ShareCommunity(ctx, rgName, "community")
	require.NoError(t, err)
	assert.True(t, g.CommunityEnabled)
	assert.Equal(t, community, *g.Community)
	require.Len(t, g.PublicNames, 1)
	assert.Regexp(t, regexp.MustCompile(`^flatcar-[0-9a-f-]{36}$`), g.PublicName())

	// The GUID comes from Options.Rand: a provider replaying the same
	// source (the subscription GUID first) generates the same name.
	r := rand.New(rand.NewSource(1))
	_, err = uuid.NewRandomFromReader(r)
	require.NoError(t, err)
	want, err := uuid.NewRandomFromReader(r)
	require.NoError(t, err)
	assert.Equal(t, "flatcar-"+want.String(), g.PublicName())

	// Idempotent: enabling again keeps the name.
	again, err := f.p.ShareCommunity(ctx, rgName, "community")
	require.NoError(t, err)
	assert.Equal(t, g.PublicNames, again.PublicNames)

	// Definitions of a community gallery cannot be private-only.
	d := f.def
	d.Gallery, d.Name, d.SKU = "community", "tl", "tl"
	d.Features = map[string]string{"SecurityType": "TrustedLaunch"}
	_, err = f.p.CreateImageDefinition(ctx, d)
	cloudtest.RequireError(t, err, http.StatusBadRequest, cloud.CodeInvalidParameter, "TrustedLaunch")
	d.Features["SecurityType"] = "TrustedLaunchSupported"
	_, err = f.p.CreateImageDefinition(ctx, d)
	require.NoError(t, err)
}

func TestShareCommunityRefusesPrivateOnlySecurityType(t *testing.T) {
	f := newFixture(t)
	communityGallery(t, f)
	d := f.def
	d.Gallery, d.Name, d.SKU = "community", "cvm", "cvm"
	d.Features = map[string]string{"SecurityType": "ConfidentialVM"}
	_, err := f.p.CreateImageDefinition(ctx, d)
	require.NoError(t, err, "a community gallery not yet public accepts ConfidentialVM")
	_, err = f.p.ShareCommunity(ctx, rgName, "community")
	cloudtest.RequireError(t, err, http.StatusBadRequest, cloud.CodeInvalidParameter, "'cvm'", "ConfidentialVM")
	g, err := f.p.GetGallery(ctx, rgName, "community")
	require.NoError(t, err)
	assert.False(t, g.CommunityEnabled)
	assert.Empty(t, g.PublicNames)
}

func TestImageDefinitions(t *testing.T) {
	f := newFixture(t)
	p := f.p

	d := f.def
	d.ResourceGroup = "nope"
	_, err := p.CreateImageDefinition(ctx, d)
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeResourceGroupNotFound)
	d = f.def
	d.Gallery = "nope"
	_, err = p.CreateImageDefinition(ctx, d)
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeParentResourceNotFound, "'nope'")
	_, err = p.GetImageDefinition(ctx, rgName, galName, "nope")
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeResourceNotFound)
	_, err = p.ListImageDefinitions(ctx, rgName, "nope")
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeParentResourceNotFound)

	got, err := p.GetImageDefinition(ctx, rgName, galName, defName)
	require.NoError(t, err)
	assert.Equal(t, "westeurope", got.Location, "a definition is in its gallery's region")
	assert.Equal(t, cloud.ImageDefinitionID(f.sub, rgName, galName, defName), got.ID)

	d = f.def
	d.Location = "eastus"
	_, err = p.CreateImageDefinition(ctx, d)
	cloudtest.RequireError(t, err, http.StatusBadRequest, cloud.CodeInvalidParameter, "gallery's region")

	// Mutable fields update.
	eol := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	d = f.def
	d.Publisher = "KINVOLK" // case-insensitive: not a change
	d.Description, d.EndOfLife, d.Tags = "Flatcar stable", &eol, cloud.Tags{"channel": "stable"}
	d.Features = map[string]string{"IsAcceleratedNetworkSupported": "True"}
	got, err = p.CreateImageDefinition(ctx, d)
	require.NoError(t, err)
	assert.Equal(t, "kinvolk", got.Publisher)
	assert.Equal(t, "Flatcar stable", got.Description)
	assert.Equal(t, eol, *got.EndOfLife)
	assert.Equal(t, d.Features, got.Features)
	assert.Equal(t, d.Tags, got.Tags)

	// Immutable fields: every change is named with old and new value.
	d = f.def
	d.OSType, d.HyperVGeneration, d.Offer = cloud.OSTypeWindows, cloud.HyperVGenV1, "beta"
	_, err = p.CreateImageDefinition(ctx, d)
	ce := cloudtest.RequireError(t, err, http.StatusConflict, cloud.CodePropertyChangeNotAllowed,
		"'osType'", "'Linux' -> 'Windows'", "'hyperVGeneration'", "'V2' -> 'V1'", "'identifier.offer'", "'stable' -> 'beta'")
	assert.NotContains(t, ce.Message, "osState")
	for _, change := range []func(*cloud.ImageDefinition){
		func(d *cloud.ImageDefinition) { d.OSState = cloud.OSStateSpecialized },
		func(d *cloud.ImageDefinition) { d.Publisher = "other" },
		func(d *cloud.ImageDefinition) { d.SKU = "other" },
		func(d *cloud.ImageDefinition) { d.Architecture = cloud.ArchArm64 },
	} {
		d := f.def
		change(&d)
		_, err = p.CreateImageDefinition(ctx, d)
		cloudtest.RequireError(t, err, http.StatusConflict, cloud.CodePropertyChangeNotAllowed)
	}

	// The (publisher, offer, sku) triple is unique within the gallery.
	d = f.def
	d.Name = "copy"
	d.SKU = "Flatcar-Stable"
	_, err = p.CreateImageDefinition(ctx, d)
	cloudtest.RequireError(t, err, http.StatusConflict, cloud.CodeConflict, "'"+defName+"'")
	d.SKU = "copy"
	_, err = p.CreateImageDefinition(ctx, d)
	require.NoError(t, err, "two of three may repeat")

	list, err := p.ListImageDefinitions(ctx, rgName, galName)
	require.NoError(t, err)
	require.Len(t, list, 2)
	assert.Equal(t, "copy", list[0].Name)

	require.NoError(t, p.DeleteImageDefinition(ctx, rgName, galName, "copy"))
	err = p.DeleteImageDefinition(ctx, rgName, galName, "copy")
	cloudtest.RequireError(t, err, http.StatusNotFound, cloud.CodeResourceNotFound)

	_, err = p.CreateImageVersion(ctx, f.version("1.0.0"))
	require.NoError(t, err)
	err = p.DeleteImageDefinition(ctx, rgName, galName, defName)
	cloudtest.RequireError(t, err, http.StatusConflict, cloud.CodeConflict, "version")
	require.NoError(t, p.DeleteImageVersion(ctx, rgName, galName, defName, "1.0.0"))
	require.NoError(t, p.DeleteImageDefinition(ctx, rgName, galName, defName))
}

func TestImageDefinitionDefaults(t *testing.T) {
	f := newFixture(t)
	d := f.def
	d.Name, d.SKU, d.HyperVGeneration, d.Architecture = "old", "old", "", ""
	got, err := f.p.CreateImageDefinition(ctx, d)
	require.NoError(t, err)
	assert.Equal(t, cloud.HyperVGenV1, got.HyperVGeneration)
	assert.Equal(t, cloud.ArchX64, got.Architecture)
}
