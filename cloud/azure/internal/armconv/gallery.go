package armconv

import (
	"sort"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v7"
	"github.com/google/uuid"

	"github.com/imgflow/imgflow/cloud"
)

// GalleryOf reads a gallery model into a cloud.Gallery; rg stands in for
// a missing id. A community gallery's GET answers its publicNames and no
// publicNamePrefix once it is public (GalleryRP 2025-03-03
// CommunityGallery_Get.json): permissions or public names make it one,
// and the prefix is read back from the public name.
func GalleryOf(g *armcompute.Gallery, rg string) cloud.Gallery {
	out := cloud.Gallery{ID: Deref(g.ID), Name: Deref(g.Name), ResourceGroup: rg, Location: FoldLocation(Deref(g.Location)), Tags: TagsOf(g.Tags)}
	if rid, err := cloud.ParseResourceID(out.ID); err == nil {
		out.ResourceGroup = rid.ResourceGroup
	}
	props := g.Properties
	if props == nil {
		return out
	}
	out.Description = Deref(props.Description)
	sp := props.SharingProfile
	if sp == nil || sp.CommunityGalleryInfo == nil || StrOf(sp.Permissions) == string(armcompute.GallerySharingPermissionTypesPrivate) {
		return out
	}
	ci := sp.CommunityGalleryInfo
	out.CommunityEnabled = Deref(ci.CommunityGalleryEnabled)
	for _, n := range ci.PublicNames {
		if n != nil && *n != "" {
			out.PublicNames = append(out.PublicNames, *n)
		}
	}
	community := strings.EqualFold(StrOf(sp.Permissions), string(armcompute.GallerySharingPermissionTypesCommunity))
	prefix := Deref(ci.PublicNamePrefix)
	if prefix == "" && len(out.PublicNames) > 0 {
		prefix = prefixOfPublicName(out.PublicNames[0])
	}
	if community || prefix != "" || len(out.PublicNames) > 0 {
		out.Community = &cloud.CommunityInfo{
			PublicNamePrefix: prefix, PublisherURI: Deref(ci.PublisherURI),
			PublisherContact: Deref(ci.PublisherContact), EULA: Deref(ci.Eula),
		}
	}
	return out
}

// prefixOfPublicName is the prefix a public name was made of: Azure
// appends "-" and a GUID to publicNamePrefix ("" when name has no GUID).
func prefixOfPublicName(name string) string {
	const guidLen = 36
	if len(name) <= guidLen+1 || name[len(name)-guidLen-1] != '-' {
		return ""
	}
	if _, err := uuid.Parse(name[len(name)-guidLen:]); err != nil {
		return ""
	}
	return name[:len(name)-guidLen-1]
}

// CommunityProfile is the sharing profile of a community gallery.
func CommunityProfile(c cloud.CommunityInfo) *armcompute.SharingProfile {
	return &armcompute.SharingProfile{
		Permissions: To(armcompute.GallerySharingPermissionTypesCommunity),
		CommunityGalleryInfo: &armcompute.CommunityGalleryInfo{
			PublicNamePrefix: To(c.PublicNamePrefix),
			PublisherURI:     To(c.PublisherURI),
			PublisherContact: To(c.PublisherContact),
			Eula:             To(c.EULA),
		},
	}
}

// Gallery is a gallery as ARM answers it (a PUT's answer: with the
// community profile's prefix and without public names; see GalleryRead).
func Gallery(g cloud.Gallery) armcompute.Gallery {
	props := &armcompute.GalleryProperties{
		ProvisioningState: To(armcompute.GalleryProvisioningStateSucceeded),
		Description:       Opt[string](g.Description),
		SharingProfile:    &armcompute.SharingProfile{Permissions: To(armcompute.GallerySharingPermissionTypesPrivate)},
	}
	if g.Community != nil {
		props.SharingProfile = CommunityProfile(*g.Community)
	}
	return armcompute.Gallery{
		ID: Opt[string](g.ID), Name: To(g.Name), Location: To(g.Location), Type: To("Microsoft.Compute/galleries"),
		Tags: Tags(g.Tags), Properties: props,
	}
}

// GalleryRead is a gallery as a GET or list answers it: a public
// community gallery shows communityGalleryEnabled and its publicNames but
// no publicNamePrefix (CommunityGallery_Get.json).
func GalleryRead(g cloud.Gallery) armcompute.Gallery {
	out := Gallery(g)
	if ci := out.Properties.SharingProfile.CommunityGalleryInfo; ci != nil {
		ci.CommunityGalleryEnabled = To(g.CommunityEnabled)
		if g.CommunityEnabled {
			ci.PublicNamePrefix = nil
			for _, n := range g.PublicNames {
				ci.PublicNames = append(ci.PublicNames, To(n))
			}
		}
	}
	return out
}

// ImageDefinitionOf reads an image definition model; rg and gallery stand
// in for a missing id.
func ImageDefinitionOf(d *armcompute.GalleryImage, rg, gallery string) cloud.ImageDefinition {
	out := cloud.ImageDefinition{ID: Deref(d.ID), Name: Deref(d.Name), ResourceGroup: rg, Gallery: gallery, Location: FoldLocation(Deref(d.Location)), Tags: TagsOf(d.Tags)}
	if rid, err := cloud.ParseResourceID(out.ID); err == nil && len(rid.Names) == 2 {
		out.ResourceGroup, out.Gallery = rid.ResourceGroup, rid.Names[0]
	}
	props := d.Properties
	if props == nil {
		return out
	}
	if id := props.Identifier; id != nil {
		out.Publisher, out.Offer, out.SKU = Deref(id.Publisher), Deref(id.Offer), Deref(id.SKU)
	}
	out.OSType, out.OSState = StrOf(props.OSType), StrOf(props.OSState)
	out.HyperVGeneration, out.Architecture = StrOf(props.HyperVGeneration), StrOf(props.Architecture)
	out.Description = Deref(props.Description)
	if props.EndOfLifeDate != nil {
		t := props.EndOfLifeDate.UTC()
		out.EndOfLife = &t
	}
	for _, f := range props.Features {
		if f == nil || f.Name == nil {
			continue
		}
		if out.Features == nil {
			out.Features = map[string]string{}
		}
		out.Features[*f.Name] = Deref(f.Value)
	}
	return out
}

// ImageDefinitionProperties are an image definition's properties, its
// features sorted by name.
func ImageDefinitionProperties(d cloud.ImageDefinition) *armcompute.GalleryImageProperties {
	props := &armcompute.GalleryImageProperties{
		Identifier:       &armcompute.GalleryImageIdentifier{Publisher: To(d.Publisher), Offer: To(d.Offer), SKU: To(d.SKU)},
		OSType:           To(armcompute.OperatingSystemTypes(d.OSType)),
		OSState:          To(armcompute.OperatingSystemStateTypes(d.OSState)),
		HyperVGeneration: Opt[armcompute.HyperVGeneration](d.HyperVGeneration),
		Architecture:     Opt[armcompute.Architecture](d.Architecture),
		EndOfLifeDate:    d.EndOfLife,
		Description:      Opt[string](d.Description),
	}
	names := make([]string, 0, len(d.Features))
	for k := range d.Features {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		props.Features = append(props.Features, &armcompute.GalleryImageFeature{Name: To(k), Value: To(d.Features[k])})
	}
	return props
}

// ImageDefinition is an image definition as ARM answers it.
func ImageDefinition(d cloud.ImageDefinition) armcompute.GalleryImage {
	props := ImageDefinitionProperties(d)
	props.ProvisioningState = To(armcompute.GalleryProvisioningStateSucceeded)
	return armcompute.GalleryImage{
		ID: Opt[string](d.ID), Name: To(d.Name), Location: To(d.Location), Type: To("Microsoft.Compute/galleries/images"),
		Tags: Tags(d.Tags), Properties: props,
	}
}
