package builtins

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/ensure"
	"github.com/imgflow/imgflow/internal/redact"
)

var (
	kindRG         = KindOneOf(KindStruct("resource_group"), KindString)
	kindGallery    = KindStruct("gallery")
	kindCommunity  = KindStruct("community_profile")
	kindDefinition = KindStruct("image_definition")
	kindVersion    = KindStruct("image_version")
	kindSource     = KindOneOf(KindStruct("managed_image", "image_version", "vhd"), KindString)
)

func registerGallery(r *Registry) {
	r.add("Galleries and images",
		&Spec{
			Name: "resource_group", Positional: 1, Effect: Changes,
			Params: []Param{
				{Name: "name", Kind: KindString, Doc: "resource group name"},
				{Name: "location", Kind: KindLocation, Doc: "region, e.g. `westeurope` (ARM's spellings such as `West Europe` become that name)"},
				{Name: "tags", Kind: KindStringDict, Default: "{}", Doc: "tags added when created"},
				{Name: "subscription_id", Kind: KindString, Default: "None", Doc: "the subscription (a GUID) of the tenant to make it in; default: the target's"},
			},
			Returns: "struct(id, name, location, subscription_id)",
			Doc:     "Ensures a resource group exists (created when missing; an existing one in another location is an error). With `subscription_id`, in that subscription of the target's tenant, reached with the target's credential: galleries made in the group are there too.",
			Example: `rg = resource_group("flatcar-image-gallery-staging", location = "westeurope")`,
			Impl:    resourceGroupImpl,
		},
		&Spec{
			Name: "gallery", Positional: 1, Effect: Changes,
			Params: []Param{
				{Name: "name", Kind: KindString, Doc: "gallery name: letters, digits, `_` and `.` (no `-`), ≤80"},
				{Name: "resource_group", Kind: kindRG, Doc: "the resource_group() or its name"},
				{Name: "location", Kind: KindLocation, Default: "None", Doc: "region; default: the resource group's"},
				{Name: "description", Kind: KindString, Default: `""`, Doc: "description"},
				{Name: "tags", Kind: KindStringDict, Default: "{}", Doc: "tags added when created"},
				{Name: "community", Kind: kindCommunity, Default: "None", Doc: "a community_profile(): create a community gallery, which share_community() can make public"},
				{Name: "subscription_id", Kind: KindString, Default: "None", Doc: "the gallery's subscription (a GUID) when it is not the target's, e.g. AgentBaker's GALLERY_SUBSCRIPTION_ID; default: the resource_group()'s, else the target's. Its definitions and versions are made there; their sources, test VMs and exports may be in the target's"},
			},
			Returns: "struct(id, name, resource_group, location, description, community, public_name, subscription_id)",
			Doc: "Ensures an Azure Compute Gallery exists. Gallery names are unique per subscription. " +
				"With `community`, the gallery is created as a community gallery (Azure cannot convert an existing private gallery into one, so a private gallery of that name is an error); " +
				"on a rerun its publisher URI, e-mail and EULA are updated, its prefix cannot change. " +
				"`community` is the profile, or None for a private gallery; `public_name` is None until share_community().",
			Example: `g = gallery("flatcar", resource_group = rg, community = community_profile(prefix = "flatcar", publisher_uri = "https://www.flatcar.org/", publisher_email = "infra@flatcar-linux.org", eula = "https://kinvolk.io/legal/open-source/"))`,
			Impl:    galleryImpl,
		},
		&Spec{
			Name: "community_profile", Effect: Pure,
			Params: []Param{
				{Name: "prefix", Kind: KindString, Doc: "public name prefix: 5–16 letters and digits (no `-`)"},
				{Name: "publisher_uri", Kind: KindString, Doc: "publisher web site, http(s) (public)"},
				{Name: "publisher_email", Kind: KindString, Doc: "publisher support e-mail (public)"},
				{Name: "eula", Kind: KindString, Doc: "end-user license agreement URL, http(s) (public)"},
			},
			Returns: "struct(prefix, publisher_uri, publisher_email, eula)",
			Doc:     "The public information of a community gallery, for gallery(…, community = …). Every field is required, checked here, and visible to everyone once the gallery is shared.",
			Example: `profile = community_profile(prefix = "flatcar", publisher_uri = "https://www.flatcar.org/", publisher_email = "infra@flatcar-linux.org", eula = "https://kinvolk.io/legal/open-source/")`,
			Impl:    communityProfileImpl,
		},
		&Spec{
			Name: "share_community", Positional: 1, Effect: Changes,
			Params: []Param{
				{Name: "gallery", Kind: kindGallery, Doc: "a gallery() created with `community = community_profile(…)`"},
			},
			Returns: "the gallery, with public_name set",
			Doc: "Makes a community gallery public (EnableCommunity), so anyone can use its images. The gallery must have been created as a community gallery: " +
				"a private one is refused before anything changes, because Azure cannot convert it. The platform generates the public name `<prefix>-<guid>`; " +
				"it is an output, never computed, and cannot be recovered if the gallery is deleted. Idempotent. Needs the Owner or Compute Gallery Sharing Admin role on the gallery.",
			Example: `g = share_community(gallery("flatcar", resource_group = rg, community = profile))`,
			Impl:    shareCommunityImpl,
			Removed: removedShareParams(),
		},
		&Spec{
			Name: "image_definition", Positional: 1, Effect: Changes,
			Params: []Param{
				{Name: "gallery", Kind: kindGallery, Doc: "the gallery()"},
				{Name: "name", Kind: KindString, Doc: "definition name: letters, digits, `_`, `-`, `.`; ≤80"},
				{Name: "publisher", Kind: KindString, Doc: "publisher (≤128); (publisher, offer, sku) is unique per gallery"},
				{Name: "offer", Kind: KindString, Doc: "offer (≤64)"},
				{Name: "sku", Kind: KindString, Doc: "sku (≤64)"},
				{Name: "os_type", Kind: KindString, Default: `"Linux"`, Doc: "Linux or Windows"},
				{Name: "os_state", Kind: KindString, Default: `"Generalized"`, Doc: "Generalized or Specialized"},
				{Name: "hyper_v_generation", Kind: KindString, Default: `"V2"`, Doc: "V1 or V2 (Arm64 needs V2)"},
				{Name: "architecture", Kind: KindString, Default: `"x64"`, Doc: "x64 or Arm64"},
				{Name: "features", Kind: KindStringDict, Default: "{}", Doc: "image features, e.g. `{\"SecurityType\": \"TrustedLaunchSupported\"}`"},
				{Name: "description", Kind: KindString, Default: `""`, Doc: "description"},
				{Name: "end_of_life", Kind: KindString, Default: "None", Doc: "end-of-life date, `yyyy-mm-dd` or RFC 3339, in the future"},
				{Name: "tags", Kind: KindStringDict, Default: "{}", Doc: "tags added when created (e.g. the template source's commit)"},
			},
			Returns: "struct(id, name, gallery, resource_group, location, publisher, offer, sku, os_type, os_state, hyper_v_generation, architecture, features)",
			Doc:     "Ensures a gallery image definition exists. Immutable fields (os_type, os_state, hyper_v_generation, architecture, publisher, offer, sku) that differ from an existing definition are an error; description, end of life and features are updated.",
			Example: `d = image_definition(g, name = "flatcar-stable-amd64", publisher = "flatcar", offer = "stable", sku = "flatcar-stable-amd64")`,
			Impl:    imageDefinitionImpl,
		},
		&Spec{
			Name: "image_version", Positional: 1, Effect: Changes,
			Params: []Param{
				{Name: "definition", Kind: kindDefinition, Doc: "the image_definition()"},
				{Name: "version", Kind: KindString, Doc: "`Major.Minor.Patch`, each part ≤ 2147483647"},
				{Name: "source", Kind: kindSource, Doc: "a managed_image(), another image_version(), a vhd(), or an ARM id of an image or version"},
				{Name: "regions", Kind: KindLocationList, Default: "None", Doc: "target regions; default: the gallery's region, which is always included"},
				{Name: "replica_count", Kind: KindInt, Default: "1", Doc: "replicas per region (1–100)"},
				{Name: "storage_account_type", Kind: KindString, Default: `"Standard_LRS"`, Doc: "Standard_LRS, Standard_ZRS or Premium_LRS"},
				{Name: "exclude_from_latest", Kind: KindBool, Default: "False", Doc: "keep `latest` from resolving to this version"},
				{Name: "end_of_life", Kind: KindString, Default: "None", Doc: "end-of-life date in the future"},
				{Name: "tags", Kind: KindStringDict, Default: "{}", Doc: "tags added when created"},
				{Name: "timeout", Kind: KindDuration, Default: `"6h"`, Doc: "how long to wait for every region to be Completed"},
			},
			Returns: "struct(id, name, definition, location, regions, exclude_from_latest, source, community_id)",
			Doc:     "Ensures a gallery image version exists, made from `source` and replicated to `regions`, and waits until every region reports Completed (failing with the regions that are not). An existing version from another source is an error; its regions and exclude_from_latest are brought to what the workflow asks. `community_id` is the `/CommunityGalleries/…` id when the gallery is shared.",
			Example: `v = image_version(d, version = "4152.2.3", source = vhd(blob_url, storage_account = sa))`,
			Impl:    imageVersionImpl,
		},
		&Spec{
			Name: "replicate", Positional: 1, Effect: Changes,
			Params: []Param{
				{Name: "version", Kind: kindVersion, Doc: "the image_version()"},
				{Name: "regions", Kind: kindRegionTargets, Doc: "the complete target list: region names, or a dict of region name to its replica count (`{\"westus2\": 2}`, AgentBaker's REPLICATIONS=region=count); the version's own region is always kept"},
				{Name: "replica_count", Kind: KindInt, Default: "None", Doc: "replicas per region not given a count in `regions`; default: unchanged"},
				{Name: "storage_account_type", Kind: KindString, Default: "None", Doc: "storage type per region; default: unchanged"},
				{Name: "wait", Kind: KindBool, Default: "True", Doc: "wait until every region reports Completed"},
				{Name: "timeout", Kind: KindDuration, Default: `"6h"`, Doc: "how long to wait"},
			},
			Returns: "struct(version, regions = [struct(name, state, progress)])",
			Doc:     "Sets a version's target regions in one update and, with `wait`, polls per-region replication until every region is Completed, failing with the regions that are not.",
			Example: `replicate(v, regions = regions(exclude = FLATCAR_REGION_BLACKLIST))`,
			Impl:    replicateImpl,
		},
		&Spec{
			Name: "regions", Effect: Reads,
			Params:  []Param{{Name: "exclude", Kind: KindLocationList, Default: "[]", Doc: "region names to leave out"}},
			Returns: "sorted list of region names",
			Doc:     "Lists the subscription's physical regions where it can create gallery image versions (logical geographies such as `europe`, and regions the Microsoft.Compute provider does not offer image versions in, dropped), sorted, minus `exclude`.",
			Example: `targets = regions(exclude = ["polandcentral", "eastus2euap"])`,
			Impl:    regionsImpl,
		},
	)
}

// standardTags marks what imgflow creates so leaked resources can be found.
func (c *Call) standardTags(user map[string]string) cloud.Tags {
	i := c.Run.Info
	tags := cloud.Tags{"createdBy": "imgflow", "imgflowRun": i.ID, "createdAt": i.Time.UTC().Format("2006-01-02T15:04:05Z")}
	// Provenance: which imgflow, workflow and commit made it.
	for k, v := range map[string]string{"imgflowVersion": i.Version, "imgflowWorkflow": i.Workflow, "imgflowWorkflowCommit": i.WorkflowCommit} {
		if v != "" {
			tags[k] = v
		}
	}
	for k, v := range user {
		tags[k] = v
	}
	return tags
}

func resourceGroupImpl(c *Call) (starlark.Value, error) {
	want := cloud.ResourceGroup{Name: c.String("name", ""), Location: c.String("location", ""), Tags: c.standardTags(c.StringMap("tags"))}
	p, err := c.subscriptionArg("resource group "+want.Name, "")
	if err != nil {
		return nil, err
	}
	rg, outcome, err := ensure.EnsureResourceGroup(c.Ctx(), p, want)
	if err != nil {
		return nil, fmt.Errorf("resource group %s: %w", want.Name, err)
	}
	c.Report(outcome, rg.Name+" in "+rg.Location+c.inOther(p))
	return makeStruct("resource_group", fields{"id": rg.ID, "name": rg.Name, "location": rg.Location, "subscription_id": p.SubscriptionID()}), nil
}

// subscriptionArg is the provider of the subscription_id argument (a
// GUID, checked before any cloud call), else of inherited (a parent's
// subscription, "" for the target's). A subscription_id that contradicts
// the parent's is an error: ARM keeps children in their parent's
// subscription.
func (c *Call) subscriptionArg(what, inherited string) (cloud.Provider, error) {
	sub := inherited
	if c.Has("subscription_id") {
		given := c.String("subscription_id", "")
		if err := cloud.ValidateSubscriptionID(given); err != nil {
			return nil, fmt.Errorf("%s: subscription_id: %w", what, err)
		}
		if inherited != "" && !cloud.SameSubscription(given, inherited) {
			return nil, fmt.Errorf("%s: subscription_id %s, but its resource group is in subscription %s: make the group there, resource_group(…, subscription_id = %q), or drop subscription_id", what, given, inherited, given)
		}
		sub = given
	}
	p, err := c.Run.ProviderFor(c.Ctx(), sub)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return p, nil
}

// rgArg reads a resource_group() or name argument: its name, location
// and subscription ("" for a name: the target's, unless subscription_id).
func (c *Call) rgArg(name string) (rgName, location, sub string) {
	if s := c.Struct(name); s != nil {
		return attrString(s, "name"), attrString(s, "location"), subscriptionOf(attrString(s, "id"))
	}
	return c.String(name, ""), "", ""
}

func galleryImpl(c *Call) (starlark.Value, error) {
	rg, rgLocation, rgSub := c.rgArg("resource_group")
	p, err := c.subscriptionArg("gallery "+c.String("name", ""), rgSub)
	if err != nil {
		return nil, err
	}
	want := cloud.Gallery{
		Name: c.String("name", ""), ResourceGroup: rg, Location: c.String("location", rgLocation),
		Description: c.String("description", ""), Tags: c.standardTags(c.StringMap("tags")),
	}
	if p := c.Struct("community"); p != nil {
		info := communityInfoOf(p)
		want.Community = &info
	}
	if want.Location == "" {
		return nil, fmt.Errorf("gallery %s: location is required when resource_group is a name: pass location=… or resource_group=resource_group(…)", want.Name)
	}
	g, outcome, err := ensure.EnsureGallery(c.Ctx(), p, want)
	if err != nil {
		return nil, fmt.Errorf("gallery %s: %w", want.Name, err)
	}
	detail := g.Name + " in " + g.Location
	if g.Community != nil {
		detail += " as a community gallery (prefix " + g.Community.PublicNamePrefix + ")"
	}
	c.Report(outcome, detail+c.inOther(p))
	return galleryValue(g), nil
}

func galleryValue(g *cloud.Gallery) *starlarkstruct.Struct {
	var public, community any
	if g.PublicName() != "" {
		public = g.PublicName()
	}
	if g.Community != nil {
		community = communityProfileValue(*g.Community)
	}
	return makeStruct("gallery", fields{
		"id": g.ID, "name": g.Name, "resource_group": g.ResourceGroup, "location": g.Location,
		"description": g.Description, "community": community, "public_name": public,
		"subscription_id": subscriptionOf(g.ID),
	})
}

func communityProfileImpl(c *Call) (starlark.Value, error) {
	info := cloud.CommunityInfo{
		PublicNamePrefix: c.String("prefix", ""), PublisherURI: c.String("publisher_uri", ""),
		PublisherContact: c.String("publisher_email", ""), EULA: c.String("eula", ""),
	}
	if err := cloud.ValidateCommunityInfo(info); err != nil {
		return nil, fmt.Errorf("community_profile: %w", err)
	}
	return communityProfileValue(info), nil
}

func communityProfileValue(info cloud.CommunityInfo) *starlarkstruct.Struct {
	return makeStruct("community_profile", fields{
		"prefix": info.PublicNamePrefix, "publisher_uri": info.PublisherURI,
		"publisher_email": info.PublisherContact, "eula": info.EULA,
	})
}

func communityInfoOf(p *starlarkstruct.Struct) cloud.CommunityInfo {
	return cloud.CommunityInfo{
		PublicNamePrefix: attrString(p, "prefix"), PublisherURI: attrString(p, "publisher_uri"),
		PublisherContact: attrString(p, "publisher_email"), EULA: attrString(p, "eula"),
	}
}

// removedShareParams are share_community()'s former profile parameters:
// the profile now belongs to the gallery from its creation.
func removedShareParams() map[string]string {
	const fix = "Azure cannot convert a private gallery to a community gallery, so the profile is given when the gallery is created: " +
		"gallery(…, community = community_profile(prefix = …, publisher_uri = …, publisher_email = …, eula = …)), then share_community(gallery)"
	return map[string]string{"prefix": fix, "publisher_uri": fix, "publisher_email": fix, "eula": fix}
}

func shareCommunityImpl(c *Call) (starlark.Value, error) {
	gs := c.Struct("gallery")
	name := attrString(gs, "name")
	p, err := c.providerOfID(attrString(gs, "id"))
	if err != nil {
		return nil, fmt.Errorf("share gallery %s with the community: %w", name, err)
	}
	g, outcome, err := ensure.EnsureCommunity(c.Ctx(), p, attrString(gs, "resource_group"), name)
	if err != nil {
		return nil, fmt.Errorf("share gallery %s with the community: %w", name, err)
	}
	c.Report(outcome, g.Name+" as "+g.PublicName()+c.inOther(p))
	return galleryValue(g), nil
}

func imageDefinitionImpl(c *Call) (starlark.Value, error) {
	gs := c.Struct("gallery")
	want := cloud.ImageDefinition{
		Name: c.String("name", ""), ResourceGroup: attrString(gs, "resource_group"), Gallery: attrString(gs, "name"),
		Publisher: c.String("publisher", ""), Offer: c.String("offer", ""), SKU: c.String("sku", ""),
		OSType: c.String("os_type", cloud.OSTypeLinux), OSState: c.String("os_state", cloud.OSStateGeneralized),
		HyperVGeneration: c.String("hyper_v_generation", cloud.HyperVGenV2), Architecture: c.String("architecture", cloud.ArchX64),
		Features: c.StringMap("features"), Description: c.String("description", ""), Tags: c.standardTags(c.StringMap("tags")),
	}
	if c.Has("end_of_life") {
		eol, err := cloud.ParseEndOfLife(c.String("end_of_life", ""), c.Run.Info.Time)
		if err != nil {
			return nil, fmt.Errorf("image definition %s: %w", want.Name, err)
		}
		want.EndOfLife = &eol
	}
	p, err := c.providerOfID(attrString(gs, "id"))
	if err != nil {
		return nil, fmt.Errorf("image definition %s: %w", want.Name, err)
	}
	d, outcome, err := ensure.EnsureImageDefinition(c.Ctx(), p, want, c.Run.Info.Time)
	if err != nil {
		return nil, fmt.Errorf("image definition %s: %w", want.Name, err)
	}
	c.Report(outcome, d.Gallery+"/"+d.Name+c.inOther(p))
	return makeStruct("image_definition", fields{
		"id": d.ID, "name": d.Name, "gallery": gs, "resource_group": d.ResourceGroup, "location": d.Location,
		"publisher": d.Publisher, "offer": d.Offer, "sku": d.SKU, "os_type": d.OSType, "os_state": d.OSState,
		"hyper_v_generation": d.HyperVGeneration, "architecture": d.Architecture, "features": mapOrEmpty(d.Features),
	}), nil
}

func mapOrEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// sourceArg turns the source argument into a cloud.ImageSource.
func (c *Call) sourceArg(name string) (cloud.ImageSource, error) {
	if s := c.Struct(name); s != nil {
		switch ctorOf(s) {
		case "managed_image":
			return cloud.ImageSource{Kind: cloud.SourceManagedImage, ID: attrString(s, "id")}, nil
		case "image_version":
			return cloud.ImageSource{Kind: cloud.SourceImageVersion, ID: attrString(s, "id")}, nil
		case "vhd":
			return cloud.ImageSource{Kind: cloud.SourceVHD, URI: attrString(s, "url"), StorageAccountID: attrString(s, "storage_account_id")}, nil
		}
	}
	id := c.String(name, "")
	rid, err := cloud.ParseResourceID(id)
	if err != nil {
		return cloud.ImageSource{}, fmt.Errorf("source: %w", err)
	}
	switch {
	case rid.Is("Microsoft.Compute", "images"):
		return cloud.ImageSource{Kind: cloud.SourceManagedImage, ID: id}, nil
	case rid.Is("Microsoft.Compute", "galleries", "images", "versions"):
		return cloud.ImageSource{Kind: cloud.SourceImageVersion, ID: id}, nil
	}
	return cloud.ImageSource{}, fmt.Errorf("source %q is neither a managed image nor a gallery image version id: pass managed_image(…), image_version(…) or vhd(…)", id)
}

// targetRegions builds the target list, the version's own region first.
func targetRegions(location string, names []string, replicas int, storage string) []cloud.TargetRegion {
	out := []cloud.TargetRegion{{Name: location, ReplicaCount: replicas, StorageAccountType: storage}}
	for _, n := range names {
		if !strings.EqualFold(n, location) {
			out = append(out, cloud.TargetRegion{Name: n, ReplicaCount: replicas, StorageAccountType: storage})
		}
	}
	return out
}

func imageVersionImpl(c *Call) (starlark.Value, error) {
	ds := c.Struct("definition")
	gs := attrStruct(ds, "gallery")
	name := c.String("version", "")
	src, err := c.sourceArg("source")
	if err != nil {
		return nil, fmt.Errorf("image version %s: %w", name, err)
	}
	replicas, err := c.Int("replica_count", 1)
	if err != nil {
		return nil, err
	}
	storage := c.String("storage_account_type", cloud.StorageStandardLRS)
	location := attrString(ds, "location")
	want := cloud.ImageVersion{
		Name: name, ResourceGroup: attrString(ds, "resource_group"), Gallery: attrString(gs, "name"), Definition: attrString(ds, "name"),
		Location: location, Source: src, ReplicaCount: replicas, StorageAccountType: storage,
		ExcludeFromLatest: c.Bool("exclude_from_latest", false), Tags: c.standardTags(c.StringMap("tags")),
	}
	if c.Has("regions") {
		want.TargetRegions = targetRegions(location, c.Strings("regions"), replicas, storage)
	}
	if c.Has("end_of_life") {
		eol, err := cloud.ParseEndOfLife(c.String("end_of_life", ""), c.Run.Info.Time)
		if err != nil {
			return nil, fmt.Errorf("image version %s: %w", name, err)
		}
		want.EndOfLife = &eol
	}
	// The version goes where its definition is; its source may be in
	// another subscription of the tenant (Azure reads it with the
	// caller's access).
	p, err := c.providerOfID(attrString(ds, "id"))
	if err != nil {
		return nil, fmt.Errorf("image version %s of %s: %w", name, want.Definition, err)
	}
	v, outcome, err := ensure.EnsureImageVersion(c.Ctx(), p, want, c.Run.Info.Time)
	if err != nil {
		return nil, fmt.Errorf("image version %s of %s: %w", name, want.Definition, err)
	}
	// Azure accepts a version before every region has its replica: a
	// version is only usable everywhere once each region is Completed.
	if v, err = ensure.WaitReplicated(c.Ctx(), p, v, c.Duration("timeout", 6*time.Hour), c.replicationPoll(), nil); err != nil {
		return nil, fmt.Errorf("image version %s of %s: %w", name, want.Definition, err)
	}
	c.Report(outcome, fmt.Sprintf("%s/%s/%s in %s%s", v.Gallery, v.Definition, v.Name, describeTargets(v.TargetRegions), c.inOther(p)))
	return versionValue(v, ds), nil
}

func versionValue(v *cloud.ImageVersion, ds *starlarkstruct.Struct) *starlarkstruct.Struct {
	var community any
	if gs := attrStruct(ds, "gallery"); gs != nil {
		if public := attrString(gs, "public_name"); public != "" {
			community = cloud.CommunityImageID(public, v.Definition, v.Name)
		}
	}
	src := v.Source.ID
	if v.Source.Kind == cloud.SourceVHD {
		src = redact.URL(v.Source.URI)
	}
	return makeStruct("image_version", fields{
		"id": v.ID, "name": v.Name, "definition": ds, "location": v.Location, "regions": v.RegionNames(),
		"exclude_from_latest": v.ExcludeFromLatest, "source": src, "community_id": community,
	})
}

func regionsImpl(c *Call) (starlark.Value, error) {
	locs, err := c.Run.Locations(c.Ctx())
	if err != nil {
		return nil, err
	}
	exclude := map[string]bool{}
	for _, e := range c.Strings("exclude") {
		if err := cloud.ValidateLocationName(e); err != nil {
			return nil, fmt.Errorf("regions: exclude: %w", err)
		}
		exclude[strings.ToLower(e)] = true
	}
	var names []string
	for _, l := range locs {
		if l.RegionType == cloud.RegionTypePhysical && !l.NoImageVersions && !exclude[strings.ToLower(l.Name)] {
			names = append(names, l.Name)
		}
	}
	sort.Strings(names)
	return FromGo(names), nil
}

func replicateImpl(c *Call) (starlark.Value, error) {
	vs := c.Struct("version")
	ds := attrStruct(vs, "definition")
	replicas, err := c.Int("replica_count", 0)
	if err != nil {
		return nil, err
	}
	names, counts, err := regionTargets(c.Value("regions"))
	if err != nil {
		return nil, err
	}
	req := ensure.ReplicateRequest{
		ResourceGroup: attrString(ds, "resource_group"), Gallery: attrString(attrStruct(ds, "gallery"), "name"),
		Definition: attrString(ds, "name"), Version: attrString(vs, "name"),
		Regions: names, ReplicaCount: replicas, StorageAccountType: c.String("storage_account_type", ""), RegionReplicas: counts,
	}
	p, err := c.providerOfID(attrString(vs, "id"))
	if err != nil {
		return nil, fmt.Errorf("replicate %s/%s: %w", req.Definition, req.Version, err)
	}
	v, outcome, err := ensure.Replicate(c.Ctx(), p, req)
	if err != nil {
		return nil, fmt.Errorf("replicate %s/%s: %w", req.Definition, req.Version, err)
	}
	if c.Bool("wait", true) {
		v, err = ensure.WaitReplicated(c.Ctx(), p, v, c.Duration("timeout", 6*time.Hour), c.replicationPoll(), nil)
		if err != nil {
			return nil, fmt.Errorf("replicate %s/%s: %w", req.Definition, req.Version, err)
		}
	}
	c.Report(outcome, fmt.Sprintf("%s/%s to %s%s", req.Definition, req.Version, describeTargets(v.TargetRegions), c.inOther(p)))
	statuses := make([]any, 0, len(v.Replication))
	for _, s := range v.Replication {
		statuses = append(statuses, makeStruct("region_status", fields{"name": s.Region, "state": s.State, "progress": s.Progress}))
	}
	return makeStruct("replication", fields{"version": versionValue(v, ds), "regions": statuses}), nil
}

// describeTargets says where a version is replicated and how many
// replicas each region holds: "3 regions, 2 replicas each", or each
// region's count when they differ ("3 regions: eastus 3, westus2 1, …").
func describeTargets(targets []cloud.TargetRegion) string {
	n := countOf(len(targets), "region", "regions")
	if len(targets) == 0 {
		return n
	}
	uniform := true
	for _, t := range targets[1:] {
		uniform = uniform && t.ReplicaCount == targets[0].ReplicaCount
	}
	if uniform {
		each := countOf(targets[0].ReplicaCount, "replica", "replicas")
		if len(targets) > 1 {
			each += " each"
		}
		return n + ", " + each
	}
	parts := make([]string, len(targets))
	for i, t := range targets {
		parts[i] = fmt.Sprintf("%s %d", t.Name, t.ReplicaCount)
	}
	return n + " (replicas: " + strings.Join(parts, ", ") + ")"
}

func countOf(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// kindRegionTargets is replicate()'s regions: a list of names, or a dict of
// name to replica count; the names are normalised (NormalizeLocation).
var kindRegionTargets Kind = regionTargetsKind{&simpleKind{"list of region names or dict of region name to replica count", func(v starlark.Value) bool {
	d, ok := v.(*starlark.Dict)
	if !ok {
		return isStringList(v)
	}
	for _, kv := range d.Items() {
		_, isName := kv[0].(starlark.String)
		_, isCount := kv[1].(starlark.Int)
		if !isName || !isCount {
			return false
		}
	}
	return true
}}}

type regionTargetsKind struct{ *simpleKind }

func (regionTargetsKind) Normalize(v starlark.Value) starlark.Value { return normalizeLocations(v) }

// regionTargets reads replicate()'s regions: the names in order and, for a
// dict, each region's replica count by lower-cased name.
func regionTargets(v starlark.Value) ([]string, map[string]int, error) {
	d, ok := v.(*starlark.Dict)
	if !ok {
		seq, _ := v.(starlark.Indexable)
		if seq == nil {
			return nil, nil, nil
		}
		names := make([]string, seq.Len())
		for i := range names {
			names[i] = string(seq.Index(i).(starlark.String))
		}
		return names, nil, nil
	}
	names := make([]string, 0, d.Len())
	counts := make(map[string]int, d.Len())
	for _, kv := range d.Items() {
		name := string(kv[0].(starlark.String))
		n, ok := kv[1].(starlark.Int).Int64()
		if !ok || n < 1 {
			return nil, nil, fmt.Errorf("replicate: regions[%q] = %s: a replica count is 1 to 100", name, kv[1])
		}
		if err := cloud.ValidateReplicaCount(int(n)); err != nil {
			return nil, nil, fmt.Errorf("replicate: regions[%q]: %w", name, err)
		}
		names = append(names, name)
		counts[strings.ToLower(name)] = int(n)
	}
	return names, counts, nil
}

// replicationPollInterval is how often replication status is read; Azure
// asks gallery clients not to poll faster.
const replicationPollInterval = 15 * time.Second

// replicationPoll is the run's RunInfo.ReplicationPoll, by default
// replicationPollInterval.
func (c *Call) replicationPoll() time.Duration {
	if d := c.Run.Info.ReplicationPoll; d > 0 {
		return d
	}
	return replicationPollInterval
}
