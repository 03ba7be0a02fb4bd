package localsim

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/imgflow/imgflow/cloud"
	"github.com/imgflow/imgflow/cloud/ensure"
	"github.com/imgflow/imgflow/cloud/guest"
	"github.com/imgflow/imgflow/internal/redact"
	"github.com/imgflow/imgflow/packer"
	"github.com/imgflow/imgflow/vhd"
)

// simulation is one azure-arm build.
type simulation struct {
	b   *Builder
	cfg *azureConfig
	id  uuid.UUID
	// guest is the OS disk's content record (guest.EncodeGuestContent).
	guest []byte

	// Learnt by check.
	sourceSize int64  // bytes of the source image, 0 when unknown
	sourceGen  string // Hyper-V generation of a gallery source
	sourceArch string // architecture of a gallery source
	destGen    string // Hyper-V generation of the destination definition
	// dest and src are the providers of the gallery destination's and
	// the gallery source's subscriptions (nil: the build's).
	dest, src cloud.Provider
	location  string
	account   *cloud.StorageAccount // VHD mode
}

func (s *simulation) p() cloud.Provider { return s.b.Provider }

// destP is the provider of the gallery destination's subscription.
func (s *simulation) destP() cloud.Provider {
	if s.dest != nil {
		return s.dest
	}
	return s.p()
}

// srcP is the provider of the gallery source's subscription.
func (s *simulation) srcP() cloud.Provider {
	if s.src != nil {
		return s.src
	}
	return s.p()
}

// galleryProvider is the provider of a gallery reference's subscription:
// the build's, or another of the tenant when Builder.Subscriptions
// reaches it (packer publishes across subscriptions with one credential).
func (s *simulation) galleryProvider(ctx context.Context, field string, r *sigRef) (cloud.Provider, error) {
	sub := subOf(r)
	if sub == "" || strings.EqualFold(sub, s.p().SubscriptionID()) {
		return nil, nil
	}
	if s.b.Subscriptions == nil {
		return nil, fmt.Errorf("build %s: %s %s is not the target's subscription %s", s.cfg.build, field, sub, s.p().SubscriptionID())
	}
	p, err := s.b.Subscriptions(ctx, sub)
	if err != nil {
		return nil, fmt.Errorf("build %s: %s %s: %w", s.cfg.build, field, sub, err)
	}
	return p, nil
}

// check verifies, before anything is created, what Azure would refuse: the
// subscription, a missing source, a missing capture account, resource
// group, gallery or definition.
func (s *simulation) check(ctx context.Context) error {
	c := s.cfg
	sub := s.p().SubscriptionID()
	if c.subscription != "" && !strings.EqualFold(c.subscription, sub) {
		return fmt.Errorf("build %s: subscription_id %s is not the target's subscription %s", c.build, c.subscription, sub)
	}
	var err error
	if s.src, err = s.galleryProvider(ctx, "shared_image_gallery.subscription", c.sigSource); err != nil {
		return err
	}
	if s.dest, err = s.galleryProvider(ctx, "shared_image_gallery_destination.subscription", c.sigDest); err != nil {
		return err
	}
	switch {
	case c.sigSource != nil:
		def, size, err := s.gallerySource(ctx)
		if err != nil {
			return err
		}
		s.sourceGen, s.sourceArch, s.sourceSize = def.HyperVGeneration, def.Architecture, size
	case c.imageURL != "":
		ref, err := cloud.ParseBlobURL(c.imageURL)
		if err != nil {
			return fmt.Errorf("build %s: image_url: %w", c.build, err)
		}
		blob, err := s.p().GetBlob(ctx, ref)
		if err != nil {
			return fmt.Errorf("build %s: source image_url %s: %w", c.build, redact.URL(c.imageURL), err)
		}
		if blob.Type != "" && blob.Type != cloud.BlobTypePage {
			return fmt.Errorf("build %s: source image_url %s is a %s; a VHD source must be a page blob", c.build, ref.URL(), blob.Type)
		}
		s.sourceSize = blob.Size - vhd.FooterSize
	}
	if c.vhdMode() {
		sa, err := s.p().GetStorageAccount(ctx, c.resourceGroup, c.storageAccount)
		if err != nil {
			return fmt.Errorf("build %s: storage_account %s in resource group %s: %w (azure-arm captures the VHD there: create it first, e.g. with storage_account())",
				c.build, c.storageAccount, c.resourceGroup, err)
		}
		if c.location != "" && normLocation(c.location) != normLocation(sa.Location) {
			return fmt.Errorf("build %s: the storage account is located in %s, but the build will take place in %s: the VM must be in the same location as the storage account (packer 1.6.6's rule)",
				c.build, sa.Location, c.location)
		}
		s.account, s.location = sa, sa.Location
		return nil
	}
	var rg *cloud.ResourceGroup
	if c.managedMode() {
		var err error
		if rg, err = s.p().GetResourceGroup(ctx, c.imageResourceGroup); err != nil {
			return fmt.Errorf("build %s: managed_image_resource_group_name %s: %w (packer needs it to exist: create it with resource_group())", c.build, c.imageResourceGroup, err)
		}
	}
	s.location = c.location
	if c.buildResourceGroup != "" {
		brg, err := s.p().GetResourceGroup(ctx, c.buildResourceGroup)
		if err != nil {
			return fmt.Errorf("build %s: build_resource_group_name %s: %w (packer builds in it: it must exist)", c.build, c.buildResourceGroup, err)
		}
		if s.location == "" {
			s.location = brg.Location
		}
	}
	if s.location == "" && rg != nil {
		s.location = rg.Location
	}
	var dest *cloud.ImageDefinition
	if d := c.sigDest; d != nil {
		g, err := s.destP().GetGallery(ctx, d.resourceGroup, d.gallery)
		if err != nil {
			return fmt.Errorf("build %s: shared_image_gallery_destination gallery %s: %w (create it with gallery() before packer_build)", c.build, d.gallery, err)
		}
		if dest, err = s.destP().GetImageDefinition(ctx, d.resourceGroup, d.gallery, d.image); err != nil {
			return fmt.Errorf("build %s: shared_image_gallery_destination image %s: %w (create it with image_definition() before packer_build)", c.build, d.image, err)
		}
		s.destGen = dest.HyperVGeneration
		if s.location == "" {
			s.location = g.Location
		}
	}
	if c.skipCreateImage {
		return nil // nothing is captured: Azure has nothing to refuse
	}
	arch := c.architecture()
	if s.sourceArch != "" {
		arch = s.sourceArch
	}
	capture := cloud.Capture{Architecture: arch, SecurityType: c.securityType, ManagedImage: c.managedMode(), Specialized: c.specialized}
	if err := cloud.ValidateCapture(capture, dest); err != nil {
		return fmt.Errorf("build %s: Azure would refuse this build after provisioning the VM: %w", c.build, err)
	}
	return nil
}

// normLocation spells a location the way packer compares them.
func normLocation(l string) string { return strings.ToLower(strings.ReplaceAll(l, " ", "")) }

func subOf(r *sigRef) string {
	if r == nil {
		return ""
	}
	return r.subscription
}

// gallerySource checks the shared_image_gallery source and returns its
// definition and its size. "latest" needs only the definition: the
// Provider cannot list versions.
func (s *simulation) gallerySource(ctx context.Context) (*cloud.ImageDefinition, int64, error) {
	src := s.cfg.sigSource
	def, err := s.srcP().GetImageDefinition(ctx, src.resourceGroup, src.gallery, src.image)
	if err != nil {
		return nil, 0, fmt.Errorf("build %s: source shared_image_gallery %s: %w", s.cfg.build, src, err)
	}
	if strings.EqualFold(src.version, "latest") {
		return def, 0, nil
	}
	v, err := s.srcP().GetImageVersion(ctx, src.resourceGroup, src.gallery, src.image, src.version)
	if err != nil {
		return nil, 0, fmt.Errorf("build %s: source shared_image_gallery %s: %w", s.cfg.build, src, err)
	}
	return def, v.SizeBytes, nil
}

// diskSize is the OS disk's virtual size in bytes.
func (s *simulation) diskSize() int64 {
	switch {
	case s.cfg.osDiskGB > 0:
		return s.cfg.osDiskGB << 30
	case s.sourceSize > 0 && s.sourceSize%(1<<20) == 0:
		return s.sourceSize
	}
	return DefaultOSDiskGB << 30
}

// run creates what the build produces, or finds it made by an earlier run.
func (s *simulation) run(ctx context.Context) (packer.Artifact, cloud.Outcome, error) {
	switch {
	case s.cfg.vhdMode():
		return s.runVHD(ctx)
	case s.cfg.galleryMode():
		return s.runGallery(ctx)
	}
	return s.runManaged(ctx)
}

func (s *simulation) runVHD(ctx context.Context) (packer.Artifact, cloud.Outcome, error) {
	c := s.cfg
	ref := cloud.BlobRef{
		Account: s.account.Name, Container: captureContainer, Endpoint: endpointOf(s.account),
		Name: fmt.Sprintf("Microsoft.Compute/Images/%s/%s-osDisk.%s.vhd", c.captureContainer, c.capturePrefix, s.id),
	}
	outcome, err := s.ensureOSDisk(ctx, s.p(), ref)
	if err != nil {
		return packer.Artifact{}, "", err
	}
	url := ref.URL()
	str := strings.Join([]string{
		packer.AzureARMBuilderID + ":", "",
		"OSType: " + c.osType,
		"StorageAccountLocation: " + s.location,
		"OSDiskUri: " + url,
		"OSDiskUriReadOnlySas: " + url,
		"TemplateUri: ",
		"TemplateUriReadOnlySas: ",
		"",
	}, "\n")
	art, err := artifact(url, str)
	return art, outcome, err
}

func (s *simulation) runManaged(ctx context.Context) (packer.Artifact, cloud.Outcome, error) {
	c := s.cfg
	p := s.p()
	sub := p.SubscriptionID()
	rg := c.imageResourceGroup
	account := StagingAccount(sub, rg)
	ref := cloud.BlobRef{Account: account, Container: captureContainer,
		Name: fmt.Sprintf("Microsoft.Compute/Images/packer/%s-osDisk.%s.vhd", c.imageName, s.id)}
	outcome := cloud.Exists

	img, err := p.GetManagedImage(ctx, rg, c.imageName)
	switch {
	case err == nil:
		if !sameBlob(img.Source, ref) {
			return packer.Artifact{}, "", fmt.Errorf("build %s: managed image %s already exists in resource group %s and was not made by this build: packer 1.6.6 fails the same way (unless run with -force); use another managed_image_name or delete the image",
				c.build, c.imageName, rg)
		}
	case cloud.IsNotFound(err):
		img, err = s.createImage(ctx, ref)
		if err != nil {
			return packer.Artifact{}, "", err
		}
		outcome = cloud.Created
	default:
		return packer.Artifact{}, "", fmt.Errorf("build %s: managed image %s: %w", c.build, c.imageName, err)
	}

	lines := []string{
		packer.AzureARMBuilderID + ":", "",
		"OSType: " + c.osType,
		"ManagedImageResourceGroupName: " + img.ResourceGroup,
		"ManagedImageName: " + img.Name,
		"ManagedImageId: " + img.ID,
		"ManagedImageLocation: " + img.Location,
	}
	if c.sigDest != nil {
		src := cloud.ImageSource{Kind: cloud.SourceManagedImage, ID: img.ID}
		v, err := s.existingVersion(ctx, func(got cloud.ImageSource) bool {
			return got.Kind == src.Kind && strings.EqualFold(got.ID, src.ID)
		})
		if err != nil {
			return packer.Artifact{}, "", err
		}
		if v == nil {
			if v, err = s.createVersion(ctx, img.Location, src); err != nil {
				return packer.Artifact{}, "", err
			}
			outcome = cloud.Created
		}
		lines = append(lines, s.galleryLines(v, img.Location)...)
	}
	art, err := artifact(img.ID, strings.Join(append(lines, ""), "\n"))
	return art, outcome, err
}

// runGallery publishes the build VM straight to the gallery destination,
// with no managed image: the OS disk is staged as a VHD in the gallery's
// resource group (standing for the VM, which Azure reads directly), the
// version made from it and the staged blob deleted.
func (s *simulation) runGallery(ctx context.Context) (packer.Artifact, cloud.Outcome, error) {
	c := s.cfg
	d := c.sigDest
	p := s.destP() // the VM's disk, which the gallery reads, stands in the gallery's subscription
	ref := cloud.BlobRef{Account: StagingAccount(p.SubscriptionID(), d.resourceGroup), Container: captureContainer,
		Name: fmt.Sprintf("Microsoft.Compute/Images/packer/%s-osDisk.%s.vhd", d.image, s.id)}
	v, err := s.existingVersion(ctx, func(got cloud.ImageSource) bool { return sameBlob(got, ref) })
	if err != nil {
		return packer.Artifact{}, "", err
	}
	outcome := cloud.Exists
	if v == nil {
		sa, _, err := ensure.EnsureStorageAccount(ctx, p, cloud.StorageAccount{
			Name: ref.Account, ResourceGroup: d.resourceGroup, Location: s.location,
			Tags: cloud.Tags{"createdBy": "imgflow-localsim", "purpose": "simulated packer OS disks"},
		})
		if err != nil {
			return packer.Artifact{}, "", fmt.Errorf("build %s: staging account for the OS disk: %w", c.build, err)
		}
		ref.Endpoint = endpointOf(sa)
		if _, err := s.ensureOSDisk(ctx, p, ref); err != nil {
			return packer.Artifact{}, "", err
		}
		src := cloud.ImageSource{Kind: cloud.SourceVHD, URI: ref.URL(), StorageAccountID: sa.ID}
		if v, err = s.createVersion(ctx, s.location, src); err != nil {
			return packer.Artifact{}, "", err
		}
		if err := p.DeleteBlob(ctx, ref); err != nil && !cloud.IsNotFound(err) {
			return packer.Artifact{}, "", fmt.Errorf("build %s: delete the staged OS disk %s: %w", c.build, ref.URL(), err)
		}
		outcome = cloud.Created
	}
	// azure plugin 1.4.0 (packer 1.9.5), Artifact.String of a build
	// published straight to the gallery: no managed image and no VHD lines.
	lines := append([]string{packer.AzureARMBuilderID + ":", "", "OSType: " + c.osType}, s.galleryLines(v, s.location)...)
	art, err := artifact(v.ID, strings.Join(append(lines, ""), "\n"))
	return art, outcome, err
}

// galleryLines are the artifact lines of a published version (azure plugin
// 1.4.0): its id, then the destination and the replication regions as
// packer computed them (the build location appended, normalized, when
// replication_regions lacks it).
func (s *simulation) galleryLines(v *cloud.ImageVersion, location string) []string {
	d := s.cfg.sigDest
	return []string{
		"ManagedImageSharedImageGalleryId: " + v.ID,
		"SharedImageGalleryResourceGroup: " + d.resourceGroup,
		"SharedImageGalleryName: " + d.gallery,
		"SharedImageGalleryImageName: " + d.image,
		"SharedImageGalleryImageVersion: " + d.version,
		"SharedImageGalleryReplicatedRegions: " + strings.Join(packerRegions(s.cfg.regions, location), ", "),
	}
}

// packerRegions is the azure plugin's replication list: the configured
// regions as given when they include the build location, else normalized
// with the location appended.
func packerRegions(regions []string, location string) []string {
	loc := normLocation(location)
	normalized := make([]string, len(regions))
	for i, r := range regions {
		normalized[i] = normLocation(r)
		if normalized[i] == loc {
			return regions
		}
	}
	return append(normalized, loc)
}

// createImage stages the OS disk VHD, makes the managed image from it and
// deletes the staged blob (the image keeps its own copy).
func (s *simulation) createImage(ctx context.Context, ref cloud.BlobRef) (*cloud.ManagedImage, error) {
	c := s.cfg
	p := s.p()
	sa, _, err := ensure.EnsureStorageAccount(ctx, p, cloud.StorageAccount{
		Name: ref.Account, ResourceGroup: c.imageResourceGroup, Location: s.location,
		Tags: cloud.Tags{"createdBy": "imgflow-localsim", "purpose": "simulated packer OS disks"},
	})
	if err != nil {
		return nil, fmt.Errorf("build %s: staging account for the OS disk: %w", c.build, err)
	}
	ref.Endpoint = endpointOf(sa)
	if _, err := s.ensureOSDisk(ctx, p, ref); err != nil {
		return nil, err
	}
	gen := s.destGen
	if gen == "" {
		gen = s.sourceGen
	}
	if gen == "" {
		gen = cloud.HyperVGenV1
		if strings.Contains(strings.ToLower(c.sku), "gen2") {
			gen = cloud.HyperVGenV2
		}
	}
	img, err := p.CreateManagedImage(ctx, cloud.ManagedImage{
		Name: c.imageName, ResourceGroup: c.imageResourceGroup, Location: s.location,
		OSType: c.osType, HyperVGeneration: gen,
		Source: cloud.ImageSource{Kind: cloud.SourceVHD, URI: ref.URL(), StorageAccountID: sa.ID},
		Tags:   c.tags,
	})
	if err != nil {
		return nil, fmt.Errorf("build %s: managed image %s: %w", c.build, c.imageName, err)
	}
	if err := p.DeleteBlob(ctx, ref); err != nil && !cloud.IsNotFound(err) {
		return nil, fmt.Errorf("build %s: delete the staged OS disk %s: %w", c.build, ref.URL(), err)
	}
	return img, nil
}

// existingVersion returns the destination version when an earlier run of
// this build made it (madeByThisBuild accepts its source), nil when there
// is none, and an error when another source made it.
func (s *simulation) existingVersion(ctx context.Context, madeByThisBuild func(cloud.ImageSource) bool) (*cloud.ImageVersion, error) {
	d := s.cfg.sigDest
	got, err := s.destP().GetImageVersion(ctx, d.resourceGroup, d.gallery, d.image, d.version)
	switch {
	case err == nil:
		if madeByThisBuild(got.Source) {
			return got, nil
		}
		return nil, fmt.Errorf("build %s: gallery image version %s already exists from another source: bump image_version (Azure refuses to change a version's source)", s.cfg.build, d)
	case cloud.IsNotFound(err):
		return nil, nil
	}
	return nil, fmt.Errorf("build %s: gallery image version %s: %w", s.cfg.build, d, err)
}

// createVersion publishes src to the gallery destination in location and
// waits for its replication, as packer does.
func (s *simulation) createVersion(ctx context.Context, location string, src cloud.ImageSource) (*cloud.ImageVersion, error) {
	d := s.cfg.sigDest
	p := s.destP()
	replicas := s.cfg.replicaCount
	if replicas == 0 {
		replicas = 1
	}
	// packer adds the build location when replication_regions lacks it.
	names := append([]string(nil), s.cfg.regions...)
	found := false
	for _, n := range names {
		found = found || strings.EqualFold(n, location)
	}
	if !found {
		names = append(names, location)
	}
	regions := make([]cloud.TargetRegion, len(names))
	for i, n := range names {
		regions[i] = cloud.TargetRegion{Name: n, ReplicaCount: replicas, StorageAccountType: cloud.StorageStandardLRS}
	}
	want := cloud.ImageVersion{
		Name: d.version, ResourceGroup: d.resourceGroup, Gallery: d.gallery, Definition: d.image,
		Location: location, Source: src,
		TargetRegions: regions, ReplicaCount: replicas, StorageAccountType: cloud.StorageStandardLRS,
		ExcludeFromLatest: s.cfg.excludeFromLatest, EndOfLife: s.cfg.endOfLife, Tags: s.cfg.tags,
	}
	now := time.Now
	if s.b.Now != nil {
		now = s.b.Now
	}
	if err := cloud.ValidateImageVersion(want, now()); err != nil {
		return nil, fmt.Errorf("build %s: shared_image_gallery_destination: %w", s.cfg.build, err)
	}
	v, err := p.CreateImageVersion(ctx, want)
	if err != nil {
		return nil, fmt.Errorf("build %s: gallery image version %s: %w", s.cfg.build, d, err)
	}
	// packer waits for the publishing operation, which ends Failed when a
	// target region fails to replicate.
	if v, err = ensure.WaitReplicated(ctx, p, v, publishTimeout, publishPollInterval, nil); err != nil {
		return nil, fmt.Errorf("build %s: gallery image version %s: %w", s.cfg.build, d, err)
	}
	return v, nil
}

// publishTimeout and publishPollInterval bound the wait for a simulated
// build's gallery version to replicate: packer's own polling of the
// publishing operation.
const (
	publishTimeout      = 6 * time.Hour
	publishPollInterval = 5 * time.Second
)

// ensureOSDisk uploads the build's OS disk VHD to ref unless an earlier run
// did.
func (s *simulation) ensureOSDisk(ctx context.Context, p cloud.Provider, ref cloud.BlobRef) (cloud.Outcome, error) {
	size := s.diskSize()
	existing, err := p.GetBlob(ctx, ref)
	switch {
	case err == nil:
		if existing.Size != size+vhd.FooterSize {
			return "", fmt.Errorf("build %s: %s already exists with %d bytes, not the %d of this build's OS disk: delete it", s.cfg.build, ref.URL(), existing.Size, size+vhd.FooterSize)
		}
		return cloud.Exists, nil
	case !cloud.IsNotFound(err):
		return "", fmt.Errorf("build %s: %s: %w", s.cfg.build, ref.URL(), err)
	}
	if err := p.EnsureContainer(ctx, ref.Account, ref.Container); err != nil {
		return "", fmt.Errorf("build %s: capture container: %w", s.cfg.build, err)
	}
	f, info, err := s.writeVHD(size)
	if err != nil {
		return "", err
	}
	defer func() {
		f.Close()
		os.Remove(f.Name())
	}()
	ranges, err := vhd.DataRanges(f)
	if err != nil {
		return "", fmt.Errorf("build %s: %w", s.cfg.build, err)
	}
	if _, err := p.UploadPageBlob(ctx, ref, cloud.PageSource{Reader: f, Size: info.FileSize, Ranges: ranges}, false); err != nil {
		return "", fmt.Errorf("build %s: upload the OS disk to %s: %w", s.cfg.build, ref.URL(), err)
	}
	return cloud.Created, nil
}

// vhdEpoch stamps the simulated footers, so a build's VHD is the same bytes
// on every run.
var vhdEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// writeVHD creates the sparse fixed VHD of the OS disk in a temporary file,
// with a short marker in its first sector, and returns it open.
func (s *simulation) writeVHD(size int64) (*os.File, *vhd.Info, error) {
	tmp, err := os.CreateTemp(s.b.TempDir, "imgflow-localsim-*.vhd")
	if err != nil {
		return nil, nil, fmt.Errorf("build %s: %w", s.cfg.build, err)
	}
	name := tmp.Name()
	tmp.Close()
	var id [16]byte
	copy(id[:], s.id[:])
	info, err := vhd.CreateFixedWithFooter(name, vhd.NewFooter(size, id, vhdEpoch), true)
	if err != nil {
		os.Remove(name)
		return nil, nil, fmt.Errorf("build %s: %w", s.cfg.build, err)
	}
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err == nil {
		marker := fmt.Sprintf("imgflow local packer build\nbuild: %s\nidentity: %s\n", s.cfg.build, s.id)
		_, err = f.WriteAt([]byte(marker), 0)
	}
	if err == nil && int64(guest.GuestContentOffset+len(s.guest)) <= size {
		_, err = f.WriteAt(s.guest, guest.GuestContentOffset)
	}
	if err != nil {
		if f != nil {
			f.Close()
		}
		os.Remove(name)
		return nil, nil, fmt.Errorf("build %s: write the OS disk: %w", s.cfg.build, err)
	}
	return f, info, nil
}

// StagingAccount names the storage account that holds a managed image
// build's OS disk while the image is made: "pkr" and 16 hex digits of the
// subscription and resource group (a valid, stable account name). The
// build creates it through ARM; behind Azurite, whose accounts are fixed
// when it starts, it must be one of them (cmd/imgflow's tests list it;
// imgflow-emulator needs it in --accounts: see fakearm.Fake.BlobGate).
func StagingAccount(sub, rg string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(sub + "/" + rg)))
	return "pkr" + hex.EncodeToString(sum[:8])
}

// sameBlob reports whether an image was made from the blob at ref
// (whatever the endpoint spelling).
func sameBlob(src cloud.ImageSource, ref cloud.BlobRef) bool {
	if src.Kind != cloud.SourceVHD {
		return false
	}
	got, err := cloud.ParseBlobURL(src.URI)
	return err == nil && got.Account == ref.Account && got.Container == ref.Container && got.Name == ref.Name
}

// endpointOf is the account's blob endpoint when it is not Azure's default.
func endpointOf(sa *cloud.StorageAccount) string {
	if sa.BlobEndpoint == "" || strings.TrimRight(sa.BlobEndpoint, "/") == cloud.DefaultBlobEndpoint(sa.Name) {
		return ""
	}
	return strings.TrimRight(sa.BlobEndpoint, "/")
}

// artifact builds a packer.Artifact the way packer.Runner's parser does.
func artifact(id, str string) (packer.Artifact, error) {
	az, err := packer.ParseAzureARMArtifact(str)
	if err != nil {
		return packer.Artifact{}, errors.New("internal error: " + err.Error())
	}
	return packer.Artifact{Index: 0, BuilderID: packer.AzureARMBuilderID, ID: id, String: str, Azure: az}, nil
}
