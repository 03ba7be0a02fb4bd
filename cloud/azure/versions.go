package azure

import (
	"context"
	"sort"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/azrules"
	"github.com/imgflow/imgflow/cloud/azure/internal/armconv"
	"github.com/imgflow/imgflow/cloud/ensure"
)

const gib = 1 << 30

func versionWhat(gallery, def, version string) string {
	return gallery + "/" + def + "/" + version
}

// GetImageVersion implements cloud.Provider, with the per-region
// replication status ($expand=ReplicationStatus).
func (p *Provider) GetImageVersion(ctx context.Context, rg, gallery, def, version string) (*cloud.ImageVersion, error) {
	id := cloud.ImageVersionID(p.sub, rg, gallery, def, version)
	res, err := p.versions.Get(ctx, rg, gallery, def, version,
		&armcompute.GalleryImageVersionsClientGetOptions{Expand: to(armcompute.ReplicationStatusTypesReplicationStatus)})
	if err != nil {
		return nil, opError("get image version", versionWhat(gallery, def, version), azErr(err, id))
	}
	return p.versionOut(ctx, &res.GalleryImageVersion, rg, gallery, def), nil
}

// ListImageVersions implements cloud.Provider, sorted by name.
func (p *Provider) ListImageVersions(ctx context.Context, rg, gallery, def string) ([]cloud.ImageVersion, error) {
	pager := p.versions.NewListByGalleryImagePager(rg, gallery, def, nil)
	var out []cloud.ImageVersion
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, opError("list image versions of definition", gallery+"/"+def,
				azErr(err, cloud.ImageDefinitionID(p.sub, rg, gallery, def)+"/versions"))
		}
		for _, v := range page.Value {
			if v != nil {
				out = append(out, *p.versionOut(ctx, v, rg, gallery, def))
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return strings.ToLower(out[i].Name) < strings.ToLower(out[j].Name) })
	return out, nil
}

// CreateImageVersion implements cloud.Provider: a PUT of the version with
// its source (a managed image or gallery version by id, or a VHD with its
// storage account) and full publishing profile. Azure ends that operation
// only once every target region replicated (hours), so it returns once the
// PUT is accepted and the version exists, in provisioningState Creating;
// ensure.WaitReplicated waits for the rest under the caller's timeout. A
// version already Failed is an error with the operation's reason.
func (p *Provider) CreateImageVersion(ctx context.Context, v cloud.ImageVersion) (*cloud.ImageVersion, error) {
	id := cloud.ImageVersionID(p.sub, v.ResourceGroup, v.Gallery, v.Definition, v.Name)
	what := versionWhat(v.Gallery, v.Definition, v.Name)
	loc := v.Location
	if loc == "" {
		d, err := p.GetImageDefinition(ctx, v.ResourceGroup, v.Gallery, v.Definition)
		if err != nil {
			if cloud.HasCode(err, cloud.CodeResourceNotFound) {
				err = azrules.ParentNotFound(id, v.Definition)
			}
			return nil, opError("create image version", what, err)
		}
		loc = d.Location
	}
	storage, err := armconv.VersionStorageProfile(v.Source)
	if err != nil {
		return nil, opError("create image version", what, azrules.InvalidParameter(id, "%v", err))
	}
	body := armcompute.GalleryImageVersion{
		Location: to(loc),
		Tags:     tagsIn(v.Tags),
		Properties: &armcompute.GalleryImageVersionProperties{
			StorageProfile:    storage,
			PublishingProfile: armconv.VersionPublishingProfile(v, true),
		},
	}
	poller, err := p.versions.BeginCreateOrUpdate(ctx, v.ResourceGroup, v.Gallery, v.Definition, v.Name, body, nil)
	if err != nil {
		return nil, opError("create image version", what, azErr(err, id))
	}
	return started(ctx, p, "create image version", v, poller)
}

// started returns the version whose PUT or PATCH poller was accepted: the
// operation ends with replication, which the caller waits for. A version
// already Failed is reported with the operation's error.
func started[T any](ctx context.Context, p *Provider, op string, v cloud.ImageVersion, poller *runtime.Poller[T]) (*cloud.ImageVersion, error) {
	what := versionWhat(v.Gallery, v.Definition, v.Name)
	handOff(p, op+" "+what, poller)
	got, err := p.GetImageVersion(ctx, v.ResourceGroup, v.Gallery, v.Definition, v.Name)
	if err != nil || !got.Failed() {
		return got, err
	}
	// The operation's status says why; the version only that it failed.
	var cause error
	if !poller.Done() {
		_, cause = poller.Poll(ctx)
	}
	if cause == nil && poller.Done() {
		_, cause = poller.Result(ctx)
	}
	if cause != nil {
		cause = azErr(cause, got.ID)
	}
	return nil, opError(op, what, ensure.FailedVersionError(got, cause))
}

// UpdateImageVersion implements cloud.Provider with one PATCH carrying the
// FULL target region list (regions left out would be removed), the
// replica count, exclude-from-latest, end of life and tags. Like
// CreateImageVersion it returns once the PATCH is accepted: replication
// to new regions goes on. The storage profile is sent empty, as Azure's
// own example does: the source cannot change.
func (p *Provider) UpdateImageVersion(ctx context.Context, v cloud.ImageVersion) (*cloud.ImageVersion, error) {
	id := cloud.ImageVersionID(p.sub, v.ResourceGroup, v.Gallery, v.Definition, v.Name)
	what := versionWhat(v.Gallery, v.Definition, v.Name)
	body := armcompute.GalleryImageVersionUpdate{
		Tags: tagsIn(v.Tags),
		Properties: &armcompute.GalleryImageVersionProperties{
			StorageProfile:    &armcompute.GalleryImageVersionStorageProfile{},
			PublishingProfile: armconv.VersionPublishingProfile(v, false),
		},
	}
	poller, err := p.versions.BeginUpdate(ctx, v.ResourceGroup, v.Gallery, v.Definition, v.Name, body, nil)
	if err != nil {
		return nil, opError("update image version", what, azErr(err, id))
	}
	return started(ctx, p, "update image version", v, poller)
}

// DeleteImageVersion implements cloud.Provider.
func (p *Provider) DeleteImageVersion(ctx context.Context, rg, gallery, def, version string) error {
	id := cloud.ImageVersionID(p.sub, rg, gallery, def, version)
	what := versionWhat(gallery, def, version)
	err := waitDelete(ctx, p, "delete image version "+what, id, func(ctx context.Context) (*runtime.Poller[armcompute.GalleryImageVersionsClientDeleteResponse], error) {
		return p.versions.BeginDelete(ctx, rg, gallery, def, version, nil)
	})
	return opError("delete image version", what, azErr(err, id))
}

func (p *Provider) versionOut(ctx context.Context, g *armcompute.GalleryImageVersion, rg, gallery, def string) *cloud.ImageVersion {
	out := armconv.ImageVersionOf(g, rg, gallery, def, func(name string) string { return p.regionName(ctx, name) })
	return &out
}
